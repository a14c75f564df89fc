"""Gradients of 2-D convolutions (the training step's backward pass) on the default schedules, against PyTorch.

The input gradient is a stride-1 convolution (for strides > 1: one per output phase with the kernel
taps that reach it, interleaved; the zero-inserted output gradient where dilation > 1) and the weight gradient one matmul per kernel offset (``relay_frontend/gradients.py``), which the
default schedules turn into one channels-last kernel (``schedules/defaults/weight_grad.py``) for
ungrouped convolutions: all must run on scheduled kernels (``aotnn_conv2d`` / Winograd, the
weight-gradient kernel), none on the unscheduled legalized ``conv2d_transpose``.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, rules_used, t

# (batch, in, out, height, width, kernel, stride, padding (top, bottom, left, right), dilation, groups)
CASES = {
    "3x3_winograd_input_grad": (2, 8, 16, 12, 12, 3, 1, (1, 1, 1, 1), 1, 1),
    "7x7_stride2_stem": (2, 3, 16, 20, 20, 7, 2, (3, 3, 3, 3), 1, 1),
    "1x1_stride2": (2, 16, 32, 10, 10, 1, 2, (0, 0, 0, 0), 1, 1),
    "1x1_stride3_padded": (1, 4, 6, 10, 8, 1, 3, (1, 0, 2, 1), 1, 1),
    "3x2_stride_dilation_asymmetric": (2, 4, 6, 11, 9, (3, 2), (2, 3), (0, 2, 1, 0), (2, 1), 1),
    "grouped_stride2": (1, 8, 12, 9, 9, 3, 2, (1, 1, 1, 1), 1, 4),
    "3x3_stride2_even": (2, 8, 16, 12, 12, 3, 2, (1, 1, 1, 1), 1, 1),
    "3x3_stride2_odd_asymmetric": (1, 4, 8, 11, 10, 3, 2, (0, 2, 1, 0), 1, 1),
    "2x3_stride3_uncovered_phases": (1, 4, 6, 13, 11, (2, 3), 3, (1, 0, 0, 1), 1, 1),
    "5x5_stride_2x3": (1, 3, 8, 14, 15, 5, (2, 3), (2, 2, 1, 3), 1, 1),
    "3x3_stride2_one_row": (1, 2, 4, 1, 5, 3, 2, (1, 1, 1, 1), 1, 1),  # phase 1 of the rows holds no pixel
}


class Objective(nn.Cell):
    """``sum(conv(x) * r)`` for a fixed random ``r``: its gradients are the convolution's for ``r``."""

    def __init__(self, conv, r):
        super().__init__()
        self.conv = conv
        self.r = Tensor(r)

    def construct(self, x):
        return (self.conv(x) * self.r).sum()


def _case(name):
    n, cin, cout, h, w, k, stride, pad, dilation, groups = CASES[name]
    k = (k, k) if isinstance(k, int) else k
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal((n, cin, h, w)).astype(np.float32)
    weight = (rng.standard_normal((cout, cin // groups, *k)) / np.sqrt(k[0] * k[1] * cin / groups)).astype(np.float32)
    conv = nn.Conv2d(cin, cout, k, stride, pad_mode="pad", padding=pad, dilation=dilation, group=groups,
                     weight_init=Tensor(weight))
    xt, wt = t(x).requires_grad_(), t(weight).requires_grad_()
    top, bottom, left, right = pad
    y = F.conv2d(F.pad(xt, (left, right, top, bottom)), wt, None, stride, 0, dilation, groups)
    r = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (y * t(r)).sum().backward()
    return Objective(conv, r), conv, x, xt.grad, wt.grad


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_conv2d_gradients_match_torch(case):
    objective, conv, x, want_dx, want_dw = _case(case)
    grad_fn = ops.grad(objective, 0, conv.trainable_params())
    dx, (dw,) = grad_fn(Tensor(x))
    assert_close(dx, want_dx)
    assert_close(dw, want_dw)
    rules = rules_used(lambda v: grad_fn(v), [("x", x.shape, "float32")])
    assert not [name for name in rules if "conv2d_transpose" in name], rules
    convs = [name for name in rules if "conv2d" in name and "pack" not in name and "wgrad" not in name]
    assert convs and all(rules[name] in ("conv2d", "winograd") for name in convs), rules
    k, stride, dilation = CASES[case][5], CASES[case][6], CASES[case][8]
    if k not in (1, (1, 1)) and stride not in (1, (1, 1)) and dilation == 1:  # one conv per phase, interleaved
        assert [rules[name] for name in rules if "phase_interleave" in name] == ["elementwise"], rules
    if CASES[case][-1] == 1:  # ungrouped: the weight gradient is one kernel, no per-tap products
        assert [rules[name] for name in rules if "wgrad" in name] == ["weight_grad"], rules
        assert not [name for name in rules if "matmul" in name], rules
