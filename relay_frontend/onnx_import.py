"""ONNX import: an ONNX model -> a Relax function (data inputs, then weights) through TVM's Relax ONNX
frontend with aotnn's converters where TVM's lack or are wrong (``onnx_converters``: LSTM/GRU/RNN,
LayerNormalization, TopK, CumSum, ...), checked first so that bad models fail with the name of the node
at fault.

The imported function feeds the same pipeline as a captured network: :func:`import_onnx` gives the
function, its input and parameter names and the weights, and the ``onnx_graph`` lowering rule inlines
it into a capture, so an imported model can sit inside a Cell (``aotnn.load_onnx``).
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import tvm
from onnx import helper
from tvm import relax

from .errors import CaptureError
from .onnx_quantized import MICROSOFT_OPS, QPARAM_INPUTS, missing_input
from .ops.registry import rule


class OnnxImportError(CaptureError, ValueError):
    """The ONNX model is malformed, uses an op TVM cannot import, or has shapes we cannot fix statically."""


@dataclass
class OnnxGraph:
    """An ONNX model imported into Relax.

    Attributes:
        function: Relax function taking the data inputs, then the parameters.
        input_names: the ONNX names of the data inputs, in order.
        input_specs: (shape, dtype) per data input.
        param_names: the ONNX initializer names of the parameters, in order.
        weights: initializer values by name.
        output_specs: (shape, dtype) per output.
        digest: content hash of the model and the input shapes.
    """
    function: relax.Function
    input_names: list[str]
    input_specs: list[tuple[tuple[int, ...], str]]
    param_names: list[str]
    weights: dict[str, np.ndarray]
    output_specs: list[tuple[tuple[int, ...], str]]
    digest: str
    opset: int = 0
    producer: str = ""
    node_count: int = 0
    op_types: dict[str, int] = field(default_factory=dict)
    functions: dict[str, tvm.ir.BaseFunc] = field(default_factory=dict)

    def module(self) -> tvm.IRModule:
        """An IRModule whose ``main`` returns a tuple of the outputs (the form ``schedules.build`` takes)."""
        bb = relax.BlockBuilder()
        params = [relax.Var(p.name, p.ty) for p in self.function.params]
        with bb.function("main", params):
            with bb.dataflow():
                outputs = _inline(bb, self.function, params, self.functions)
                result = bb.emit_output(relax.Tuple(list(outputs)))
            bb.emit_func_output(result)
        return bb.get()

    def __repr__(self) -> str:  # short and stable: used in cache keys of eager calls
        return f"OnnxGraph({self.digest[:16]})"


def load_model(source: str | os.PathLike | bytes | onnx.ModelProto) -> onnx.ModelProto:
    """An ONNX ModelProto from a path, serialized bytes or a ModelProto.

    Raises:
        FileNotFoundError: no such file.
        OnnxImportError: the bytes are not an ONNX model.
    """
    if isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, (bytes, bytearray)):
        data, where = bytes(source), "the given bytes"
    else:
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such ONNX file: {path!r}")
        with open(path, "rb") as stream:
            data = stream.read()
        where = repr(path)
    try:
        model = onnx.load_model_from_string(data)
    except Exception as err:  # protobuf's DecodeError and friends
        raise OnnxImportError(f"{where} is not a valid ONNX model (truncated or corrupt?): {err}") from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise OnnxImportError(f"{where} is not a valid ONNX model: it has no graph")
    return model


def _node_label(node: onnx.NodeProto, index: int) -> str:
    return f"node {node.name or f'#{index}'!r} ({node.op_type})"


def _node_named_in(message: str) -> str:
    """``node 'name' (OpType): `` when the checker's message names a node."""
    found = re.search(r"name: (\S*) OpType: (\S+)", message)
    return f"node {found.group(1)!r} ({found.group(2)}): " if found else ""


