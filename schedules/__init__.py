"""schedules: targets, the fusing pipeline, kernel schedules, artifact building and caching."""
from . import target
from .build import build
from .embedded import build_bundle
from .cache import artifact_path, cache_dir, content_key
from .target import TargetError, resolve

__all__ = ["build", "build_bundle", "artifact_path", "cache_dir", "content_key", "resolve", "TargetError"]
