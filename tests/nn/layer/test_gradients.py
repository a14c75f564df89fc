"""Compiled gradients of every differentiable layer against central finite differences.

Each case differentiates a random linear functional of the layer's outputs with respect to the
float inputs and every trainable parameter (``ops.value_and_grad``), and compares a few sampled
coordinates with finite differences of the compiled forward, in float64 where the layer takes it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn, ops
from aotnn.common import dtype as mstype

from .gradcheck_util import check_gradients, ids, normal, spread


class _Each(nn.Cell):
    """Applies every layer to the same input (one compiled graph for a family of cheap layers)."""

    def __init__(self, *layers):
        super().__init__()
        self.layers = nn.CellList(list(layers))

    def construct(self, x):
        return tuple(layer(x) for layer in self.layers)


# layers documented for float16/float32 only: finite differences in float32 (step 1e-2, looser tolerance)
F32 = {"dtype": "float32"}


class _RuleOps(nn.Cell):
    """Ops that TVM's autodiff does not know (our rules): squeeze, tile, prod."""

    def construct(self, x):
        return (ops.tile(ops.squeeze(x, 1), (2, 1, 3)), ops.tile(x, (2, 1, 1, 1, 2)), ops.prod(x, (0, 3)),
                ops.prod(x))


class _PiecewiseOps(nn.Cell):
    """x mod y (gradients 1 and -floor(x / y)) and ops that are constant almost everywhere."""

    def construct(self, x, y):
        return x % y, ops.round(x) + ops.sign(x) + ops.ceil(x) + ops.floor_div(x, y) + x


def _with_a_zero(x):
    x = x.copy()
    x.flat[4] = 0.0  # prod's gradient is exact at zeros (no division)
    return x


# (id, layer factory, inputs factory, options)
ACTIVATIONS = [
    ("smooth:CELU,ELU,FastGelu,GELU,LogSigmoid,Sigmoid,Tanh,SiLU,Tanhshrink,Softsign,Mish",
     lambda: _Each(nn.CELU(0.7), nn.ELU(1.0), nn.FastGelu(), nn.GELU(), nn.GELU(approximate=False), nn.LogSigmoid(),
                   nn.Sigmoid(), nn.Tanh(), nn.SiLU(), nn.Tanhshrink(), nn.Softsign(), nn.Mish()),
     lambda: [normal(2, 5)], {"samples": 5}),
    # inputs away from every kink (0, +-0.3, 0.4, +-1, 1.2, +-3, 6)
    ("piecewise:HShrink,HSigmoid,HSwish,LeakyReLU,ReLU,ReLU6,SoftShrink,Hardtanh,RReLU,Threshold",
     lambda: _Each(nn.HShrink(0.3), nn.HSigmoid(), nn.HSwish(), nn.LeakyReLU(0.2), nn.ReLU(), nn.ReLU6(),
                   nn.SoftShrink(0.3), nn.Hardtanh(-1.0, 1.2), nn.RReLU(0.25, 0.25), nn.Threshold(0.4, -2.0)),
     lambda: [spread(2, 10, high=8.0)], {"samples": 8}),
    ("softmaxes:LogSoftmax,Softmax,Softmin,Softmax2d",
     lambda: _Each(nn.LogSoftmax(axis=0), nn.Softmax(), nn.Softmin(axis=1), nn.Softmax2d()),
     lambda: [normal(2, 3, 2, 2)], {"samples": 5}),
    ("PReLU", lambda: nn.PReLU(3, 0.3), lambda: [spread(2, 3, 4)], {}),
]

BASIC = [
    ("Dense", lambda: nn.Dense(4, 3, bias_init="normal"), lambda: [normal(2, 4)], {}),
    ("Dense-relu-nobias", lambda: nn.Dense(4, 3, has_bias=False, activation="relu"), lambda: [normal(2, 4)], {}),
    ("DenseBnAct", lambda: nn.DenseBnAct(4, 3, has_bn=True, activation="tanh"), lambda: [normal(5, 4)],
     {"train": True}),
    ("Flatten", nn.Flatten, lambda: [normal(2, 3, 2)], {}),
    ("Dropout-eval", lambda: nn.Dropout(p=0.5), lambda: [normal(2, 5)], F32),
    ("TimeDistributed", lambda: nn.TimeDistributed(nn.Dense(3, 2, bias_init="normal"), time_axis=1),
     lambda: [normal(2, 4, 3)], {}),
]

