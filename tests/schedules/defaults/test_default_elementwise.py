"""Injective kernels under the default CPU schedules: transposes tiled in SIMD-width squares."""
import numpy as np
import pytest
from tvm import te
from tvm.s_tir import Schedule

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, randomize, rules_used
from schedules.defaults.cpu import CpuInfo
from schedules.defaults.elementwise import schedule_transpose

AVX2 = CpuInfo(256, 16, 2)


class ConvFeatures(nn.Cell):
    """A convolution whose NHWC result goes back to NCHW for the caller (a transpose kernel)."""

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, pad_mode="pad", padding=1, has_bias=True)

    def construct(self, x):
        return ops.relu(self.conv(x))


@pytest.mark.parametrize("channels, size", [(16, 24), (12, 10)], ids=["tiled", "channels_not_a_vector"])
def test_feature_map_returned_in_nchw_matches_numpy(channels, size):
    import torch
    net = ConvFeatures(channels)
    randomize(net)
    x = np.random.default_rng(0).standard_normal((2, 3, size, size)).astype(np.float32)
    weight, bias = net.conv.weight.asnumpy(), net.conv.bias.asnumpy()
    want = torch.relu(torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(weight),
                                                 torch.from_numpy(bias), padding=1))
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    assert any("transpose" in name and rule == "elementwise" for name, rule in rules.items()), rules


@pytest.mark.parametrize("shape, axes", [((32, 48), (1, 0)), ((2, 8, 16, 24), (0, 3, 1, 2)), ((2, 16, 8, 8), (0, 2, 3, 1))])
def test_transposes_run_tiled_and_match_numpy(shape, axes):
    import tvm
    from schedules.target import resolve, to_tvm
    x = te.placeholder(shape, "float32", name="x")
    out_shape = tuple(shape[a] for a in axes)
    y = te.compute(out_shape, lambda *i: x[tuple(i[axes.index(d)] for d in range(len(shape)))], name="T_transpose")
    sch = Schedule(te.create_prim_func([x, y]))
    assert schedule_transpose(sch, sch.get_sblock("T_transpose"), AVX2)
    lib = tvm.compile(tvm.IRModule({"main": sch.mod["main"].with_attr("global_symbol", "main")}),
                      target=to_tvm(resolve(None)))
    data = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    out = tvm.runtime.tensor(np.zeros(out_shape, np.float32))
    lib["main"](tvm.runtime.tensor(data), out)
    np.testing.assert_array_equal(out.numpy(), data.transpose(axes))


def test_only_transposes_whose_axes_divide_are_tiled():
    x = te.placeholder((4, 20, 8), "float32", name="x")
    added = te.compute((4, 20, 8), lambda a, b, c: x[a, b, c] + 1.0, name="add")
    odd = te.compute((4, 8, 20), lambda a, c, b: x[a, b, c], name="T_transpose")  # 20 is not 8 lanes
    for compute in (added, odd):
        sch = Schedule(te.create_prim_func([x, compute]))
        assert not schedule_transpose(sch, sch.get_sblock(compute.op.name), AVX2)