def check_model(model: onnx.ModelProto) -> None:
    """Validate ``model`` with ``onnx.checker`` and against the ops the import takes (TVM's and aotnn's).

    Raises:
        OnnxImportError: naming the node (name and op type) at fault where the checker tells it.
    """
    for index, node in enumerate(model.graph.node):
        missing = missing_input(node)
        if missing:
            raise OnnxImportError(f"malformed ONNX model: {_node_label(node, index)}: {missing}")
    try:
        onnx.checker.check_model(model)
    except Exception as err:
        message = " ".join(str(err).split()) or type(err).__name__
        raise OnnxImportError(f"malformed ONNX model: {_node_named_in(message)}{message}") from None
    from .onnx_converters import supported_ops
    known = supported_ops()
    for index, node in enumerate(model.graph.node):
        microsoft = node.domain == "com.microsoft" and node.op_type in MICROSOFT_OPS
        if node.domain not in ("", "ai.onnx") and not microsoft:
            raise OnnxImportError(f"{_node_label(node, index)}: custom op domain {node.domain!r} is not supported")
        if node.op_type not in known:
            raise OnnxImportError(f"{_node_label(node, index)}: op type {node.op_type!r} is not supported by "
                                  f"aotnn's ONNX import")
        if node.op_type in ("If", "Loop", "Scan"):
            raise OnnxImportError(f"{_node_label(node, index)}: control flow ({node.op_type}) cannot be compiled "
                                  f"ahead of time into a static kernel sequence")


def _opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 1


# node inputs that set output shapes or that TVM's converters read at import, whatever their dtype
# (Resize's roi, scales and sizes; Range's bounds; OneHot's depth; Pad's value): aotnn needs them constant,
# as integer shape inputs
STATIC_INPUTS: dict[str, tuple[int, ...]] = {"Resize": (1, 2, 3), "Upsample": (1,), "Range": (0, 1, 2),
                                             "OneHot": (1, 2), "Pad": (1, 2, 3), **QPARAM_INPUTS}


def static_input_names(graph: onnx.GraphProto) -> set[str]:
    """Names of the values ``graph`` feeds to the :data:`STATIC_INPUTS` positions of its nodes."""
    return {node.input[i] for node in graph.node for i in STATIC_INPUTS.get(node.op_type, ())
            if i < len(node.input) and node.input[i]}


def _constants_inline(model: onnx.ModelProto) -> onnx.ModelProto:
    """Integer and bool initializers (shapes, axes, indices) and those at static input positions
    (Resize's scales, ...) become Constant nodes, so that TVM folds them; only the other floating-point
    initializers stay as weights."""
    model = copy.deepcopy(model)
    graph = model.graph
    keep, constants = [], []
    static = static_input_names(graph)
    for tensor in graph.initializer:
        if helper.tensor_dtype_to_np_dtype(tensor.data_type).kind == "f" and tensor.name not in static:
            keep.append(tensor)
        else:
            constants.append(helper.make_node("Constant", [], [tensor.name], value=tensor,
                                              name=f"{tensor.name}__constant"))
    if constants:
        initializer_inputs = {t.name for t in constants}
        inputs = [i for i in graph.input if i.name not in initializer_inputs]
        del graph.initializer[:]
        graph.initializer.extend(keep)
        del graph.input[:]
        graph.input.extend(inputs)
        nodes = constants + list(graph.node)
        del graph.node[:]
        graph.node.extend(nodes)
    return model


def _data_inputs(model: onnx.ModelProto, shape_dict: Mapping[str, Sequence[int]] | None) -> dict[str, tuple]:
    initializers = {t.name for t in model.graph.initializer}
    specs = {}
    shape_dict = dict(shape_dict or {})
    for info in model.graph.input:
        if info.name in initializers:
            continue
        tensor_type = info.type.tensor_type
        if shape_dict.get(info.name) is not None:
            shape = tuple(int(d) for d in shape_dict.pop(info.name))
        else:
            if not tensor_type.HasField("shape"):
                raise OnnxImportError(f"input {info.name!r} has an unknown rank: give its shape "
                                      f"(shape_dict / --input {info.name}:D0,D1,...)")
            dims = []
            for d in tensor_type.shape.dim:
                if not d.HasField("dim_value") or d.dim_value <= 0:
                    raise OnnxImportError(f"input {info.name!r} has a dynamic dimension "
                                          f"{d.dim_param or '?'!r}: give its shape (shape_dict / --input "
                                          f"{info.name}:D0,D1,...)")
                dims.append(int(d.dim_value))
            shape = tuple(dims)
        specs[info.name] = (shape, str(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)))
    if shape_dict:
        raise OnnxImportError(f"shape_dict names {sorted(shape_dict)}, which are not inputs of the model "
                              f"(inputs: {sorted(specs)})")
    return specs


def _failing_node(importer: Any, graph: onnx.GraphProto) -> tuple[str, str]:
    """(the first node the importer did not convert, a hint on why or '')."""
    produced = getattr(importer, "_nodes", {})
    for index, node in enumerate(graph.node):
        if any(out and out not in produced for out in node.output):
            return _node_label(node, index), _constant_hint(importer, node)
    return "the graph outputs", ""