EMBEDDINGS = [
    ("Embedding", lambda: nn.Embedding(7, 3), lambda: [ids(7, 2, 4)], {}),
    ("Embedding-onehot", lambda: nn.Embedding(7, 3, use_one_hot=True), lambda: [ids(7, 2, 4)], {}),
    ("Embedding-padding", lambda: nn.Embedding(7, 3, padding_idx=1), lambda: [ids(7, 2, 4)], {}),
    ("EmbeddingLookup", lambda: nn.EmbeddingLookup(6, 3), lambda: [ids(6, 2, 3)], {}),
    ("MultiFieldEmbeddingLookup", lambda: nn.MultiFieldEmbeddingLookup(6, 3, 2),
     lambda: [ids(6, 2, 4), normal(2, 4), ids(2, 2, 4, seed=5)], {**F32, "wrt_inputs": (1,)}),
]

UTILITY_MATH = [
    ("ClipByNorm", lambda: nn.ClipByNorm(axis=1), lambda: [normal(3, 4), np.array(1.5)],
     {**F32, "wrt_inputs": (0,)}),
    ("Norm", lambda: nn.Norm(axis=1), lambda: [normal(3, 4)], F32),
    ("Roll", lambda: nn.Roll(shift=(1, -2), axis=(0, 1)), lambda: [normal(3, 4)], {}),
    ("Tril", nn.Tril, lambda: [normal(3, 4)], {"kwargs": {"k": 1}}),
    ("Triu", nn.Triu, lambda: [normal(4, 3)], {}),
    ("L1Regularizer", lambda: nn.L1Regularizer(0.3), lambda: [spread(3, 4)], {}),
    ("ReduceLogSumExp", lambda: nn.ReduceLogSumExp(1, keep_dims=True), lambda: [normal(3, 4)], F32),
    # positive integers included: lgamma's unused reflection branch must not poison the gradient there
    ("LGamma", nn.LGamma, lambda: [np.array([[1.0, 2.0, 3.0, -0.3], [0.4, 1.7, 2.6, -1.6]])],
     {**F32, "samples": 8}),
    ("DiGamma", nn.DiGamma, lambda: [np.array([[1.0, 2.0, 3.0, 0.7], [1.3, 2.5, 3.6, -0.4]])],
     {**F32, "samples": 8}),
    ("LBeta", nn.LBeta, lambda: [np.abs(spread(2, 3, low=0.5, high=3)), np.abs(spread(2, 3, seed=4))],
     F32),
    ("ops.squeeze-tile-prod", _RuleOps, lambda: [_with_a_zero(normal(2, 1, 3, 2))], {"samples": 8}),
    ("mod-round-sign-ceil-floor_div", _PiecewiseOps, lambda: [normal(2, 3, scale=3.0), spread(3)],
     {"samples": 6}),
    ("MatMul", lambda: nn.MatMul(transpose_x2=True), lambda: [normal(2, 3, 4), normal(5, 4)], {}),
    ("Moments", lambda: nn.Moments(axis=(0, 2), keep_dims=True), lambda: [normal(3, 2, 4)], F32),
    ("MatInverse", nn.MatInverse, lambda: [normal(2, 3, 3) + 3 * np.eye(3)], F32),
    ("MatDet", nn.MatDet, lambda: [normal(2, 3, 3) + 2 * np.eye(3)], F32),
    ("MatrixDiag", nn.MatrixDiag, lambda: [normal(2, 3)], F32),
    ("MatrixDiagPart", nn.MatrixDiagPart, lambda: [normal(2, 3, 4)], F32),
    ("MatrixSetDiag", nn.MatrixSetDiag, lambda: [normal(2, 3, 4), normal(2, 3)], F32),
]

