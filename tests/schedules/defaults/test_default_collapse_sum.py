"""Per-channel gradient sums (batch-norm scale and shift, a broadcast bias) of channels-last maps:
two channels-last sums on the reduction rule (``schedules/defaults/collapse_sum.py``), against PyTorch."""
import numpy as np
import torch
import torch.nn.functional as F

from aotnn import Parameter, Tensor, nn, ops
from default_schedule_helpers import assert_close, rules_used, t

N, CIN, C, H, W = 2, 3, 16, 9, 7


class ConvBatchNormScale(nn.Cell):
    """``sum(relu(bn(conv(x)) * scale + bias)^2 * r)``: the batch norm's gamma and beta, the scale and
    the bias get ``collapse_sum_to`` gradients of channels-last maps (squared, so that the gradient
    reaching the relu is itself channels-last, as in a network)."""

    def __init__(self, weight, scale, bias, r):
        super().__init__()
        self.conv = nn.Conv2d(CIN, C, 3, pad_mode="pad", padding=1, has_bias=False, weight_init=Tensor(weight))
        self.scale = Parameter(Tensor(scale), name="scale")
        self.bias = Parameter(Tensor(bias), name="bias")
        self.bn = nn.BatchNorm2d(C)
        self.relu = nn.ReLU()
        self.r = Tensor(r)

    def construct(self, x):
        y = self.relu(self.bn(self.conv(x)) * self.scale + self.bias)
        return (y * y * self.r).sum()


def _case():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, CIN, H, W)).astype(np.float32)
    weight = (rng.standard_normal((C, CIN, 3, 3)) / np.sqrt(9 * CIN)).astype(np.float32)
    scale = (1 + 0.5 * rng.standard_normal((1, C, 1, 1))).astype(np.float32)
    bias = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
    r = rng.standard_normal((N, C, H, W)).astype(np.float32)
    net = ConvBatchNormScale(weight, scale, bias, r)
    net.set_train(True)
    gamma = (1 + 0.5 * rng.standard_normal(C)).astype(np.float32)
    beta = rng.standard_normal(C).astype(np.float32)
    net.bn.gamma.set_data(Tensor(gamma))
    net.bn.beta.set_data(Tensor(beta))
    ts, tb, tg, tbeta = (t(a).requires_grad_() for a in (scale, bias, gamma, beta))
    y = F.batch_norm(F.conv2d(t(x), t(weight), None, 1, 1), None, None, tg, tbeta, training=True, eps=1e-5)
    y = F.relu(y * ts + tb)
    (y * y * t(r)).sum().backward()
    return net, x, {"scale": ts.grad, "bias": tb.grad, "gamma": tg.grad, "beta": tbeta.grad}


def test_per_channel_gradient_sums_match_torch_on_the_reduction_rule(cpu_target):
    net, x, want = _case()
    params = [net.scale, net.bias, net.bn.gamma, net.bn.beta]
    grad_fn = ops.grad(net, None, params)
    got = grad_fn(Tensor(x))
    for name, value in zip(("scale", "bias", "gamma", "beta"), got):
        assert_close(np.asarray(value.asnumpy()).reshape(-1), want[name].reshape(-1), tol=1e-4)
    rules = rules_used(lambda v: grad_fn(v), [("x", x.shape, "float32")])
    assert not [name for name in rules if "collapse_sum" in name], rules
    assert not [name for name, rule in rules.items() if rule in ("fallback", None) and "sum" in name], rules
