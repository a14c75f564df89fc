"""Lowering rules used by losses: drawing candidate classes for sampled softmax."""
from __future__ import annotations

from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .registry import rule


@rule("uniform_candidates")
def uniform_candidates(noise, num_sampled: int):
    """Indices (int32) of the ``num_sampled`` largest entries of the 1-D ``noise``.

    With ``noise`` drawn from U[0, 1) this is a uniform sample of distinct classes (the prefix of a
    random permutation); entries pushed below 0 are picked only when nothing else is left.
    """
    shape = static_shape(noise)
    if len(shape) != 1:
        raise CaptureError(f"uniform_candidates: noise must be 1-D, got shape {shape}")
    if not 0 < int(num_sampled) <= shape[0]:
        raise CaptureError(f"uniform_candidates: num_sampled must be in [1, {shape[0]}], got {num_sampled}")
    if dtype_of(noise) not in ("float32", "float64"):
        raise CaptureError(f"uniform_candidates: noise must be float32 or float64, got {dtype_of(noise)}")
    return relax.op.topk(noise, int(num_sampled), axis=0, ret_type="indices", largest=True, dtype="int32")
