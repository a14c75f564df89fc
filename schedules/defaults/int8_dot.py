"""The step every int8 dot-product instruction implements, as a TVM tensor-intrinsic description.

``C[i] += sum_k int32(A[k]) * int32(B[i, k])`` for ``lanes`` accumulators and ``depth`` products each,
declared for any alignment (a pixel's channel group sits at any byte offset of a fused kernel's buffers).
VNNI ``vpdpbusd``, AVX2 ``vpmaddwd``, aarch64 ``sdot``/``smull``, Cortex-M ``smlad`` and Helium ``vmlava``
each pair this description with their own implementation.
"""
from __future__ import annotations

from tvm.script import tirx as T


def dot_desc(act_dtype: str, weight_dtype: str, lanes: int, depth: int):
    """The description of ``lanes`` int32 accumulators each adding ``depth`` products of ``act_dtype``
    activations (one vector, shared) by ``weight_dtype`` weights (a ``(lanes, depth)`` tile)."""

    @T.prim_func(s_tir=True)
    def desc(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (depth,), act_dtype, offset_factor=1, align=1)
        B = T.match_buffer(b, (lanes, depth), weight_dtype, offset_factor=1, align=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1, align=1)
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:depth], B[0:lanes, 0:depth])
            T.writes(C[0:lanes])
            for i in T.serial(0, lanes):
                for k in T.serial(0, depth):
                    with T.sblock("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.cast(A[vk], "int32") * T.cast(B[vi, vk], "int32")

    return desc
