"""int8 convolutions on AArch64 (``int8_neon``): packed weights, ``sdot`` with +dotprod, ``smull``/``sadalp``
on plain NEON; bundles run under qemu-aarch64, bit-exact against numpy integer arithmetic written from the
formulas (``conv_ref``/``requantize_ref`` of test_int8_conv)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest
import tvm

import aotnn
from aotnn import Tensor, nn, ops
from aotnn.common.parameter import Parameter
from aotnn.jit.compiled import capture_function
from schedules import pipeline
from schedules.build import _kernel_module
import schedules.defaults as defaults

from test_int8_conv import conv_ref, requantize_ref

RNG = np.random.default_rng(2026)
MATTRS = {"neon": ["+neon"], "dotprod": ["+neon", "+dotprod"]}
# the instructions each build's convolutions are made of
INSTRUCTIONS = {"neon": ("smull", "sadalp"), "dotprod": ("sdot",)}
HAVE_CROSS = all(shutil.which(tool) for tool in ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-objdump",
                                                 "qemu-aarch64"))


def aarch64(kind: str) -> dict:
    return {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": MATTRS[kind]}


class _Chain(nn.Cell):
    """uint8 conv -> requantize -> strided conv (uint8 input: the -128 shift), and a 1x1 conv of an int8 input."""

    def __init__(self, w1, bias, multiplier, w2, w3):
        super().__init__()
        self.w1, self.w2, self.w3 = (Parameter(Tensor(v), name=n) for v, n in ((w1, "w1"), (w2, "w2"), (w3, "w3")))
        self.bias, self.multiplier = Parameter(Tensor(bias), name="bias"), Parameter(Tensor(multiplier), name="m")

    def construct(self, x, s):
        y = ops.int8_requantize(ops.int8_conv2d(x, self.w1, 3, None, 1, "pad", 1, 1, 1), self.bias, self.multiplier,
                                5, 5, 255, "uint8")
        return y, ops.int8_conv2d(y, self.w2, 5, None, 2, "pad", 1, 1, 1), ops.int8_conv2d(s, self.w3, -4)


def _operands():
    """Channel counts off multiples of 4 and 16, output widths off whole tiles; weights over all of int8."""
    x = RNG.integers(0, 256, (1, 6, 11, 11)).astype(np.uint8)
    s = RNG.integers(-128, 128, (1, 7, 5, 9)).astype(np.int8)
    w1 = RNG.integers(-128, 128, (20, 6, 3, 3)).astype(np.int8)
    w2 = RNG.integers(-128, 128, (9, 20, 3, 3)).astype(np.int8)
    w3 = RNG.integers(-128, 128, (33, 7, 1, 1)).astype(np.int8)
    bias = RNG.integers(-3000, 3000, 20).astype(np.int32)
    multiplier = RNG.uniform(2e-4, 1e-3, 20).astype(np.float32)
    return (x, s), (w1, bias, multiplier, w2, w3)


def test_cpu_info_tells_aarch64_and_dotprod():
    plain = defaults.cpu_info(tvm.target.Target(aarch64("neon")))
    dot = defaults.cpu_info(tvm.target.Target(aarch64("dotprod")))
    assert (plain.aarch64, plain.dotprod) == (True, False)
    assert (dot.aarch64, dot.dotprod) == (True, True)
    armv7 = defaults.cpu_info(tvm.target.Target({"kind": "llvm", "mtriple": "armv7a-linux-gnueabihf",
                                                 "mattr": ["+neon"]}))
    assert not armv7.aarch64


@pytest.mark.parametrize("kind", list(MATTRS))
def test_int8_convolutions_take_the_int8_neon_rule(kind):
    (x, s), params = _operands()
    mod, _, _, _ = capture_function(_Chain(*params), [("x", x.shape, "uint8"), ("s", s.shape, "int8")])
    target = tvm.target.Target(aarch64(kind))
    kernels = _kernel_module(pipeline.lower_to_kernels(mod, target))
    cpu = defaults.cpu_info(target)
    rules = {gv.name_hint: defaults.schedule_with_rule(func, cpu, target)[1] for gv, func in kernels.functions.items()}
    convs = {name: rule for name, rule in rules.items() if "int8_neon_conv2d" in name}
    assert len(convs) == 3 and set(convs.values()) == {"int8_neon"}, rules


@pytest.mark.skipif(not HAVE_CROSS, reason="needs gcc-aarch64-linux-gnu (with binutils) and qemu-user")
@pytest.mark.parametrize("kind", list(MATTRS))
def test_int8_conv2d_on_aarch64_is_exact(tmp_path, kind):
    (x, s), params = _operands()
    w1, bias, multiplier, w2, w3 = params
    path = aotnn.export(_Chain(*params), Tensor(x), Tensor(s), file_name=str(tmp_path / kind), target=aarch64(kind))
    subprocess.run(["make", "-s", "-j2"], cwd=path, check=True, capture_output=True)
    x.tofile(os.path.join(path, "input0.bin"))
    s.tofile(os.path.join(path, "input1.bin"))
    done = subprocess.run(["qemu-aarch64", "./model", "input0.bin", "input1.bin"], cwd=path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    y_ref = requantize_ref(conv_ref(x, w1, 3, 1, 1), bias, multiplier, 5, 5, 255)
    assert 0.2 < np.mean((y_ref > 5) & (y_ref < 255))  # the clamp does not hide most of the values
    wants = (y_ref, conv_ref(y_ref, w2, 5, 2, 1), conv_ref(s, w3, -4, 1, 0))
    for k, want in enumerate(wants):
        out = np.fromfile(os.path.join(path, f"output{k}.bin"), dtype=want.dtype if k == 0 else np.int32)
        np.testing.assert_array_equal(out.reshape(want.shape), want, err_msg=f"output {k}")
    listing = subprocess.run(["aarch64-linux-gnu-objdump", "-d", os.path.join(path, "model")], check=True,
                             capture_output=True, text=True).stdout
    for instruction in INSTRUCTIONS[kind]:
        assert re.search(rf"\s{instruction}\s", listing), f"no {instruction} in the {kind} build"
    if kind == "neon":
        assert not re.search(r"\ssdot\s", listing)
