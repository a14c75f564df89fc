"""Lowering rules for normalisation and softmax.

The normalisations are composed from ``mean``/``subtract``/``multiply``/``sqrt``/``divide`` (ops
that ``relax.transform.Gradient`` differentiates; ``rsqrt`` and ``nn.batch_norm`` it does not).
Float16 inputs are normalised in float32 and the result is cast back: statistics of many float16
values lose too much precision otherwise.
"""
from __future__ import annotations

from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import cast, emit, normalize_axis
from .registry import rule

_op = relax.op


def _compute_dtype(x: relax.Expr) -> str:
    return "float32" if dtype_of(x) == "float16" else dtype_of(x)


def _view(v: relax.Expr, rank: int, axis: int) -> relax.Expr:
    """``v`` (one value per channel) reshaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return emit(_op.reshape(v, shape))


def _inv_std(variance: relax.Expr, epsilon: float) -> relax.Expr:
    one = relax.const(1.0, dtype_of(variance))
    return emit(_op.divide(one, _op.sqrt(_op.add(variance, relax.const(epsilon, dtype_of(variance))))))


def _moments(x: relax.Expr, axes: list[int], keepdims: bool) -> tuple[relax.Expr, relax.Expr, relax.Expr]:
    """(mean, biased variance, x - mean) over ``axes``."""
    mean = emit(_op.mean(x, axis=axes, keepdims=True))
    centered = emit(_op.subtract(x, mean))
    variance = emit(_op.mean(_op.multiply(centered, centered), axis=axes, keepdims=keepdims))
    if not keepdims:  # reshape, not squeeze: TVM's Gradient pass differentiates reshape only
        mean = emit(_op.reshape(mean, [d for a, d in enumerate(static_shape(x)) if a not in axes]))
    return mean, variance, centered


def _count(shape: tuple[int, ...], axes: list[int]) -> int:
    count = 1
    for a in axes:
        count *= shape[a]
    return count


@rule("batch_norm")
def batch_norm(x, gamma, beta, mean, variance, epsilon=1e-5, training=False, axis=1):
    """Batch normalisation over every axis but ``axis``.

    Inference normalises with the given ``mean``/``variance``. Training normalises with the
    batch's biased variance and returns ``(y, batch_mean, batch_unbiased_variance)`` (statistics in
    ``mean``'s dtype) so that the layer can update its moving statistics as MindSpore does.
    """
    shape, out_dtype, stat_dtype = static_shape(x), dtype_of(x), dtype_of(mean)
    rank = len(shape)
    axis = normalize_axis(axis, rank)
    reduce_axes = [a for a in range(rank) if a != axis]
    dtype = _compute_dtype(x)
    x = cast(x, dtype)
    gamma, beta, mean, variance = (cast(v, dtype) for v in (gamma, beta, mean, variance))
    if training:
        mean, variance, _ = _moments(x, reduce_axes, keepdims=False)
    scale = emit(_op.multiply(gamma, _inv_std(variance, epsilon)))
    shift = emit(_op.subtract(beta, _op.multiply(mean, scale)))
    y = cast(emit(_op.add(_op.multiply(x, _view(scale, rank, axis)), _view(shift, rank, axis))), out_dtype)
    if not training:
        return y
    count = _count(shape, reduce_axes)
    unbiased = emit(_op.multiply(variance, relax.const(count / max(count - 1, 1), dtype)))
    return relax.Tuple([y, cast(mean, stat_dtype), cast(unbiased, stat_dtype)])


@rule("layer_norm")
def layer_norm(x, gamma, beta, begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-7):
    """Normalises over axes ``begin_norm_axis..`` and applies ``gamma``/``beta`` of shape
    ``x.shape[begin_params_axis:]``. Returns ``(y, mean, variance)`` as MindSpore's ``LayerNorm``
    primitive (statistics keep the normalised axes as 1s, variance is biased)."""
    shape, out_dtype = static_shape(x), dtype_of(x)
    rank = len(shape)
    norm_axis = normalize_axis(begin_norm_axis, rank, "begin_norm_axis")
    params_axis = normalize_axis(begin_params_axis, rank, "begin_params_axis")
    for name, value in (("gamma", gamma), ("beta", beta)):
        if static_shape(value) != shape[params_axis:]:
            raise CaptureError(f"layer_norm: {name} must have shape {shape[params_axis:]} "
                               f"(x.shape[begin_params_axis:]), got {static_shape(value)}")
    dtype = _compute_dtype(x)
    x, gamma, beta = cast(x, dtype), cast(gamma, dtype), cast(beta, dtype)
    mean, variance, centered = _moments(x, list(range(norm_axis, rank)), keepdims=True)
    normalized = emit(_op.multiply(centered, _inv_std(variance, epsilon)))
    y = cast(emit(_op.add(_op.multiply(normalized, gamma), beta)), out_dtype)
    return relax.Tuple([y, cast(mean, out_dtype), cast(variance, out_dtype)])


@rule("group_norm")
def group_norm(x, gamma, beta, num_groups: int, epsilon=1e-5):
    """Normalises each of ``num_groups`` channel groups of an (N, C, ...) input over its channels and
    spatial positions, then scales and shifts per channel."""
    shape, out_dtype = static_shape(x), dtype_of(x)
    if len(shape) < 2 or shape[1] % num_groups:
        raise CaptureError(f"group_norm: expected (N, C, ...) with C divisible by num_groups={num_groups}, "
                           f"got shape {shape}")
    dtype = _compute_dtype(x)
    x, gamma, beta = cast(x, dtype), cast(gamma, dtype), cast(beta, dtype)
    grouped = emit(_op.reshape(x, [shape[0], num_groups, -1]))
    _, variance, centered = _moments(grouped, [2], keepdims=True)
    normalized = emit(_op.reshape(_op.multiply(centered, _inv_std(variance, epsilon)), list(shape)))
    y = _op.add(_op.multiply(normalized, _view(gamma, len(shape), 1)), _view(beta, len(shape), 1))
    return cast(emit(y), out_dtype)


@rule("instance_norm")
def instance_norm(x, gamma, beta, epsilon=1e-5):
    """Normalises each (sample, channel) of an (N, C, ...) input over its spatial positions, then
    scales and shifts per channel. Returns ``(y, mean, unbiased_variance)``, the statistics
    averaged over the batch (one per channel), for the layer's moving statistics."""
    shape, out_dtype = static_shape(x), dtype_of(x)
    rank = len(shape)
    if rank < 3:
        raise CaptureError(f"instance_norm: expected an (N, C, ...) input with spatial axes, got shape {shape}")
    dtype = _compute_dtype(x)
    x, gamma, beta = cast(x, dtype), cast(gamma, dtype), cast(beta, dtype)
    spatial = list(range(2, rank))
    mean, variance, centered = _moments(x, spatial, keepdims=True)
    normalized = emit(_op.multiply(centered, _inv_std(variance, epsilon)))
    y = cast(emit(_op.add(_op.multiply(normalized, _view(gamma, rank, 1)), _view(beta, rank, 1))), out_dtype)
    count = _count(shape, spatial)
    per_channel = [shape[0], shape[1]]
    batch_mean = emit(_op.mean(_op.reshape(mean, per_channel), axis=0))
    unbiased = emit(_op.multiply(_op.reshape(variance, per_channel), relax.const(count / max(count - 1, 1), dtype)))
    return relax.Tuple([y, batch_mean, emit(_op.mean(unbiased, axis=0))])


