"""Math layers: logsumexp, ranges, special functions, moments, matrix products, diagonals, det and inverse."""
from __future__ import annotations

__all__ = ['ReduceLogSumExp', 'Range', 'LGamma', 'DiGamma', 'IGamma', 'LBeta', 'MatMul', 'Moments',
           'MatInverse', 'MatDet', 'MatrixDiag', 'MatrixDiagPart', 'MatrixSetDiag']

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..cell import Cell

_HALF_OR_SINGLE = (mstype.float16, mstype.float32)
_DIAG_TYPES = (mstype.float32, mstype.float16, mstype.int32, mstype.int8, mstype.uint8)


def _check_dtype(x, name: str, allowed, cls: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{cls}: {name} must be a Tensor, got {type(x).__name__}")
    if x.dtype not in allowed:
        raise TypeError(f"{cls}: {name} must have dtype in {[str(d) for d in allowed]}, got {x.dtype}")


def _check_same_dtype(x, y, cls: str) -> None:
    if x.dtype != y.dtype:
        raise TypeError(f"{cls}: inputs must have one dtype, got {x.dtype} and {y.dtype}")


def _check_pair(x, y, names: tuple[str, str], allowed, cls: str) -> None:
    """Two Tensors of ``allowed`` dtypes, and of one dtype."""
    _check_dtype(x, names[0], allowed, cls)
    _check_dtype(y, names[1], allowed, cls)
    _check_same_dtype(x, y, cls)


def _check_axis(axis, cls: str, allow_list: bool = True) -> int | tuple:
    kinds = (int, tuple, list) if allow_list else (int, tuple)
    if isinstance(axis, bool) or not isinstance(axis, kinds):
        raise TypeError(f"{cls}: axis must be an int or a tuple of ints, got {type(axis).__name__}")
    if isinstance(axis, (tuple, list)):
        for item in axis:
            if isinstance(item, bool) or not isinstance(item, int):
                raise TypeError(f"{cls}: axis elements must be ints, got {type(item).__name__}")
        return tuple(axis)
    return axis


class ReduceLogSumExp(Cell):
    r"""log(sum(exp(x))) over ``axis``: :math:`\log\sum e^{x}`, computed stably.

    Args:
        axis (Union[int, tuple(int), list(int)]): axes to reduce; () reduces all.
        keep_dims (bool): keep reduced axes with length 1. Default: False.

    Inputs:
        - **x** (Tensor) - float16 or float32.
    Outputs:
        Tensor of x's dtype.
    Raises:
        TypeError: axis not an int/tuple/list; keep_dims not a bool; x not float16/float32.
    """

    def __init__(self, axis, keep_dims=False):
        super().__init__()
        self.axis = _check_axis(axis, "ReduceLogSumExp")
        if not isinstance(keep_dims, bool):
            raise TypeError(f"ReduceLogSumExp: keep_dims must be a bool, got {type(keep_dims).__name__}")
        self.keep_dims = keep_dims

    def construct(self, x):
        _check_dtype(x, "x", _HALF_OR_SINGLE, "ReduceLogSumExp")
        return ops.logsumexp(x, self.axis, self.keep_dims)


class Range(Cell):
    """The sequence ``start, start + delta, ...`` below ``limit``, as a constant Tensor.

    Args:
        start (Union[int, float]): first value; with ``limit=None`` it is the limit and the range starts at 0.
        limit (Union[int, float]): exclusive bound. Default: None.
        delta (Union[int, float]): step, not 0. Default: 1.

    Outputs:
        Tensor, int32 when start, limit and delta are ints, else float32.
    Raises:
        TypeError: an argument that is not an int or a float.
        ValueError: delta is 0, limit equals start, or the range is empty.
    """

    def __init__(self, start, limit=None, delta=1):
        super().__init__()
        for name, value in (("start", start), ("limit", limit), ("delta", delta)):
            if value is None and name == "limit":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"Range: {name} must be an int or a float, got {type(value).__name__}")
        if delta == 0:
            raise ValueError("Range: delta must not be 0")
        if limit is None:
            start, limit = 0, start
        if limit == start:
            raise ValueError(f"Range: limit must differ from start, got {limit}")
        if (limit - start) * delta < 0:
            raise ValueError(f"Range: [{start}, {limit}) with delta {delta} is empty")
        self.start, self.limit, self.delta = start, limit, delta
        all_int = all(isinstance(v, int) for v in (start, limit, delta))
        self.dtype = mstype.int32 if all_int else mstype.float32

    def construct(self):
        return ops.range(self.start, self.limit, self.delta, self.dtype)