def _constant_hint(importer: Any, node: onnx.NodeProto) -> str:
    """``; its input 'i' must be a constant ...`` when integer inputs of ``node`` are not constants: shapes,
    axes and sizes computed at run time make shapes that aotnn cannot compile statically."""
    produced = getattr(importer, "_nodes", {})
    static = static_input_names(onnx.helper.make_graph([node], "node", [], []))
    varying = [name for name in node.input if name in produced and not isinstance(produced[name], tvm.ir.expr.Constant)
               and isinstance(getattr(produced[name], "ty", None), relax.TensorType)
               and (name in static or str(produced[name].ty.dtype).startswith(("int", "uint")))]
    if not varying or node.op_type in ("Gather", "GatherElements", "GatherND", "OneHot", "ScatterElements",
                                       "ScatterND", "Where", "Equal", "Cast", "CastLike", "Add", "Sub", "Mul"):
        return ""
    names = ", ".join(map(repr, varying))
    return (f"; its input{'s' if len(varying) > 1 else ''} {names} must be "
            f"{'constants' if len(varying) > 1 else 'a constant'} (an initializer or a Constant node): "
            f"aotnn compiles static shapes")


def _is_static(value: Any) -> bool:
    return _static_type(getattr(value, "ty", None))


def _static_type(ty: Any) -> bool:
    """Whether ``ty`` (tensor, shape or tuple of them) has static dimensions."""
    if isinstance(ty, relax.TupleType):
        return all(_static_type(f) for f in ty.fields)
    if isinstance(ty, relax.ShapeType):
        values = getattr(ty, "values", None)
        return values is not None and all(isinstance(v, (int, tvm.tirx.IntImm)) for v in values)
    if not isinstance(ty, relax.TensorType):
        return True
    values = getattr(ty.shape, "values", None)  # None also where the shape is a variable (ConstantOfShape)
    return values is not None and all(isinstance(v, (int, tvm.tirx.IntImm)) for v in values)


def _dynamic_shape_origin(importer: Any, graph: onnx.GraphProto) -> str:
    """Where shapes first depend on input values: ``node 'n' (Op): its input 'i' must be a constant``."""
    produced = getattr(importer, "_nodes", {})
    for index, node in enumerate(graph.node):
        outputs = [produced.get(name) for name in node.output if name]
        if all(out is None or _is_static(out) for out in outputs):
            continue
        static = static_input_names(onnx.helper.make_graph([node], "node", [], []))
        varying = [name for name in node.input if name and not isinstance(produced.get(name), tvm.ir.expr.Constant)
                   and isinstance(getattr(produced.get(name), "ty", None), relax.TensorType)
                   and (name in static or str(produced[name].ty.dtype).startswith(("int", "uint", "bool")))]
        which = (f"its input{'s' if len(varying) > 1 else ''} {', '.join(map(repr, varying))} must be "
                 f"{'constants' if len(varying) > 1 else 'a constant'} (an initializer or a Constant node)"
                 if varying else "its output shape depends on input values")
        return f"{_node_label(node, index)}: {which}; aotnn compiles static shapes only"
    return ""


def _static(ty: Any, what: str) -> list[tuple[tuple[int, ...], str]]:
    if isinstance(ty, relax.TupleType):
        return [spec for f in ty.fields for spec in _static(f, what)]
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise OnnxImportError(f"{what} has no static tensor type ({ty})")
    try:
        return [(tuple(int(d) for d in ty.shape.values), str(ty.dtype))]
    except TypeError:
        raise OnnxImportError(f"{what} has a shape that depends on input values ({ty}); aotnn compiles "
                              f"static shapes only") from None


def _shape_as_tensor(value: relax.Expr, what: str) -> relax.Expr:
    """A shape value (what ONNX's Shape gives) as the int64 tensor ONNX means; other values unchanged."""
    if not isinstance(value.ty, relax.ShapeType):
        return value
    try:
        dims = [int(d) for d in value.ty.values]
    except TypeError:
        raise OnnxImportError(f"{what} is a shape that depends on input values ({value.ty}); aotnn "
                              f"compiles static shapes only") from None
    return relax.const(np.array(dims, dtype="int64"), "int64")


def _declared(info: onnx.ValueInfoProto) -> tuple[tuple[int, ...] | None, str | None]:
    """(static shape or None, dtype or None) the model declares for a graph output."""
    tensor_type = info.type.tensor_type
    dtype = str(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)) if tensor_type.elem_type else None
    if not tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in tensor_type.shape.dim):
        return None, dtype
    return tuple(int(d.dim_value) for d in tensor_type.shape.dim), dtype


