"""schedules: targets, the fusing pipeline, kernel schedules, artifact building and caching."""
from . import target
from .build import build
from .embedded import build_bundle
from .cache import artifact_path, cache_dir, content_key
from .target import TargetError, resolve

__all__ = ["build", "build_bundle", "artifact_path", "cache_dir", "content_key", "resolve", "TargetError", "tune"]


def __getattr__(name: str):
    if name == "tune":  # MetaSchedule loads only when tuning
        from .tuning import tune
        return tune
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
