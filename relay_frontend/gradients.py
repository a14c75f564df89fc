"""Gradient rules for Relax ops that TVM's ``Gradient`` pass does not differentiate."""
from __future__ import annotations

from tvm import relax
from tvm.relax.op.base import null_value, register_gradient

_op = relax.op


def _dtype(expr) -> str:
    return str(expr.ty.dtype)


def _nulls(call, skip: int) -> list:
    """Placeholders for the arguments that take no gradient (attributes passed as arguments)."""
    return [null_value() for _ in call.args[skip:]]


def _register(op_name: str):
    def wrap(fn):
        try:
            register_gradient(op_name, fn)
        except Exception:  # already registered (a newer TVM may ship its own rule)
            pass
        return fn
    return wrap


@_register("relax.rsqrt")
def _rsqrt_grad(orig_var, orig_call, output_grad, ctx):
    # d/dx x^-1/2 = -1/2 * x^-3/2 = -0.5 * y^3
    y = orig_var
    return [_op.multiply(output_grad, _op.multiply(relax.const(-0.5, _dtype(y)), _op.multiply(y, _op.multiply(y, y))))]


@_register("relax.square")
def _square_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    return [_op.multiply(output_grad, _op.multiply(relax.const(2.0, _dtype(x)), x))]


@_register("relax.erf")
def _erf_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    coeff = relax.const(1.1283791670955126, _dtype(x))  # 2 / sqrt(pi)
    return [_op.multiply(output_grad, _op.multiply(coeff, _op.exp(_op.negative(_op.multiply(x, x)))))]


@_register("relax.clip")
def _clip_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    return [_op.where(_op.equal(orig_var, x), output_grad, _op.zeros_like(output_grad))] + _nulls(orig_call, 1)


def _reduce_extreme_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    attrs = orig_call.attrs
    axis = None if attrs.axis is None else [int(a) for a in attrs.axis]
    keep = bool(attrs.keepdims)
    shape = [int(d) for d in x.ty.shape.values]
    y, g = orig_var, output_grad
    if not keep:
        axes = range(len(shape)) if axis is None else [a % len(shape) for a in axis]
        keep_shape = [1 if i in axes else d for i, d in enumerate(shape)]
        y, g = _op.reshape(y, keep_shape), _op.reshape(g, keep_shape)
    hit = _op.astype(_op.equal(x, y), _dtype(x))
    count = _op.sum(hit, axis=axis, keepdims=True)
    return [_op.divide(_op.multiply(hit, g), count)]


_register("relax.max")(_reduce_extreme_grad)
_register("relax.min")(_reduce_extreme_grad)


@_register("relax.floor")
def _floor_grad(orig_var, orig_call, output_grad, ctx):
    # piecewise constant: zero almost everywhere (lgamma's reflection uses x - floor(x))
    return [_op.zeros_like(orig_call.args[0])]
