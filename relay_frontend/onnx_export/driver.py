"""Walk a captured Relax ``main`` (before legalization) and write one ONNX node group per op call."""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import tvm
from onnx import helper
from tvm import relax

from .context import CONVERTERS, Context, OnnxExportError, UnsupportedOnnxOpError, aotnn_op_of, onnx_dtype

DEFAULT_OPSET = 17
IR_VERSION = 8  # the IR of opset 17 (ONNX 1.12): readable by every onnxruntime since 1.12; newer opsets need newer IRs


def _value_info(name: str, expr_ty: Any) -> onnx.ValueInfoProto:
    if not isinstance(expr_ty, relax.TensorType) or expr_ty.shape is None:
        raise OnnxExportError(f"{name}: ONNX export needs tensors of static shape, got {expr_ty}")
    return helper.make_tensor_value_info(name, onnx_dtype(str(expr_ty.dtype)),
                                         [int(d) for d in expr_ty.shape.values])


def _bindings(func: relax.Function) -> list[relax.Binding]:
    body = func.body
    if not isinstance(body, relax.SeqExpr):
        return []
    return [binding for block in body.blocks for binding in block.bindings]


def _used_vars(expr: relax.Expr) -> set:
    found: set = set()
    relax.analysis.post_order_visit(expr, lambda e: found.add(e) if isinstance(e, relax.Var) else None)
    return found


def _origin(bindings: Sequence[relax.Binding], index: int) -> str:
    """The aotnn op that produced binding ``index``: its own name, or for a rule's unnamed
    intermediate (``lv``) the first named binding that consumes it."""
    name = aotnn_op_of(bindings[index].var.name)
    frontier = {bindings[index].var}
    for later in bindings[index + 1:]:
        if name not in ("lv", "gv"):
            break
        if _used_vars(later.value) & frontier:
            frontier.add(later.var)
            name = aotnn_op_of(later.var.name)
    return name


def _unsupported(bindings: Sequence[relax.Binding], index: int, what: str) -> UnsupportedOnnxOpError:
    origin = _origin(bindings, index)
    where = f" (from aotnn op {origin!r})" if origin not in ("lv", "gv") else ""
    return UnsupportedOnnxOpError(f"ONNX export: {what}{where} has no ONNX translation")


def _convert_binding(ctx: Context, bindings: Sequence[relax.Binding], index: int) -> None:
    binding = bindings[index]
    value = binding.value
    ctx.hint, ctx.out = binding.var.name, binding.var
    if isinstance(binding, relax.MatchCast) or not isinstance(value, relax.Call):
        ctx.values[binding.var] = ctx.value(value)
        return
    op = value.op
    op_name = op.name if isinstance(op, tvm.ir.Op) else str(op)
    if not isinstance(op, tvm.ir.Op) or op_name in ("relax.call_tir", "relax.call_dps_packed",
                                                    "relax.call_pure_packed"):
        raise _unsupported(bindings, index, f"a custom kernel ({op_name}, written in TE/TIR)")
    convert = CONVERTERS.get(op_name)
    if convert is None:
        raise _unsupported(bindings, index, f"Relax op {op_name!r}")
    try:
        ctx.values[binding.var] = convert(ctx, value)
    except UnsupportedOnnxOpError as err:
        raise _unsupported(bindings, index, f"Relax op {op_name!r} ({err})") from None
    except OnnxExportError:
        raise
    except Exception as err:  # a converter bug or an odd attribute: say where it happened
        raise OnnxExportError(f"ONNX export of Relax op {op_name!r} (binding {binding.var.name!r}, aotnn op "
                              f"{_origin(bindings, index)!r}) failed: {type(err).__name__}: {err}") from err


def _flatten(names: Any) -> list[str]:
    if isinstance(names, str):
        return [names]
    return [leaf for item in names for leaf in _flatten(item)]


def _rename(ctx: Context, old: str, new: str) -> None:
    for node in ctx.nodes:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new
        for i, name in enumerate(node.output):
            if name == old:
                node.output[i] = new


