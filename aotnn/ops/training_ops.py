"""Functional ops for training wrappers."""
from __future__ import annotations

from ._dispatch import apply

__all__ = ["any_non_finite", "guard_updates_since", "updates_recorded"]


def any_non_finite(*tensors):
    """A bool scalar Tensor: True if any element of ``tensors`` is inf or nan."""
    return apply("any_non_finite", *tensors)


def updates_recorded() -> int:
    """How many parameter updates the graph being captured has recorded (0 when running eagerly)."""
    import relay_frontend
    capture = relay_frontend.current()
    return len(capture.param_updates) if capture is not None else 0


def guard_updates_since(since: int, keep_old) -> None:
    """Inside a captured graph, undo (conditionally on the bool scalar ``keep_old``) the parameter
    updates recorded after position ``since``."""
    import relay_frontend
    from ._dispatch import _to_expr
    capture = relay_frontend.current()
    if capture is None:
        raise RuntimeError("guard_updates_since: only inside a compiled graph")
    capture.guard_updates(since, _to_expr(keep_old, capture))
