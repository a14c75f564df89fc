"""Errors raised while capturing a network into Relax."""


class CaptureError(Exception):
    """The network cannot be captured (control flow on tensor values, an unknown op...)."""


class UnsupportedOpError(CaptureError):
    """No lowering rule exists for an op."""


class DTypeMismatchError(CaptureError, TypeError):
    """Operands of an op that needs equal dtypes differ (MindSpore raises TypeError here)."""