IMAGE_PADDING = [
    ("ImageGradients", nn.ImageGradients, lambda: [normal(1, 2, 4, 5)], F32),
    ("SSIM", lambda: nn.SSIM(filter_size=3), lambda: [np.abs(normal(1, 2, 6, 6)), np.abs(normal(1, 2, 6, 6, seed=3))],
     F32),
    ("MSSSIM", lambda: nn.MSSSIM(power_factors=(0.6, 0.4), filter_size=3),
     lambda: [np.abs(normal(1, 2, 8, 8)), np.abs(normal(1, 2, 8, 8, seed=3))], F32),
    ("PSNR", nn.PSNR, lambda: [np.abs(normal(1, 2, 4, 4)), np.abs(normal(1, 2, 4, 4, seed=3))], F32),
    ("CentralCrop", lambda: nn.CentralCrop(0.5), lambda: [normal(1, 2, 6, 6)], {}),
    ("ResizeBilinear", nn.ResizeBilinear, lambda: [normal(1, 2, 3, 4)],
     {**F32, "kwargs": {"size": (5, 7)}}),
    ("ResizeBilinear-align", nn.ResizeBilinear, lambda: [normal(1, 2, 3, 4)],
     {**F32, "kwargs": {"scale_factor": 2, "align_corners": True}}),
    ("Pad-constant", lambda: nn.Pad(((0, 0), (1, 2), (2, 1))), lambda: [normal(2, 3, 3)], {}),
    ("Pad-reflect", lambda: nn.Pad(((0, 0), (1, 2), (2, 1)), mode="REFLECT"), lambda: [normal(2, 3, 4)], {}),
    ("Pad-symmetric", lambda: nn.Pad(((1, 0), (1, 2), (2, 1)), mode="SYMMETRIC"), lambda: [normal(2, 3, 4)], {}),
]

CASES = ACTIVATIONS + BASIC + EMBEDDINGS + UTILITY_MATH + IMAGE_PADDING


@pytest.mark.parametrize("make_net, make_inputs, options", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_layer_gradients_match_finite_differences(make_net, make_inputs, options):
    aotnn.set_seed(11)  # parameter initializers draw from the global seed
    check_gradients(make_net(), make_inputs(), **options)


def test_igamma_gradient_matches_the_density():
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a). (A random functional of IGamma is not compiled here:
    # LLVM rejects the fused kernel of igamma times a constant, summed.)
    a = np.array([0.7, 1.5, 2.0, 3.5], np.float32)
    x = np.array([0.4, 1.2, 2.5, 3.0], np.float32)
    grad = ops.grad(lambda a_, x_: nn.IGamma()(a_, x_).sum(), 1)(Tensor(a), Tensor(x)).asnumpy()
    density = x ** (a - 1) * np.exp(-x) / np.array([math.gamma(v) for v in a])
    np.testing.assert_allclose(grad, density, rtol=2e-4, atol=1e-6)


def test_an_op_without_gradient_rule_is_named_at_capture():
    x = Tensor(np.array([[1.0, 3.0, 2.0]], np.float32))
    with pytest.raises(Exception, match=r"relax\.argmax has no gradient rule"):
        ops.grad(lambda a: ops.cast(ops.argmax(a, 1), mstype.float32).sum() + a.sum())(x)


@pytest.mark.parametrize("make_net", [lambda: nn.Dropout(p=0.4), lambda: nn.RReLU(0.1, 0.3)], ids=["Dropout", "RReLU"])
def test_random_layers_in_training_differentiate_through_their_sample(make_net):
    # the sample (mask, slopes) changes per call, so no finite differences: y = x * s elementwise,
    # hence d sum(w * y) / dx = w * y / x for the same call's output y
    aotnn.set_seed(3)
    net = make_net()
    net.set_train()
    x = spread(4, 6).astype(np.float32)
    w = Tensor(normal(4, 6).astype(np.float32))

    def objective(a):
        y = net(a)
        return (y * w).sum(), y

    (_, y), grad = ops.value_and_grad(objective)(Tensor(x))
    assert not np.allclose(y.asnumpy(), x)  # the layer did sample something
    np.testing.assert_allclose(grad.asnumpy(), w.asnumpy() * y.asnumpy() / x, rtol=1e-5, atol=1e-6)


def test_relu_gradient_is_zero_at_zero():
    """MindSpore's ReluGrad passes the gradient only where the input is positive."""
    class Scaled(nn.Cell):
        def __init__(self):
            super().__init__()
            self.relu = nn.ReLU()

        def construct(self, x):
            return (self.relu(x) * Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32))).sum()

    grad = ops.grad(Scaled())(Tensor(np.array([-1.0, 0.0, 0.5, 2.0], np.float32)))
    np.testing.assert_array_equal(grad.asnumpy(), [0.0, 0.0, 3.0, 4.0])
