"""Element-wise chains between 1-D convolutions computed in the convolution's 4-D form.

A 1-D convolution is captured as a 2-D one over a unit axis: ``reshape`` to ``(N, C, 1, L)``,
``conv2d``, ``reshape`` back to ``(N, C, L)``. Its bias, batch norm and activation then run on the
3-D tensor and the next layer reshapes to 4-D again. The 3-D stretch hides the chain from the
convolution rules: the batch norm does not fold (``batchnorm_fold.py``) and each layer's output
leaves the channels-last layout (a transpose per layer).

This rewrite, run before them, computes element-wise operations on such a 3-D tensor in the 4-D
form it was reshaped from (their broadcast operands get the same unit axis), reductions of them
over the 4-D form, and turns a reshape back to that 4-D shape into the 4-D value itself. The 3-D values stay available for any other
use; dead-code elimination drops those left unused.
"""
from __future__ import annotations

from tvm import relax

from .layout import BINARY, REDUCE, UNARY, Rewriter, static_shape

_LIFTED = "unit_axis_lifted"  # Rewriter.memo key: old 3-D var -> (new 4-D expr, position of the unit axis)


def _unit_axis(four: tuple[int, ...], three: tuple[int, ...]) -> int | None:
    """The position of the unit axis of ``four`` whose removal gives ``three``, if there is one."""
    for axis, extent in enumerate(four):
        if extent == 1 and four[:axis] + four[axis + 1:] == three:
            return axis
    return None


def _lifted(rw: Rewriter, expr: relax.Expr) -> tuple[relax.Expr, int] | None:
    """(the 4-D form, the unit axis' position) of the old 3-D ``expr`` (through aliases), if lifted."""
    lifted = rw.memo.get(_LIFTED, {})
    while isinstance(expr, relax.Var):
        if expr in lifted:
            return lifted[expr]
        expr = rw.value_of(expr)  # an alias binds a variable to a variable
    return None


def _with_unit_axis(rw: Rewriter, operand: relax.Expr, axis: int) -> relax.Expr | None:
    """A broadcast operand of a 3-D op (new expression) with the unit axis at ``axis`` inserted."""
    lifted = _lifted(rw, operand)
    if lifted is not None:
        value, its_axis = lifted
        return value if its_axis == axis else None
    shape = static_shape(operand)
    if shape is None or len(shape) > 3:
        return None
    value = rw.nchw(operand)
    if not shape:
        return value
    padded = (1,) * (3 - len(shape)) + tuple(shape)
    return rw.bb.emit(relax.op.reshape(value, padded[:axis] + (1,) + padded[axis:]))


def _record(rw: Rewriter, var: relax.Var, four: relax.Expr, axis: int) -> None:
    """``var`` (3-D) is ``four`` without its unit axis at ``axis``: bind it so for its other uses."""
    rw.memo.setdefault(_LIFTED, {})[var] = (four, axis)
    rw.set_nchw(var, rw.bb.emit(relax.op.reshape(four, static_shape(var))))


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """Lift ``var = call`` into the 4-D form (see the module docstring); False leaves it as it is."""
    name = call.op.name
    out = static_shape(var)
    if out is None or str(var.ty.dtype) == "bool":
        return False
    if name == "relax.reshape":
        x = call.args[0]
        source = static_shape(x)
        lifted = _lifted(rw, x)
        if lifted is not None and static_shape(lifted[0]) == out:
            rw.set_nchw(var, lifted[0])  # back to the 4-D shape it came from: that value itself
            return True
        if source is not None and len(source) == 4 and len(out) == 3:
            axis = _unit_axis(source, out)
            if axis is not None:
                _record(rw, var, rw.nchw(x), axis)
                return True
        return False
    if name in REDUCE:
        return _reduce(rw, var, call)
    if len(out) != 3:
        return False
    if name in UNARY:
        lifted = _lifted(rw, call.args[0])
        if lifted is None or any(isinstance(a.ty, relax.TensorType) for a in call.args[1:]):
            return False
        four, axis = lifted
        rest = [rw.substitute(a) for a in call.args[1:]]
        _record(rw, var, rw.bb.emit(relax.Call(call.op, [four, *rest], call.attrs, call.ty_args)), axis)
        return True
    if name in BINARY:
        lifted = [(a, _lifted(rw, a)) for a in call.args]
        axes = {entry[1] for _, entry in lifted if entry is not None}
        # one unit axis, and a lifted operand of the result's shape (not broadcast up to it)
        if len(axes) != 1 or not any(entry is not None and static_shape(a) == out for a, entry in lifted):
            return False
        axis = axes.pop()
        operands = [_with_unit_axis(rw, a, axis) for a in call.args]
        if any(o is None for o in operands):
            return False
        _record(rw, var, rw.bb.emit(relax.Call(call.op, operands, call.attrs, call.ty_args)), axis)
        return True
    return False


def _reduce(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """A reduction of a lifted 3-D value over the 4-D form: without kept dimensions it reduces the
    unit axis too (a unit axis' mean, sum, max or min is its one value), so the result is the same."""
    lifted = _lifted(rw, call.args[0])
    if lifted is None:
        return False
    four, axis = lifted
    axes = range(3) if call.attrs.axis is None else [int(a) % 3 for a in call.attrs.axis]
    mapped = sorted(a + 1 if a >= axis else a for a in axes)
    make = getattr(relax.op, call.op.name.split(".")[-1])
    if call.attrs.keepdims:
        _record(rw, var, rw.bb.emit(make(four, axis=mapped, keepdims=True)), axis)
    else:
        rw.set_nchw(var, rw.bb.emit(make(four, axis=sorted([*mapped, axis]), keepdims=False)))
    return True
