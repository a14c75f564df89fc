"""The state of one export: the ONNX nodes built so far and the Relax -> ONNX name map.

Converters (one per Relax op, registered with :func:`converter`) receive the :class:`Context` and
the Relax call, add ONNX nodes through :meth:`Context.node`, and return the name of the ONNX value
that holds the call's result (a list of names for tuple-valued ops).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Union

import numpy as np
import onnx
import tvm
from onnx import helper, numpy_helper
from tvm import relax

from ..errors import CaptureError

Result = Union[str, list]
CONVERTERS: dict[str, Callable[["Context", relax.Call], Result]] = {}
INT64_MIN = -(2 ** 63)
INT64_MAX = 2 ** 63 - 1


class OnnxExportError(CaptureError):
    """The captured graph cannot be written as ONNX."""


class UnsupportedOnnxOpError(OnnxExportError):
    """A Relax op (or a form of it) has no ONNX translation."""


def converter(*names: str) -> Callable:
    """Register the decorated function as the ONNX translation of the Relax ops ``names``."""
    def register(fn: Callable) -> Callable:
        for name in names:
            if name in CONVERTERS:
                raise ValueError(f"Relax op {name!r} already has an ONNX converter")
            CONVERTERS[name] = fn
        return fn
    return register


def onnx_dtype(dtype: str) -> int:
    """The ONNX element type of a numpy-style dtype name."""
    try:
        return helper.np_dtype_to_tensor_dtype(np.dtype(str(dtype)))
    except (TypeError, KeyError):
        raise OnnxExportError(f"dtype {dtype!r} has no ONNX equivalent") from None


def aotnn_op_of(var_name: str) -> str:
    """The aotnn op a binding came from: the capture names each op's result after the op
    (``conv2d``, ``conv2d1``, ...); a rule's intermediate values are named ``lv``."""
    return re.sub(r"\d+$", "", var_name)


class Context:
    """ONNX graph under construction."""

    def __init__(self, opset: int):
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.values: dict[Any, Result] = {}  # relax.Var -> ONNX value name(s)
        self._used: set[str] = set()
        self._const_cache: dict[int, list] = {}
        self.hint = "v"  # name of the binding being converted; names its nodes and values
        self.out: relax.Var | None = None  # the variable the converted call is bound to

    # -- names -----------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.:/-]", "_", hint) or "v"
        name, count = base, 0
        while name in self._used:
            count += 1
            name = f"{base}_{count}"
        self._used.add(name)
        return name

    def reserve(self, name: str) -> str:
        if name in self._used:
            raise OnnxExportError(f"duplicate ONNX value name {name!r}")
        self._used.add(name)
        return name

    # -- values ----------------------------------------------------------------------------
    def value(self, expr: relax.Expr) -> Result:
        """The ONNX name(s) holding ``expr`` (a bound variable, a constant or a tuple of them)."""
        if isinstance(expr, relax.Var):
            try:
                return self.values[expr]
            except KeyError:
                raise OnnxExportError(f"value {expr.name!r} is used before it is defined") from None
        if isinstance(expr, tvm.ir.expr.Constant):
            # hash() of a TVM object is its address; the cache keeps the object alive, so it stays unique
            for seen, name in self._const_cache.setdefault(hash(expr), []):
                if seen.same_as(expr):
                    return name
            name = self.const(expr.value.numpy(), "const")
            self._const_cache[hash(expr)].append((expr, name))
            return name
        if isinstance(expr, relax.Tuple):
            return [self.value(field) for field in expr.fields]
        if isinstance(expr, relax.TupleGetItem):
            return self.value(expr.tuple_value)[int(expr.index)]
        raise UnsupportedOnnxOpError(f"{type(expr).__name__} values cannot be written as ONNX")

    def tensor(self, expr: relax.Expr) -> str:
        """The ONNX name of a tensor-valued ``expr``."""
        name = self.value(expr)
        if not isinstance(name, str):
            raise OnnxExportError("expected a tensor, got a tuple")
        return name

    def const(self, array: Any, hint: str = "const", dtype: str | None = None) -> str:
        """A Constant node holding ``array``; returns its output name. (Initializers are kept for the
        network's parameters, so that a consumer sees exactly the trainable weights there.)"""
        array = np.asarray(array, dtype=dtype)
        name = self.fresh(hint)
        self.nodes.append(helper.make_node("Constant", [], [name], name=self.fresh(f"{name}/Constant"),
                                           value=numpy_helper.from_array(array, name)))
        return name

    def int64s(self, values: Sequence[int], hint: str = "ints") -> str:
        return self.const(np.asarray(list(values), dtype=np.int64), hint)

    def scalar(self, value: Any, dtype: str) -> str:
        return self.const(np.asarray(value, dtype=dtype), "scalar")

    def node(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attrs: Any) -> Any:
        """Add a node; returns its output name (a list of names if ``outputs`` > 1)."""
        names = [self.fresh(f"{self.hint}_{op_type}" if outputs == 1 else f"{self.hint}_{op_type}_{i}")
                 for i in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=self.fresh(f"{self.hint}/{op_type}"),
                                           **attrs))
        return names[0] if outputs == 1 else names

    # -- Relax facts -----------------------------------------------------------------------
    @staticmethod
    def shape(expr: relax.Expr) -> tuple[int, ...]:
        ty = expr.ty
        if not isinstance(ty, relax.TensorType) or ty.shape is None:
            raise OnnxExportError(f"expected a tensor with a static shape, got {ty}")
        try:
            return tuple(int(d) for d in ty.shape.values)
        except TypeError:
            raise OnnxExportError(f"ONNX export needs static shapes, got {ty}") from None

    @staticmethod
    def dtype(expr: relax.Expr) -> str:
        return str(expr.ty.dtype)

    def out_shape(self) -> tuple[int, ...]:
        """Static shape of the result of the call being converted."""
        return self.shape(self.out)

    def out_dtype(self) -> str:
        return self.dtype(self.out)

    def fill(self, shape: Sequence[int], value: Any, dtype: str) -> str:
        """A tensor of ``shape`` filled with ``value`` (ConstantOfShape: no large initializer)."""
        filler = numpy_helper.from_array(np.asarray([value], dtype=dtype), "value")
        return self.node("ConstantOfShape", [self.int64s(shape, "shape")], value=filler)

    def cast(self, name: str, dtype: str) -> str:
        return self.node("Cast", [name], to=onnx_dtype(dtype))

    def reshape(self, name: str, shape: Sequence[int]) -> str:
        return self.node("Reshape", [name, self.int64s(shape, "shape")])


def ints(value: Any) -> list[int] | None:
    """A Relax attribute or argument holding integers (IntImm, array, tuple, ShapeExpr) as Python ints."""
    if value is None:
        return None
    if isinstance(value, relax.ShapeExpr):
        value = value.values
    if isinstance(value, relax.Tuple):
        value = value.fields
    if hasattr(value, "value") and not isinstance(value, (list, tuple)):
        return [int(value.value)]
    return [int(getattr(v, "value", v)) for v in value]


def number(value: Any) -> float | int:
    """A scalar Relax argument (IntImm, FloatImm, PrimValue, 0-d constant) as a Python number."""
    while hasattr(value, "value"):  # PrimValue -> IntImm/FloatImm -> number; Constant -> tensor
        value = value.value
    return value.numpy().item() if hasattr(value, "numpy") else value
