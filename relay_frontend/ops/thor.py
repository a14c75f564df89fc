"""Lowering rule for THOR's damped-covariance inverse (TVM has no legalizable matrix inverse)."""
from __future__ import annotations

import numpy as np
from tvm import relax, tirx
from tvm.script import tirx as T

from ..capture import dtype_of, static_shape, tensor_type
from ..errors import CaptureError
from .common import emit
from .registry import rule

_op = relax.op


def _gauss_jordan_kernel(b: int, n: int, dtype: str) -> tirx.PrimFunc:
    """In-place Gauss-Jordan inversion of a batch (b, n, n) of symmetric positive definite matrices,
    one sequential TIR kernel (the elimination steps depend on each other). No pivoting: the pivots
    of an SPD matrix stay positive."""
    @T.prim_func(private=True)
    def thor_gauss_jordan(a: T.Buffer((b, n, n), dtype), m: T.Buffer((b, n, n), dtype)):
        T.func_attr({"tir.noalias": True})
        row = T.alloc_buffer((n,), dtype)
        col = T.alloc_buffer((n,), dtype)
        for bi, i, j in T.grid(b, n, n):
            m[bi, i, j] = a[bi, i, j]
        for bi in T.serial(b):
            for k in T.serial(n):
                for j in T.serial(n):
                    row[j] = m[bi, k, j] / m[bi, k, k]
                row[k] = T.Cast(dtype, 1.0) / m[bi, k, k]
                for i in T.serial(n):
                    col[i] = m[bi, i, k]
                for i in T.serial(n):
                    if i != k:
                        m[bi, i, k] = T.Cast(dtype, 0.0)
                        for j in T.serial(n):
                            m[bi, i, j] = m[bi, i, j] - col[i] * row[j]
                for j in T.serial(n):
                    m[bi, k, j] = row[j]
    return thor_gauss_jordan


def _gauss_jordan(m: relax.Expr, b: int, n: int, dtype: str) -> relax.Expr:
    builder = relax.BlockBuilder.current()
    kernel = builder.add_func(_gauss_jordan_kernel(b, n, dtype), f"thor_gauss_jordan_{b}x{n}_{dtype}")
    return emit(relax.call_tir(kernel, [m], tensor_type((b, n, n), dtype)))


@rule("thor_inverse")
def thor_inverse(x, split_dim: int = 128):
    """Inverse of a symmetric positive definite (n, n) matrix, block-diagonal beyond ``split_dim``.

    As MindSpore's THOR on GPU, a matrix larger than ``split_dim`` is cut into diagonal blocks of
    ``split_dim`` (the last one padded with the identity) and each block is inverted on its own;
    the result is the block-diagonal matrix of those inverses. The elimination is one sequential TIR
    kernel with no thread bindings: it runs on CPU targets (GPU targets would need a schedule for it).
    """
    shape = static_shape(x)
    dtype = dtype_of(x)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise CaptureError(f"thor_inverse: expected a square matrix, got shape {list(shape)}")
    if not dtype.startswith("float"):
        raise CaptureError(f"thor_inverse: expected a float matrix, got {dtype}")
    n = int(shape[0])
    size = min(n, int(split_dim))
    count = -(-n // size)
    padded = count * size
    if padded != n:
        eye_tail = np.zeros((padded, padded), dtype=dtype)
        eye_tail[n:, n:] = np.eye(padded - n, dtype=dtype)
        x = emit(_op.add(_op.nn.pad(x, [0, padded - n, 0, padded - n]), relax.const(eye_tail)))
    blocks = [emit(_op.strided_slice(x, axes=[0, 1], begin=[i * size, i * size], end=[(i + 1) * size,
                                                                                      (i + 1) * size]))
              for i in range(count)]
    batch = emit(_op.stack(blocks, axis=0)) if count > 1 else emit(_op.expand_dims(blocks[0], 0))
    inverse = _gauss_jordan(batch, count, size, dtype)
    if count == 1:  # n <= split_dim: no padding
        return _op.squeeze(inverse, [0])
    rows = []
    for i in range(count):
        block = emit(_op.squeeze(_op.strided_slice(inverse, axes=[0], begin=[i], end=[i + 1]), [0]))
        rows.append(emit(_op.nn.pad(block, [0, 0, i * size, padded - (i + 1) * size])))
    full = emit(_op.concat(rows, axis=0))
    if padded != n:
        return _op.strided_slice(full, axes=[0, 1], begin=[0, 0], end=[n, n])
    return full
