"""Indexing ops: take (Gather), strided slices, splits, gathers and scatters, one-hot, triangles,
cumulative sums and top-k."""
from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from tvm import relax

from .context import INT64_MIN, Context, UnsupportedOnnxOpError, converter, ints, number


def _flat(ctx: Context, x: relax.Expr) -> str:
    return ctx.reshape(ctx.tensor(x), [-1])


def _gather_source(ctx: Context, x: relax.Expr, axis: Any) -> tuple[str, int, int]:
    """(tensor, length, axis) to gather along: ``x`` flattened when ``axis`` is None."""
    if axis is None:
        return _flat(ctx, x), int(np.prod(ctx.shape(x))), 0
    axis = int(axis) % len(ctx.shape(x))
    return ctx.tensor(x), ctx.shape(x)[axis], axis


@converter("relax.take")
def take(ctx: Context, call: relax.Call) -> str:
    x, indices = call.args
    mode = str(call.attrs.mode)
    data, size, axis = _gather_source(ctx, x, call.attrs.axis)
    if isinstance(indices, tvm.ir.expr.Constant):
        table = indices.value.numpy().astype(np.int64)
        table = np.clip(table, 0, size - 1) if mode == "clip" else np.mod(table, size) if mode == "wrap" else table
        index = ctx.const(table, "indices")
    else:
        index = ctx.tensor(indices)
        if ctx.dtype(indices) not in ("int32", "int64"):
            index = ctx.cast(index, "int64")
        dtype = "int64" if ctx.dtype(indices) not in ("int32", "int64") else ctx.dtype(indices)
        if mode == "clip":
            index = ctx.node("Clip", [index, ctx.scalar(0, dtype), ctx.scalar(size - 1, dtype)])
        elif mode == "wrap":
            index = ctx.node("Mod", [index, ctx.scalar(size, dtype)], fmod=0)
    return ctx.node("Gather", [data, index], axis=axis)


def _slice_bounds(dim: int, begin: int, end: int, step: int) -> tuple[int, int]:
    """numpy's slice semantics made explicit (ONNX clamps negative-step ends differently)."""
    start, stop, step = slice(begin, end, step).indices(dim)
    if step < 0 and stop < 0:
        stop = INT64_MIN
    return start, stop


