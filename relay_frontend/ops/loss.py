"""Lowering rules used by losses: drawing distinct candidate classes for sampled softmax."""
from __future__ import annotations

from tvm import relax, te
from tvm.script.ir_builder import IRBuilder
from tvm.script.ir_builder import tirx as T

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .registry import rule

# Written over a chosen entry so that it is never chosen again (below anything the caller passes).
_TAKEN = -1e30


def _top_indices(noise: te.Tensor, count: int) -> te.Tensor:
    """Indices of the ``count`` largest entries of 1-D ``noise``, largest first (count passes of argmax).

    A plain loop kernel rather than ``topi.topk``, whose CPU version calls a packed function
    (``tvm.contrib.sort.topk``) that the small runtime does not have. O(count * len) work.
    """
    length = int(noise.shape[0])

    def body(noise_buf, out_buf, scratch_buf):
        with IRBuilder() as builder:
            src, out, scratch = T.buffer_proxy(noise_buf), T.buffer_proxy(out_buf), T.buffer_proxy(scratch_buf)
            with T.serial(0, 1):  # local scalars must be allocated inside a frame
                best_index = T.buffer_proxy(T.alloc_buffer((1,), "int32", scope="local"))
                best_value = T.buffer_proxy(T.alloc_buffer((1,), noise.dtype, scope="local"))
                with T.serial(0, length) as i:
                    scratch[i] = src[i]
                with T.serial(0, count) as k:
                    best_index[0] = T.int32(0)
                    best_value[0] = scratch[0]
                    with T.serial(0, length) as i:
                        with T.If(scratch[i] > best_value[0]):
                            with T.Then():
                                best_index[0] = T.Cast("int32", i)
                                best_value[0] = scratch[i]
                    out[k] = best_index[0]
                    scratch[best_index[0]] = T.Cast(noise.dtype, T.float32(_TAKEN))
        return builder.get()

    return te.extern([(count,), (length,)], [noise], lambda ins, outs: body(ins[0], outs[0], outs[1]),
                     dtype=["int32", noise.dtype], name="uniform_candidates")


@rule("uniform_candidates")
def uniform_candidates(noise, num_sampled: int):
    """Indices (int32) of the ``num_sampled`` largest entries of the 1-D ``noise``, largest first.

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
    both = relax.BlockBuilder.current().call_te(_top_indices, noise, int(num_sampled),
                                                primfunc_name_hint="uniform_candidates")
    return relax.TupleGetItem(both, 0)
