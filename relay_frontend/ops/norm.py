"""Lowering rules for normalisation and softmax."""
from __future__ import annotations

from tvm import relax

from ..capture import static_shape
from .common import emit, normalize_axis
from .registry import rule

_op = relax.op


def _channel_view(v, rank: int, axis: int):
    shape = [1] * rank
    shape[axis] = -1
    return _op.reshape(v, shape)


@rule("batch_norm")
def batch_norm(x, gamma, beta, mean, variance, epsilon=1e-5, training=False, axis=1):
    """Batch normalisation over every axis but ``axis``.

    Inference normalises with the given ``mean``/``variance``. Training normalises with the
    batch's biased variance and returns ``(y, batch_mean, batch_unbiased_variance)`` so that the
    layer can update its moving statistics as MindSpore does.
    """
    rank = len(static_shape(x))
    axis = normalize_axis(axis, rank)
    reduce_axes = [a for a in range(rank) if a != axis]
    if training:
        count = 1
        for a in reduce_axes:
            count *= static_shape(x)[a]
        mean = emit(_op.mean(x, axis=reduce_axes))
        centered = emit(_op.subtract(x, _channel_view(mean, rank, axis)))
        variance = emit(_op.mean(_op.multiply(centered, centered), axis=reduce_axes))
    scale = emit(_op.multiply(gamma, _op.rsqrt(_op.add(variance, relax.const(epsilon, str(x.ty.dtype))))))
    shift = emit(_op.subtract(beta, _op.multiply(mean, scale)))
    y = _op.add(_op.multiply(x, _channel_view(scale, rank, axis)), _channel_view(shift, rank, axis))
    if not training:
        return y
    unbiased = _op.multiply(variance, relax.const(count / max(count - 1, 1), str(x.ty.dtype)))
    return relax.Tuple([y, mean, unbiased])


@rule("softmax")
def softmax(x, axis=-1):
    return _op.nn.softmax(x, axis=normalize_axis(axis, len(static_shape(x))))


@rule("log_softmax")
def log_softmax(x, axis=-1):
    return _op.nn.log_softmax(x, axis=normalize_axis(axis, len(static_shape(x))))
