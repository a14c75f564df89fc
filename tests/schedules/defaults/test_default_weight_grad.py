"""Weight gradients of ungrouped convolutions as one channels-last kernel (``schedules/defaults/weight_grad.py``),
on pinned AVX2 and AVX-512 targets, against PyTorch autograd.

The per-tap products of ``relay_frontend/gradients.py`` (transposes, pads, slices, one matmul per tap,
a concatenation) must be gone: one ``weight_grad`` kernel computes ``dw`` and no matmul is left. Operands
larger than the caches take the chunked form (a small L2 pinned makes small shapes do).
"""
import numpy as np
import pytest
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, lowered_kernels, rules_used, t

from schedules.defaults import caches

# (batch, in, out, height, width, kernel, stride, padding, relu before the convolution)
CASES = {
    # ResNet's strided 3x3 after a relu (a channels-last twin feeds the kernel), channels of whole vectors
    "3x3_stride2_pad1_channels_last": (2, 16, 32, 9, 9, 3, 2, 1, True),
    # LeNet's first layer: one input channel, 6 outputs (under a vector), 5x5 taps, no padding
    "5x5_one_channel": (2, 1, 6, 12, 12, 5, 1, 0, False),
    # channel counts that divide no tile: 3 in (the stem's), 20 out
    "odd_channels_7x7_stride2_pad3": (1, 3, 20, 15, 13, 7, 2, 3, False),
}


class Objective(nn.Cell):
    """``sum(conv(relu?(x)) * r)``: the convolution's weight gradient for a fixed random ``r``."""

    def __init__(self, conv, r, relu: bool):
        super().__init__()
        self.conv = conv
        self.relu = nn.ReLU() if relu else None
        self.r = Tensor(r)

    def construct(self, x):
        if self.relu is not None:
            x = self.relu(x)
        return (self.conv(x) * self.r).sum()


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_weight_gradient_kernel_matches_torch(case, cpu_target):
    n, cin, cout, h, w, k, stride, pad, relu = CASES[case]
    rng = np.random.default_rng(len(case))
    x = rng.standard_normal((n, cin, h, w)).astype(np.float32)
    weight = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(k * k * cin)).astype(np.float32)
    conv = nn.Conv2d(cin, cout, k, stride, pad_mode="pad", padding=pad, weight_init=Tensor(weight))
    wt = t(weight).requires_grad_()
    xin = F.relu(t(x)) if relu else t(x)
    y = F.conv2d(xin, wt, None, stride, pad)
    r = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (y * t(r)).sum().backward()

    grad_fn = ops.grad(Objective(conv, r, relu), None, conv.trainable_params())
    (dw,) = grad_fn(Tensor(x))
    assert_close(dw, wt.grad)
    rules = rules_used(lambda v: grad_fn(v), [("x", x.shape, "float32")])
    assert [rules[name] for name in rules if "wgrad" in name] == ["weight_grad"], rules
    assert not [name for name in rules if "matmul" in name or "concat" in name], rules


# operands over CHUNKED_MIN_L2S x L2 take the chunked form; the L2 pinned here makes these small ones do
CHUNKED_CASES = {
    # (batch, in, out, height, width, kernel, stride, padding, relu, L2 KB): several chunks of one row
    "3x3_whole_vectors": (2, 8, 32, 24, 24, 3, 1, 1, True, 16),
    # the stem's shape class: 3 input channels, 20 outputs (no whole vector), 7x7 taps at stride 2
    "7x7_stride2_odd_channels": (1, 3, 20, 30, 30, 7, 2, 3, False, 4),
}


@pytest.mark.parametrize("case", list(CHUNKED_CASES), ids=list(CHUNKED_CASES))
def test_chunked_weight_gradient_matches_torch(case, cpu_target, monkeypatch):
    *shape, l2_kb = CHUNKED_CASES[case]
    monkeypatch.setenv(caches.L2_ENV, str(l2_kb))
    CASES[case] = tuple(shape)
    try:
        test_weight_gradient_kernel_matches_torch(case, cpu_target)
        n, cin, cout, h, w, k, stride, pad, relu = shape
        conv = nn.Conv2d(cin, cout, k, stride, pad_mode="pad", padding=pad)
        r = np.ones((n, cout, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1), np.float32)
        grad_fn = ops.grad(Objective(conv, r, relu), None, conv.trainable_params())
        lowered = lowered_kernels(lambda v: grad_fn(v), [("x", (n, cin, h, w), "float32")])
    finally:
        del CASES[case]
    wgrad = [text for name, text in lowered.items() if "wgrad" in name]
    assert len(wgrad) == 1 and "_rf" in wgrad[0], list(lowered)  # the per-chunk register tile
