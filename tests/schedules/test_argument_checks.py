"""Microcontroller kernels compiled without the packed API's argument checks (schedules.argument_checks):
the code computes the same, the checks' error strings are gone, and a kernel that asserts something
about its data keeps every check."""
from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tirx as T

from schedules.argument_checks import body_asserts, compile_without_argument_checks


@T.prim_func
def double(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "double"})
    for i in range(4):
        b[i] = a[i] * T.float32(2)


@T.prim_func
def gather(table: T.Buffer((4,), "float32"), index: T.Buffer((2,), "int32"), out: T.Buffer((2,), "float32")):
    T.func_attr({"global_symbol": "gather"})
    for i in range(2):
        assert index[i] < 4, "index out of range"
        out[i] = table[index[i]]


def _string_constants(library) -> list[str]:
    return [line for line in library.mod.inspect_source("ll").splitlines() if line.startswith("@.str")]


def test_body_asserts_names_only_kernels_that_assert_on_their_data():
    assert body_asserts(tvm.IRModule({"double": double, "gather": gather})) == ["gather"]
    assert body_asserts(tvm.IRModule({"double": double})) == []


def test_kernel_without_checks_computes_the_same_and_holds_no_error_strings():
    mod = tvm.IRModule({"double": double})
    target = tvm.target.Target("llvm")
    checked = tvm.compile(mod, target=target)
    unchecked = compile_without_argument_checks(mod, target)
    assert _string_constants(checked), "the packed API's checks carry error strings"
    assert _string_constants(unchecked) == []
    a = np.array([1.5, -2.0, 0.25, 3.0], dtype=np.float32)
    out = tvm.runtime.tensor(np.zeros(4, dtype=np.float32))
    unchecked.mod["double"](tvm.runtime.tensor(a), out)
    np.testing.assert_array_equal(out.numpy(), a * 2)


def test_a_kernel_that_asserts_keeps_every_check():
    library = compile_without_argument_checks(tvm.IRModule({"gather": gather}), tvm.target.Target("llvm"))
    table = tvm.runtime.tensor(np.array([10, 20, 30, 40], dtype=np.float32))
    out = tvm.runtime.tensor(np.zeros(2, dtype=np.float32))
    library.mod["gather"](table, tvm.runtime.tensor(np.array([3, 1], dtype=np.int32)), out)
    np.testing.assert_array_equal(out.numpy(), [40, 20])
    with pytest.raises(Exception, match="index out of range"):
        library.mod["gather"](table, tvm.runtime.tensor(np.array([0, 7], dtype=np.int32)), out)
    with pytest.raises(Exception, match="shape"):  # the argument checks are still there
        library.mod["gather"](table, tvm.runtime.tensor(np.zeros(3, dtype=np.int32)), out)
