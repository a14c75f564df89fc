"""The memory plan: buffers with overlapping lifetimes never share bytes; reuse makes the arena small. A
MixNet-structured net plans (a tensor read twice by one fused group is not merged away) and matches PyTorch."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from schedules.plan import ALIGNMENT, KernelPlan, Value, assign_offsets, place_step_scratch


def _chain(sizes):
    plan = KernelPlan()
    values = [Value("input", 0, (4,), "float32")]
    for i, size in enumerate(sizes):
        plan.buffers.append(Value("buffer", i, (size,), "float32"))
        plan.steps.append({"kernel": f"k{i}", "args": [values[-1], plan.buffers[-1]]})
        values.append(plan.buffers[-1])
    return plan


def test_chain_reuses_memory():
    plan = _chain([1000, 2000, 1000, 2000, 1000])
    offsets, arena, total = assign_offsets(plan, exclude=set())
    assert total == sum(-(-s * 4 // ALIGNMENT) * ALIGNMENT for s in [1000, 2000, 1000, 2000, 1000])
    aligned = lambda n: -(-n // ALIGNMENT) * ALIGNMENT  # noqa: E731
    assert arena == aligned(4000) + aligned(8000)  # only two consecutive buffers are ever alive together
    assert all(o % ALIGNMENT == 0 for o in offsets.values())


def test_live_buffers_never_overlap():
    rng = np.random.default_rng(0)
    plan = KernelPlan()
    for i in range(30):
        plan.buffers.append(Value("buffer", i, (int(rng.integers(1, 500)),), "float32"))
    for step in range(40):
        args = [plan.buffers[int(j)] for j in rng.choice(30, size=3, replace=False)]
        plan.steps.append({"kernel": f"k{step}", "args": args})
    offsets, arena, _ = assign_offsets(plan, exclude={0})
    assert 0 not in offsets
    spans = {}
    for index, step in enumerate(plan.steps):
        for arg in step["args"]:
            first, last = spans.get(arg.index, (index, index))
            spans[arg.index] = (min(first, index), max(last, index))
    for a in offsets:
        for b in offsets:
            if a >= b:
                continue
            live_together = not (spans[a][1] < spans[b][0] or spans[b][1] < spans[a][0])
            a_end = offsets[a] + plan.buffers[a].shape[0] * 4
            b_end = offsets[b] + plan.buffers[b].shape[0] * 4
            if live_together:
                assert a_end <= offsets[b] or b_end <= offsets[a], (a, b)
            assert max(a_end, b_end) <= arena


# -- a MixNet-structured net (mindcv's mixnet_s at 224x224 failed to plan: KeyError in extract) -------
class _MixStemBlock(nn.Cell):
    """mixnet_s's first layers, channels widened so that the stem's output passes the merge threshold at
    96x96: stem 3x3/2 + BN + ReLU; block 0 with a residual (depthwise 3x3 + BN + ReLU, 1x1 + BN, + input);
    block 1 as mixnet_s's fourth: grouped 1x1 expansion (split + concat) + BN + swish, mixed stride-2
    depthwise 3/5/7 (split, concat) + BN + swish, squeeze-excite, 1x1 projection + BN."""

    def __init__(self, channels=64, expanded=96):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, 2, pad_mode="pad", padding=1)
        self.bn0 = nn.BatchNorm2d(channels)
        self.dw0 = nn.Conv2d(channels, channels, 3, pad_mode="pad", padding=1, group=channels)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pw0 = nn.Conv2d(channels, channels, 1)
        self.bn2 = nn.BatchNorm2d(channels)
        half = channels // 2
        self.expand = nn.CellList([nn.Conv2d(half, expanded // 2, 1) for _ in range(2)])
        self.bn3 = nn.BatchNorm2d(expanded)
        self.split = [expanded // 3] * 3
        self.mixed = nn.CellList([nn.Conv2d(c, c, k, 2, pad_mode="pad", padding=k // 2, group=c)
                                  for c, k in zip(self.split, (3, 5, 7))])
        self.bn4 = nn.BatchNorm2d(expanded)
        self.se_reduce = nn.Conv2d(expanded, 8, 1, has_bias=True)
        self.se_expand = nn.Conv2d(8, expanded, 1, has_bias=True)
        self.project = nn.Conv2d(expanded, 24, 1)
        self.bn5 = nn.BatchNorm2d(24)

    @staticmethod
    def _swish(x):
        return x * ops.sigmoid(x)

    def construct(self, x):
        s = ops.relu(self.bn0(self.stem(x)))
        y = s + self.bn2(self.pw0(ops.relu(self.bn1(self.dw0(s)))))
        half = y.shape[1] // 2
        e = ops.concat([self.expand[0](y[:, :half]), self.expand[1](y[:, half:])], axis=1)
        e = self._swish(self.bn3(e))
        parts, start = [], 0
        for conv, width in zip(self.mixed, self.split):
            parts.append(conv(e[:, start:start + width]))
            start += width
        d = self._swish(self.bn4(ops.concat(parts, axis=1)))
        gate = ops.sigmoid(self.se_expand(ops.relu(self.se_reduce(ops.mean(d, axis=(2, 3), keep_dims=True)))))
        return self.bn5(self.project(d * gate))


def _mix_reference(net, x):
    p = {name: torch.from_numpy(param.asnumpy()) for name, param in net.parameters_and_names()}
    bn = lambda v, n: F.batch_norm(v, p[f"{n}.moving_mean"], p[f"{n}.moving_variance"], p[f"{n}.gamma"],  # noqa: E731
                                   p[f"{n}.beta"], False, 0.0, 1e-5)
    swish = lambda v: v * torch.sigmoid(v)  # noqa: E731
    s = F.relu(bn(F.conv2d(torch.from_numpy(x), p["stem.weight"], None, 2, 1), "bn0"))
    y = s + bn(F.conv2d(F.relu(bn(F.conv2d(s, p["dw0.weight"], None, 1, 1, 1, s.shape[1]), "bn1")),
                        p["pw0.weight"]), "bn2")
    half = y.shape[1] // 2
    e = torch.cat([F.conv2d(y[:, :half], p["expand.0.weight"]), F.conv2d(y[:, half:], p["expand.1.weight"])], 1)
    e = swish(bn(e, "bn3"))
    parts = torch.split(e, net.split, 1)
    d = torch.cat([F.conv2d(part, p[f"mixed.{i}.weight"], None, 2, k // 2, 1, part.shape[1])
                   for i, (part, k) in enumerate(zip(parts, (3, 5, 7)))], 1)
    d = swish(bn(d, "bn4"))
    pooled = d.mean((2, 3), keepdim=True)
    gate = torch.sigmoid(F.conv2d(F.relu(F.conv2d(pooled, p["se_reduce.weight"], p["se_reduce.bias"])),
                                  p["se_expand.weight"], p["se_expand.bias"]))
    return bn(F.conv2d(d * gate, p["project.weight"]), "bn5")


def test_stem_output_read_twice_plans_and_matches_torch():
    """The stem's output (48x48x64 floats, over the merge threshold) feeds block 0's depthwise
    convolution and its residual add, both in one fused group: it must not be merged away into that
    group (the plan then referred to a tensor no kernel wrote: KeyError)."""
    net = _MixStemBlock()
    rng = np.random.default_rng(3)
    for name, param in net.parameters_and_names():
        value = rng.standard_normal(param.shape) * 0.3
        if "variance" in name:
            value = np.abs(value) + 0.5
        param.set_data(value.astype(np.float32))
    net.set_train(False)
    x = rng.standard_normal((1, 3, 96, 96)).astype(np.float32)
    got = net(Tensor(x)).asnumpy()
    want = _mix_reference(net, x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_step_scratch_goes_beside_the_buffers_live_during_its_step():
    # buffer A [0, 128) lives in steps 0-1, buffer B [128, 192) in steps 1-2 (hand-placed)
    buffers = [(0, 128, 0, 1), (128, 64, 1, 2)]
    offsets, arena = place_step_scratch(buffers, [64, 100, 0, 500])
    # step 0: after A; step 1: after B, 100 -> 128 bytes; step 2: none; step 3: nothing live -> 0
    assert offsets == [128, 192, 0, 0]
    assert arena == 512  # step 3's 500 bytes rounded to 512 outgrow 192 + 128