def softmax_on_last_axis(fn, x: relax.Expr, axis: int, rank: int, emit_fn=emit) -> relax.Expr:
    """``fn`` (softmax or log-softmax) along ``axis`` (in ``[0, rank)``) of ``x``, computed on the last axis.

    Along an inner axis TVM's kernel re-reduces per output element (seconds for a 1536x200 map);
    the rows rule is fast on the last axis, so the axis is moved there and back.
    """
    if axis == rank - 1:
        return emit_fn(fn(x, axis=axis))
    order = [a for a in range(rank) if a != axis] + [axis]
    back = [order.index(a) for a in range(rank)]
    y = emit_fn(fn(emit_fn(_op.permute_dims(x, order)), axis=rank - 1))
    return emit_fn(_op.permute_dims(y, back))


def _softmax_family(fn, x, axis: int) -> relax.Expr:
    """``fn`` along ``axis``; float16 computed in float32 (TVM's float16 exp/sum drift by an ulp or two)."""
    out_dtype = dtype_of(x)
    rank = len(static_shape(x))
    return cast(softmax_on_last_axis(fn, cast(x, _compute_dtype(x)), normalize_axis(axis, rank), rank), out_dtype)


@rule("softmax")
def softmax(x, axis=-1):
    return _softmax_family(_op.nn.softmax, x, axis)


@rule("log_softmax")
def log_softmax(x, axis=-1):
    return _softmax_family(_op.nn.log_softmax, x, axis)