def to_onnx(mod: tvm.IRModule, input_names: Sequence[str], param_names: Sequence[str],
            weights: Mapping[str, np.ndarray], *, num_outputs: int | None = None,
            random_inputs: Collection[str] = (), output_names: Sequence[str] | None = None,
            opset: int = DEFAULT_OPSET, graph_name: str = "aotnn", check: bool = True) -> onnx.ModelProto:
    """Translate a captured Relax module (high-level ops, before legalization) into an ONNX model.

    Args:
        mod: module whose ``main`` takes the data inputs, then the parameters.
        input_names: names of the data inputs (the graph's inputs), in order.
        param_names: names of the parameters (the graph's initializers), in order.
        weights: the value of every parameter, by name.
        num_outputs: how many leading results of ``main`` are outputs (the rest, parameter
            updates of a training-mode network, are dropped); default all.
        random_inputs: names of inputs that take fresh U[0, 1) samples on every call: they
            become ``RandomUniform`` nodes.
        output_names: names of the graph outputs (default ``output`` or ``output0``, ``output1``...).
        opset: the ONNX opset to target (17 or newer).
        graph_name: the ONNX graph's name.
        check: run ``onnx.checker.check_model`` (with shape inference) on the result.
    Returns:
        the ONNX model.
    Raises:
        UnsupportedOnnxOpError: an op has no ONNX translation (the message names the Relax op and
            the aotnn op it came from).
        OnnxExportError: missing weights, dynamic shapes, or a model that fails the checker.
    """
    if opset < DEFAULT_OPSET:
        raise OnnxExportError(f"opset: expected {DEFAULT_OPSET} or newer, got {opset}")
    func = mod["main"]
    params = list(func.params)
    if len(params) != len(input_names) + len(param_names):
        raise OnnxExportError(f"main takes {len(params)} arguments, but {len(input_names)} inputs and "
                              f"{len(param_names)} parameters were named")
    ctx = Context(opset)
    graph_inputs, initializers = [], []
    for var, name in zip(params, input_names):
        ctx.hint = name
        if name in random_inputs:
            ctx.values[var] = ctx.node("RandomUniform", [], dtype=onnx_dtype(ctx.dtype(var)),
                                       shape=list(ctx.shape(var)), low=0.0, high=1.0)
        else:
            graph_inputs.append(_value_info(ctx.reserve(name), var.ty))
            ctx.values[var] = name
    for var, name in zip(params[len(input_names):], param_names):
        if name not in weights:
            raise OnnxExportError(f"weights: no value for parameter {name!r}")
        array = np.asarray(weights[name])
        if tuple(array.shape) != ctx.shape(var) or str(array.dtype) != ctx.dtype(var):
            raise OnnxExportError(f"weights[{name!r}]: expected {ctx.dtype(var)}{list(ctx.shape(var))}, "
                                  f"got {array.dtype}{list(array.shape)}")
        initializers.append(onnx.numpy_helper.from_array(array, ctx.reserve(name)))
        ctx.values[var] = name

    bindings = _bindings(func)
    expected: dict[str, tuple[relax.Binding, int]] = {}
    for index in range(len(bindings)):
        _convert_binding(ctx, bindings, index)
        name = ctx.values[bindings[index].var]
        if isinstance(name, str) and isinstance(bindings[index].var.ty, relax.TensorType):
            expected.setdefault(name, (bindings[index], index))

    body = func.body.body if isinstance(func.body, relax.SeqExpr) else func.body
    results = _flatten(ctx.value(body))
    result_types = _flatten_types(body)
    count = len(results) if num_outputs is None else num_outputs
    results, result_types = results[:count], result_types[:count]
    named = output_names is not None
    if output_names is None:
        output_names = ["output"] if count == 1 else [f"output{i}" for i in range(count)]
    if len(output_names) != count:
        raise OnnxExportError(f"output_names: expected {count} names, got {len(output_names)}")
    produced = {name for node in ctx.nodes for name in node.output}
    graph_outputs, renamed = [], {}
    for name, new, ty in zip(results, output_names, result_types):
        ctx.hint = new
        new = ctx.reserve(new) if named else ctx.fresh(new)  # a default name steps aside for an input's
        if name in produced and name not in renamed:
            _rename(ctx, name, new)  # the producing node writes the graph output directly
            renamed[name] = new
            if name in expected:
                expected[new] = expected.pop(name)
        else:
            ctx.nodes.append(helper.make_node("Identity", [renamed.get(name, name)], [new],
                                              name=ctx.fresh(f"{new}/Identity")))
        graph_outputs.append(_value_info(new, ty))

    graph = helper.make_graph(ctx.nodes, graph_name, graph_inputs, graph_outputs,
                              initializer=initializers)
    opset_imports = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opset_imports, producer_name="aotnn",
                              ir_version=max(IR_VERSION, helper.find_min_ir_version_for(opset_imports)))
    if check:
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as err:
            raise OnnxExportError(f"the exported ONNX model fails onnx.checker: {err}") from err
        _check_types(model, bindings, expected)
    return model


def _check_types(model: onnx.ModelProto, bindings: Sequence[relax.Binding],
                 expected: Mapping[str, tuple[relax.Binding, int]]) -> None:
    """Every value ONNX's shape inference types must have the shape and dtype Relax gave it: a
    translation that silently changes a shape (pool rounding, slice bounds...) is caught here."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    for info in list(inferred.graph.value_info) + list(inferred.graph.output):
        if info.name not in expected or not info.type.tensor_type.HasField("shape"):
            continue
        binding, index = expected[info.name]
        dims = [d.dim_value if d.HasField("dim_value") else None for d in info.type.tensor_type.shape.dim]
        want = [int(d) for d in binding.var.ty.shape.values]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
        if (None not in dims and dims != want) or str(dtype) != str(binding.var.ty.dtype):
            raise OnnxExportError(f"ONNX export of {binding.var.name!r} (aotnn op {_origin(bindings, index)!r}) "
                                  f"gives {dtype}{dims}, Relax says {binding.var.ty.dtype}{want}")


def _flatten_types(expr: relax.Expr) -> list:
    ty = expr.ty

    def leaves(t):
        if isinstance(t, relax.TupleType):
            return [leaf for field in t.fields for leaf in leaves(field)]
        return [t]
    return leaves(ty)