def _as_declared(bb: relax.BlockBuilder, value: relax.Expr, info: onnx.ValueInfoProto | None) -> relax.Expr:
    """``value`` in the form the model declares where TVM's importer returns another: a shape with the same
    elements but other unit axes (reshaped) and Dropout's mask as float (cast to bool)."""
    if info is None or not isinstance(value.ty, relax.TensorType) or value.ty.shape is None:
        return value
    shape, dtype = _declared(info)
    if dtype == "bool" and str(value.ty.dtype) != "bool":
        value = bb.emit(relax.op.astype(value, "bool"))
    try:
        have = tuple(int(d) for d in value.ty.shape.values)
    except TypeError:
        return value
    if shape is not None and shape != have and int(np.prod(shape)) == int(np.prod(have)):
        value = bb.emit(relax.op.reshape(value, shape))
    return value


def _shape_outputs_as_tensors(func: relax.Function, functions: dict[str, tvm.ir.BaseFunc],
                              outputs: Sequence[onnx.ValueInfoProto]) -> tuple[relax.Function, dict]:
    """``func`` with its shape outputs (ONNX Shape nodes) returned as int64 tensors, and outputs TVM
    imports in another form than the model declares corrected (see :func:`_as_declared`)."""
    is_tuple = isinstance(func.ret_ty, relax.TupleType)
    types = func.ret_ty.fields if is_tuple else [func.ret_ty]
    declared = [_declared(info) for info in outputs]

    def differs(ty: Any, want: tuple) -> bool:
        if isinstance(ty, relax.ShapeType):
            return True
        if not isinstance(ty, relax.TensorType) or ty.shape is None:
            return False
        shape, dtype = want
        try:
            have = tuple(int(d) for d in ty.shape.values)
        except TypeError:
            return False
        return (dtype == "bool" and str(ty.dtype) != "bool") or (shape is not None and shape != have)
    if len(types) != len(outputs) or not any(differs(t, w) for t, w in zip(types, declared)):
        return func, functions
    bb = relax.BlockBuilder()
    params = [relax.Var(p.name, p.ty) for p in func.params]
    with bb.function("main", params):
        with bb.dataflow():
            values = _inline(bb, func, params, functions)
            values = [_as_declared(bb, _shape_as_tensor(v, f"output {info.name!r}"), info)
                      for v, info in zip(values, outputs)]
            result = bb.emit_output(relax.Tuple(values) if is_tuple else values[0])
        bb.emit_func_output(result)
    mod = bb.get()
    main = mod["main"]
    return (relax.Function(main.params, main.body, main.ret_ty, main.is_pure),
            {gv.name_hint: f for gv, f in mod.functions.items() if gv.name_hint != "main"})


