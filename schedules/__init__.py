"""schedules: targets, the fusing pipeline, kernel schedules, artifact building and caching."""
from .build import build
from .cache import artifact_path, cache_dir, content_key
from .target import TargetError, resolve

__all__ = ["build", "artifact_path", "cache_dir", "content_key", "resolve", "TargetError"]
