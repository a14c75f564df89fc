"""Compiling a microcontroller bundle's kernels without the packed API's argument checks.

Every kernel is compiled behind TVM's packed calling convention, whose wrapper checks each
argument's type index, dtype, rank, shape, strides, byte offset, alignment and device before
calling the kernel's body, with one error string per check. In a Cortex-M bundle those checks
are 60% of the code (DS-CNN int8: 32 KB of wrappers and 7 KB of strings beside 16 KB of kernel
bodies), and they can never fail: the only caller is the generated ``model.c``, which passes the
const tensor descriptors it was generated from (the shapes, dtypes and 64-byte aligned arena
offsets the kernels were compiled for). Dropping them leaves each wrapper a few loads and a call.

Only asserts are removed, so a kernel whose own body asserts something about the data it reads
(an index in range, say) keeps every check: such a module is compiled as before.
"""
from __future__ import annotations

import re

import tvm

# how TVMScript prints an AssertStmt
_ASSERT = re.compile(r"^\s*assert\b", re.MULTILINE)


def body_asserts(kernels: tvm.IRModule) -> list[str]:
    """The kernels of ``kernels`` whose scheduled bodies hold an assert of their own (before the
    packed API adds its argument checks)."""
    return sorted(gv.name_hint for gv, func in kernels.functions.items()
                  if isinstance(func, tvm.tirx.PrimFunc) and _ASSERT.search(func.script()))


def compile_without_argument_checks(kernels: tvm.IRModule, target: tvm.target.Target):
    """``tvm.compile(kernels, target)`` with the packed wrappers' argument checks left out, unless a
    kernel's body asserts something itself (then with every check, as ``tvm.compile`` does).

    Args:
        kernels: scheduled PrimFuncs, called only by a generated ``model.c`` with the tensors they
            were compiled for.
        target: the TVM target.

    Returns:
        The compiled executable.
    """
    current = tvm.transform.PassContext.current()
    config = dict(current.config)
    config["tirx.disable_assert"] = not body_asserts(kernels)
    with tvm.transform.PassContext(opt_level=current.opt_level, config=config,
                                   required_pass=list(current.required_pass),
                                   disabled_pass=list(current.disabled_pass)):
        return tvm.compile(kernels, target=target)