def import_onnx(source: str | os.PathLike | bytes | onnx.ModelProto,
                shape_dict: Mapping[str, Sequence[int]] | None = None) -> OnnxGraph:
    """Import an ONNX model with TVM's Relax frontend, weights kept as function parameters.

    Args:
        source: path, serialized bytes or ModelProto.
        shape_dict: static shapes for inputs whose shapes are dynamic or to override (by input name).
    Returns:
        the :class:`OnnxGraph`.
    Raises:
        FileNotFoundError: no such file.
        OnnxImportError: a malformed model, an unsupported op or a failing conversion (naming the node),
            or shapes that stay dynamic.
    """
    from .onnx_converters import AotnnOnnxImporter, ConverterError

    model = load_model(source)
    check_model(model)
    specs = _data_inputs(model, shape_dict)
    prepared = _constants_inline(model)
    opset = _opset(model)
    importer = AotnnOnnxImporter({name: list(shape) for name, (shape, _) in specs.items()},
                                 {name: dtype for name, (_, dtype) in specs.items()},
                                 keep_params_in_input=True, sanitize=True)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):  # TVM prints as it fails
            warnings.simplefilter("ignore")
            mod = importer.from_onnx(prepared.graph, opset)
    except ConverterError as err:
        where, _ = _failing_node(importer, prepared.graph)
        raise OnnxImportError(f"{where}: {err}") from None
    except Exception as err:
        message = str(err).strip().splitlines()
        detail = message[-1] if message else type(err).__name__
        where, hint = _failing_node(importer, prepared.graph)
        raise OnnxImportError(f"{where}: TVM cannot import it: {type(err).__name__}: {detail}{hint}") from None
    func = mod["main"]
    values = [np.asarray(v.numpy()) for v in func.attrs["params"]] if "params" in (func.attrs or {}) else []
    num_inputs = len(func.params) - len(values)
    # parameter order is the importer's: that of the initializers it kept, stripped of "onnx::"
    by_var_name = {t.name.removeprefix("onnx::"): t.name for t in prepared.graph.initializer}
    param_names = [by_var_name.get(p.name, p.name) for p in func.params[num_inputs:]]
    input_names = [name for name in specs][:num_inputs]
    if not _static_type(func.ret_ty):
        origin = _dynamic_shape_origin(importer, prepared.graph)
        if origin:
            raise OnnxImportError(origin)
    for var, name in zip(func.params[:num_inputs], input_names):
        if _static(var.ty, f"input {name!r}")[0] != specs[name]:
            raise OnnxImportError(f"input {name!r}: imported as {var.ty}, expected {specs[name]}")
    function = relax.Function(func.params, func.body, func.ret_ty, func.is_pure)
    functions = {gv.name_hint: f for gv, f in mod.functions.items() if gv.name_hint != "main"}
    function, functions = _shape_outputs_as_tensors(function, functions, model.graph.output)
    output_types = function.ret_ty.fields if isinstance(function.ret_ty, relax.TupleType) else [function.ret_ty]
    output_specs = [spec for info, ty in zip(model.graph.output, output_types)
                    for spec in _static(ty, f"output {info.name!r}")]
    digest = hashlib.sha256(model.SerializeToString() + repr(sorted(specs.items())).encode()).hexdigest()
    op_types: dict[str, int] = {}
    for node in model.graph.node:
        op_types[node.op_type] = op_types.get(node.op_type, 0) + 1
    return OnnxGraph(function, input_names, [specs[n] for n in input_names], param_names,
                     dict(zip(param_names, values)), output_specs, digest, opset, model.producer_name,
                     len(model.graph.node), op_types, functions)


# -- inlining into a capture -----------------------------------------------------------------------
@relax.expr_functor.mutator
class _Substitute(relax.PyExprMutator):
    def __init__(self, mapping: dict, globals_: dict | None = None):
        super().__init__()
        self.mapping = mapping
        self.globals = globals_ or {}

    def visit_global_var_(self, var):  # noqa: D102
        return self.globals.get(var.name_hint, var)

    def visit_var_(self, var):  # noqa: D102
        return self.mapping.get(var, var)

    def visit_dataflow_var_(self, var):  # noqa: D102
        return self.mapping.get(var, var)


def _inline(bb: relax.BlockBuilder, func: relax.Function, args: Sequence[relax.Expr],
            functions: Mapping[str, tvm.ir.BaseFunc] | None = None) -> list[relax.Expr]:
    """Emit ``func``'s bindings into ``bb`` with its parameters replaced by ``args``; returns its outputs.

    ``functions`` (the TIR kernels the importer wrote, by name) join ``bb``'s module, under new names
    where the module already holds another function by that name.
    """
    mapping = dict(zip(func.params, args))
    globals_ = {name: bb.add_func(f, name) for name, f in (functions or {}).items()}
    body = func.body
    if not isinstance(body, relax.SeqExpr):
        raise OnnxImportError("the imported function has no binding blocks")
    for block in body.blocks:
        for binding in block.bindings:
            if not isinstance(binding, relax.VarBinding):
                raise OnnxImportError(f"cannot inline binding {type(binding).__name__}")
            value = _Substitute(mapping, globals_).visit_expr(binding.value)
            mapping[binding.var] = bb.emit(value, name_hint=binding.var.name)
    result = _Substitute(mapping, globals_).visit_expr(body.body)
    if isinstance(result, relax.Tuple):
        return list(result.fields)
    if isinstance(result.ty, relax.TupleType):
        return [bb.emit(relax.TupleGetItem(result, i)) for i in range(len(result.ty.fields))]
    return [result]


@rule("onnx_graph")
def onnx_graph(*args: relax.Expr, graph: OnnxGraph) -> relax.Expr:
    """The imported ONNX graph applied to ``args`` (data inputs, then parameters)."""
    if len(args) != len(graph.function.params):
        raise CaptureError(f"onnx_graph: expected {len(graph.function.params)} tensors, got {len(args)}")
    outputs = _inline(relax.BlockBuilder.current(), graph.function, args, graph.functions)
    return relax.Tuple(outputs)
