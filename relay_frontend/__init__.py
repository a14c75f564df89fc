"""relay_frontend: captures Cell.construct into a TVM Relax IRModule, one lowering rule per op."""
from . import ops
from .capture import Capture, current, dtype_of, static_shape, tensor_type
from .errors import CaptureError, DTypeMismatchError, UnsupportedOpError

__all__ = ["Capture", "current", "dtype_of", "static_shape", "tensor_type", "ops",
           "CaptureError", "DTypeMismatchError", "UnsupportedOpError"]