@converter("relax.strided_slice")
def strided_slice(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    shape = ctx.shape(x)
    axes, begins, ends = (ints(arg) for arg in call.args[1:4])
    strides = ints(call.args[4]) if len(call.args) > 4 and call.args[4] is not None else [1] * len(axes)
    if len(strides) == 1 and len(axes) > 1:
        strides = strides * len(axes)
    axes = [a % len(shape) for a in axes]
    starts, stops = zip(*[_slice_bounds(shape[a], b, e, s) for a, b, e, s in zip(axes, begins, ends, strides)])
    for a, b, e, s in zip(axes, begins, ends, strides):
        if len(range(shape[a])[b:e:s]) != ctx.out_shape()[a]:
            raise UnsupportedOnnxOpError(f"strided_slice {b}:{e}:{s} on axis {a} does not follow numpy's "
                                         f"slice semantics")
    return ctx.node("Slice", [ctx.tensor(x), ctx.int64s(starts, "starts"), ctx.int64s(stops, "ends"),
                              ctx.int64s(axes, "axes"), ctx.int64s(strides, "steps")])


@converter("relax.split")
def split(ctx: Context, call: relax.Call) -> list[str]:
    x = call.args[0]
    axis = int(call.attrs.axis) % len(ctx.shape(x))
    sizes = [int(field.shape.values[axis]) for field in ctx.out.ty.fields]
    if len(sizes) == 1:
        return [ctx.node("Identity", [ctx.tensor(x)])]
    return ctx.node("Split", [ctx.tensor(x), ctx.int64s(sizes, "split")], outputs=len(sizes), axis=axis)


@converter("relax.gather_elements")
def gather_elements(ctx: Context, call: relax.Call) -> str:
    data, indices = call.args
    return ctx.node("GatherElements", [ctx.tensor(data), ctx.tensor(indices)],
                    axis=int(call.attrs.axis) % len(ctx.shape(data)))


@converter("relax.gather_nd")
def gather_nd(ctx: Context, call: relax.Call) -> str:
    data, indices = call.args
    index = ctx.tensor(indices)
    if ctx.dtype(indices) != "int64":
        index = ctx.cast(index, "int64")
    return ctx.node("GatherND", [ctx.tensor(data), index], batch_dims=int(call.attrs.batch_dims))


_REDUCTIONS = {"update": "none", "add": "add", "mul": "mul", "max": "max", "min": "min"}


def _reduction(ctx: Context, name: str) -> str:
    reduction = _REDUCTIONS.get(name)
    if reduction is None or (reduction in ("max", "min") and ctx.opset < 18):
        raise UnsupportedOnnxOpError(f"scatter reduction {name!r} at opset {ctx.opset}")
    return reduction


@converter("relax.scatter_elements")
def scatter_elements(ctx: Context, call: relax.Call) -> str:
    data, indices, updates = call.args
    return ctx.node("ScatterElements", [ctx.tensor(data), ctx.tensor(indices), ctx.tensor(updates)],
                    axis=int(call.attrs.axis) % len(ctx.shape(data)),
                    reduction=_reduction(ctx, str(call.attrs.reduction)))


@converter("relax.scatter_nd")
def scatter_nd(ctx: Context, call: relax.Call) -> str:
    data, indices, updates = call.args
    index = ctx.tensor(indices)
    if ctx.dtype(indices) != "int64":
        index = ctx.cast(index, "int64")
    return ctx.node("ScatterND", [ctx.tensor(data), index, ctx.tensor(updates)],
                    reduction=_reduction(ctx, str(call.attrs.reduction)))


@converter("relax.one_hot")
def one_hot(ctx: Context, call: relax.Call) -> str:
    """OneHot on int64 indices with int64 or float32 values (the forms onnxruntime implements),
    cast to the result's dtype."""
    indices, on_value, off_value = call.args
    dtype = ctx.out_dtype()
    compute = "int64" if dtype == "int64" else "float32"
    values = ctx.const(np.asarray([number(off_value), number(on_value)], dtype=compute), "values")
    depth = ctx.const(np.asarray(int(call.attrs.depth), dtype=compute), "depth")
    index = ctx.tensor(indices)
    if ctx.dtype(indices) != "int64":
        index = ctx.cast(index, "int64")
    out = ctx.node("OneHot", [index, depth, values], axis=int(call.attrs.axis))
    return out if compute == dtype else ctx.cast(out, dtype)


@converter("relax.repeat")
def repeat(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    repeats = int(call.attrs.repeats)
    data, size, axis = _gather_source(ctx, x, call.attrs.axis)
    table = ctx.const(np.repeat(np.arange(size, dtype=np.int64), repeats), "indices")
    return ctx.node("Gather", [data, table], axis=axis)


@converter("relax.tril", "relax.triu")
def triangle(ctx: Context, call: relax.Call) -> str:
    k = int(number(call.args[1])) if len(call.args) > 1 else int(getattr(call.attrs, "k", 0))
    return ctx.node("Trilu", [ctx.tensor(call.args[0]), ctx.const(np.asarray(k, np.int64), "k")],
                    upper=int(call.op.name == "relax.triu"))


@converter("relax.cumsum")
def cumsum(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    data = ctx.tensor(x)
    if call.attrs.axis is None:
        data, axis = _flat(ctx, x), 0
    else:
        axis = int(call.attrs.axis) % len(ctx.shape(x))
    if ctx.out_dtype() != ctx.dtype(x):
        data = ctx.cast(data, ctx.out_dtype())
    exclusive = int(bool(getattr(call.attrs, "exclusive", False)))
    return ctx.node("CumSum", [data, ctx.const(np.asarray(axis, np.int64), "axis")], exclusive=exclusive)


def _top(ctx: Context, x: relax.Expr, k: int, axis: int, largest: bool) -> list[str]:
    return ctx.node("TopK", [ctx.tensor(x), ctx.int64s([k], "k")], outputs=2, axis=axis,
                    largest=int(largest), sorted=1)


@converter("relax.topk")
def topk(ctx: Context, call: relax.Call):
    x = call.args[0]
    axis = int(call.attrs.axis) % len(ctx.shape(x))
    values, indices = _top(ctx, x, int(call.attrs.k), axis, bool(call.attrs.largest))
    index_dtype = str(call.attrs.dtype)
    if index_dtype != "int64":
        indices = ctx.cast(indices, index_dtype)
    ret = str(call.attrs.ret_type)
    return [values, indices] if ret == "both" else values if ret == "values" else indices


@converter("relax.sort")
def sort(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    axis = int(call.attrs.axis) % len(ctx.shape(x))
    return _top(ctx, x, ctx.shape(x)[axis], axis, bool(call.attrs.descending))[0]


@converter("relax.argsort")
def argsort(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    axis = int(call.attrs.axis) % len(ctx.shape(x))
    indices = _top(ctx, x, ctx.shape(x)[axis], axis, bool(call.attrs.descending))[1]
    return indices if ctx.out_dtype() == "int64" else ctx.cast(indices, ctx.out_dtype())
