"""Poolings merged into the kernel computing their input (training bundles on a microcontroller):
a 2x2 max-pool joins its convolution's kernel, a global pooling does not; results as numpy's."""
from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from schedules.pipeline import fusing_passes


def _conv_pool_module(global_pool: bool) -> tvm.IRModule:
    """main(x, w) = pool(relu(conv2d(x, w))) in NHWC: 2x2 max-pool, or a global average pool."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 10, 10, 3), "float32"))
    w = relax.Var("w", relax.TensorType((4, 3, 3, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            conv = bb.emit(relax.op.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI"))
            relu = bb.emit(relax.op.nn.relu(conv))
            if global_pool:
                pooled = relax.op.nn.avg_pool2d(relu, pool_size=(8, 8), strides=(8, 8), layout="NHWC")
            else:
                pooled = relax.op.nn.max_pool2d(relu, pool_size=(2, 2), strides=(2, 2), layout="NHWC")
            out = bb.emit_output(pooled)
        bb.emit_func_output(out)
    return bb.get()


def _kernel_names(mod: tvm.IRModule) -> list[str]:
    return sorted(g.name_hint for g, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc))


def test_a_max_pool_joins_its_convolution_and_gives_numpys_result():
    lowered = fusing_passes(merge_pools=True)(_conv_pool_module(False))
    names = _kernel_names(lowered)
    assert len(names) == 1 and "group_max_pool2d" in names[0], names
    assert len(_kernel_names(fusing_passes()(_conv_pool_module(False)))) == 2

    executable = tvm.compile(lowered, target="llvm")
    machine = relax.VirtualMachine(executable, tvm.cpu())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 10, 10, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = machine["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()
    conv = sum(x[:, i:i + 8, j:j + 8, :] @ w[:, i, j, :].T for i in range(3) for j in range(3))
    expected = np.maximum(conv, 0).reshape(2, 4, 2, 4, 2, 4).max(axis=(2, 4))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_a_global_pooling_is_left_alone():
    names = _kernel_names(fusing_passes(merge_pools=True)(_conv_pool_module(True)))
    assert len(names) == 2 and not any("_group_" in name for name in names), names  # two kernels
