"""aotnn_runtime: runs artifacts compiled by aotnn with numpy and apache-tvm-ffi only."""
from .buffers import aligned_empty, as_aligned
from .errors import ArtifactError, DeviceUnavailableError, InputError
from .module import EntryPoint, Module, load

__all__ = ["Module", "EntryPoint", "load", "ArtifactError", "DeviceUnavailableError", "InputError", "aligned_empty", "as_aligned"]
__version__ = "0.1.0"