class _Unary(Cell):
    _fn = None

    def construct(self, x):
        _check_dtype(x, "x", _HALF_OR_SINGLE, type(self).__name__)
        return type(self)._fn(x)


class LGamma(_Unary):
    """log|Gamma(x)| element-wise, by Lanczos' approximation (Euler's reflection below 0.5).

    +inf at non-positive integers and at +-inf.

    Inputs:
        - **x** (Tensor) - float16 or float32.
    Outputs:
        Tensor of x's shape and dtype.
    Raises:
        TypeError: x not float16/float32.
    """
    _fn = staticmethod(ops.lgamma)


class DiGamma(_Unary):
    """The digamma function d/dx log Gamma(x), from Lanczos' approximation (reflection below 0.5).

    nan at negative integers, -inf at 0.

    Inputs:
        - **x** (Tensor) - float16 or float32.
    Outputs:
        Tensor of x's shape and dtype.
    Raises:
        TypeError: x not float16/float32.
    """
    _fn = staticmethod(ops.digamma)


class IGamma(Cell):
    r"""Lower regularized incomplete gamma :math:`P(a, x) = \frac{1}{\Gamma(a)}\int_0^x t^{a-1} e^{-t} dt`.

    nan where a < 0 or x < 0; 0 at x = 0. Accurate to float32 rounding for a up to a few hundred.

    Inputs:
        - **a** (Tensor) - float16 or float32.
        - **x** (Tensor) - of a's dtype; broadcast with a.
    Outputs:
        Tensor of the broadcast shape, a's dtype.
    Raises:
        TypeError: a or x not float16/float32, or of different dtypes.
    """

    def construct(self, a, x):
        _check_pair(a, x, ("a", "x"), _HALF_OR_SINGLE, "IGamma")
        return ops.igamma(a, x)


class LBeta(Cell):
    r"""log|Beta(x, y)| = lgamma(x) + lgamma(y) - lgamma(x + y).

    For arguments of 8 or more, lgamma is split into Stirling's approximation and a minimax correction
    and the large Stirling terms cancel analytically, avoiding catastrophic cancellation.

    Inputs:
        - **x** (Tensor) - float16 or float32.
        - **y** (Tensor) - of x's dtype; broadcast with x.
    Outputs:
        Tensor of the broadcast shape, x's dtype.
    Raises:
        TypeError: x or y not float16/float32, or of different dtypes.
    """

    def construct(self, x, y):
        _check_pair(x, y, ("x", "y"), _HALF_OR_SINGLE, "LBeta")
        return ops.lbeta(x, y)


class MatMul(Cell):
    """Matrix product of x1 and x2 with optional transposes and broadcast batch dimensions.

    1-D operands act as a row (x1) or a column (x2) vector that is removed from the result; two 1-D
    operands give their dot product.

    Args:
        transpose_x1 (bool): transpose the last two axes of x1. Default: False.
        transpose_x2 (bool): transpose the last two axes of x2. Default: False.

    Inputs:
        - **x1** (Tensor) - (*B, N, C) (or (*B, C, N) transposed).
        - **x2** (Tensor) - (*B, C, M) (or (*B, M, C) transposed), of x1's dtype.
    Outputs:
        Tensor (*B, N, M) with broadcast batch dimensions.
    Raises:
        TypeError: transpose flags not bools; operands of different dtypes.
        ValueError: x1's columns differ from x2's rows; batch dimensions that do not broadcast.
    """

    def __init__(self, transpose_x1=False, transpose_x2=False):
        super().__init__()
        for name, flag in (("transpose_x1", transpose_x1), ("transpose_x2", transpose_x2)):
            if not isinstance(flag, bool):
                raise TypeError(f"MatMul: {name} must be a bool, got {type(flag).__name__}")
        self.transpose_x1, self.transpose_x2 = transpose_x1, transpose_x2

    def construct(self, x1, x2):
        for name, x in (("x1", x1), ("x2", x2)):
            if not isinstance(x, Tensor) or x.ndim < 1:
                raise ValueError(f"MatMul: {name} must be a Tensor with at least 1 dimension")
        _check_same_dtype(x1, x2, "MatMul")
        if x1.ndim == 1 and x2.ndim == 1:
            if x1.shape != x2.shape:
                raise ValueError(f"MatMul: vectors of different lengths {x1.shape[0]} and {x2.shape[0]}")
            return ops.reduce_sum(x1 * x2, -1)
        t1 = self.transpose_x1 and x1.ndim > 1
        t2 = self.transpose_x2 and x2.ndim > 1
        a = ops.expand_dims(x1, 0) if x1.ndim == 1 else x1
        b = ops.expand_dims(x2, 1) if x2.ndim == 1 else x2
        cols = a.shape[-2] if t1 else a.shape[-1]
        rows = b.shape[-1] if t2 else b.shape[-2]
        if cols != rows:
            raise ValueError(f"MatMul: x1's columns ({cols}) must equal x2's rows ({rows}), got shapes "
                             f"{x1.shape} and {x2.shape}")
        try:
            batch = _broadcast(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(f"MatMul: batch dimensions of {x1.shape} and {x2.shape} do not broadcast") from None
        if a.shape[:-2] != batch:
            a = ops.broadcast_to(a, batch + a.shape[-2:])
        if b.shape[:-2] != batch:
            b = ops.broadcast_to(b, batch + b.shape[-2:])
        out = ops.batch_matmul(a, b, t1, t2)
        if x1.ndim == 1:
            out = ops.squeeze(out, -2)
        if x2.ndim == 1:
            out = ops.squeeze(out, -1)
        return out

    def extend_repr(self) -> str:
        return f"transpose_x1={self.transpose_x1}, transpose_x2={self.transpose_x2}"


def _broadcast(a: tuple, b: tuple) -> tuple:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and 1 not in (da, db):
            raise ValueError(f"{a} and {b} do not broadcast")
        out.append(max(da, db) if 1 in (da, db) else da)
    return tuple(reversed(out))


class Moments(Cell):
    """Mean and (biased) variance of x along ``axis``.

    Args:
        axis (Union[int, tuple(int), None]): axes to reduce; None reduces all. Default: None.
        keep_dims (Union[bool, None]): keep reduced axes with length 1; None means False. Default: None.

    Inputs:
        - **x** (Tensor) - float16 or float32 (float16 is computed in float32).
    Outputs:
        (mean, variance), Tensors of x's dtype.
    Raises:
        TypeError: axis not an int/tuple/None; keep_dims not a bool/None; x not float16/float32.
    """

    def __init__(self, axis=None, keep_dims=None):
        super().__init__()
        self.axis = () if axis is None else _check_axis(axis, "Moments", allow_list=False)
        if keep_dims is not None and not isinstance(keep_dims, bool):
            raise TypeError(f"Moments: keep_dims must be a bool or None, got {type(keep_dims).__name__}")
        self.keep_dims = bool(keep_dims)

    def construct(self, x):
        _check_dtype(x, "x", _HALF_OR_SINGLE, "Moments")
        data = ops.cast(x, mstype.float32) if x.dtype == mstype.float16 else x
        axis = self.axis if self.axis != () else None
        mean = ops.mean(data, axis, True)
        diff = data - mean
        variance = ops.mean(diff * diff, axis, self.keep_dims)
        if not self.keep_dims:
            mean = ops.reshape(mean, variance.shape)
        if x.dtype == mstype.float16:
            mean, variance = ops.cast(mean, mstype.float16), ops.cast(variance, mstype.float16)
        return mean, variance


class _SquareMatrices(Cell):
    _fn = None

    def construct(self, x):
        name = type(self).__name__
        _check_dtype(x, "x", _HALF_OR_SINGLE, name)
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(f"{name}: x must be (..., N, N) square matrices, got shape {x.shape}")
        return type(self)._fn(x)


class MatInverse(_SquareMatrices):
    """Inverse of each square matrix (Gauss-Jordan elimination with partial pivoting).

    MindSpore documents this for positive-definite Hermitian matrices; any invertible matrix works here.

    Inputs:
        - **x** (Tensor) - (..., N, N), float16 or float32.
    Outputs:
        Tensor of x's shape and dtype.
    Raises:
        TypeError: x not float16/float32.
        ValueError: x not made of square matrices.
    """
    _fn = staticmethod(ops.inverse)


class MatDet(_SquareMatrices):
    """Determinant of each square matrix (product of the pivots of Gauss-Jordan elimination).

    Inputs:
        - **x** (Tensor) - (..., N, N), float16 or float32.
    Outputs:
        Tensor (...) of x's dtype.
    Raises:
        TypeError: x not float16/float32.
        ValueError: x not made of square matrices.
    """
    _fn = staticmethod(ops.det)


class MatrixDiag(Cell):
    """A batch of diagonal matrices: (..., N) -> (..., N, N) with ``x`` on the diagonal.

    Inputs:
        - **x** (Tensor) - float32, float16, int32, int8 or uint8.
    Outputs:
        Tensor x.shape + (x.shape[-1],), x's dtype.
    Raises:
        TypeError: x of another dtype.
    """

    def construct(self, x):
        _check_dtype(x, "x", _DIAG_TYPES, "MatrixDiag")
        if x.ndim < 1:
            raise ValueError("MatrixDiag: x must have at least 1 dimension")
        return ops.matrix_diag(x)


class MatrixDiagPart(Cell):
    """The main diagonals of a batch of matrices: (..., M, N) -> (..., min(M, N)).

    Inputs:
        - **x** (Tensor) - float32, float16, int32, int8 or uint8, at least 2-D.
    Outputs:
        Tensor of x's dtype.
    Raises:
        TypeError: x of another dtype.
        ValueError: x below 2-D.
    """

    def construct(self, x):
        _check_dtype(x, "x", _DIAG_TYPES, "MatrixDiagPart")
        if x.ndim < 2:
            raise ValueError(f"MatrixDiagPart: x must be at least 2-D, got shape {x.shape}")
        return ops.matrix_diag_part(x)


class MatrixSetDiag(Cell):
    """A batch of matrices with their main diagonals replaced.

    Inputs:
        - **x** (Tensor) - (..., M, N), float32, float16, int32, int8 or uint8.
        - **diagonal** (Tensor) - (..., min(M, N)), of x's dtype.
    Outputs:
        Tensor of x's shape and dtype.
    Raises:
        TypeError: x or diagonal of another dtype.
        ValueError: x below 2-D, or diagonal of the wrong shape.
    """

    def construct(self, x, diagonal):
        _check_pair(x, diagonal, ("x", "diagonal"), _DIAG_TYPES, "MatrixSetDiag")
        if x.ndim < 2:
            raise ValueError(f"MatrixSetDiag: x must be at least 2-D, got shape {x.shape}")
        expected = x.shape[:-2] + (min(x.shape[-2:]),)
        if diagonal.shape != expected:
            raise ValueError(f"MatrixSetDiag: diagonal must have shape {expected} for x of {x.shape}, "
                             f"got {diagonal.shape}")
        return ops.matrix_set_diag(x, diagonal)

