"""Vectorizable float32 exp/tanh/erf (and softmax, GELU...) against PyTorch, special values included."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import lowered_kernels, rules_used, scalarized_loops, t

SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30, 88.8, -88.8, -104.0, 200.0, -200.0],
                   np.float32)


def values(seed):
    rng = np.random.default_rng(seed)
    spread = np.concatenate([rng.uniform(-10, 10, 500), rng.uniform(-1e-3, 1e-3, 100), rng.uniform(-80, 80, 100)])
    return np.concatenate([spread.astype(np.float32), SPECIAL]).reshape(4, -1)


# (ours, torch's, rtol, atol): erf is accurate to about 1.3e-7 absolute (``1 + erf`` in GELU cancels
# in float32 for any implementation); the others to a few ulp relative
CASES = {
    "exp": (ops.exp, torch.exp, 1e-6, 1e-37),
    "tanh": (ops.tanh, torch.tanh, 1e-6, 1e-37),
    "erf": (ops.erf, torch.erf, 1e-6, 2e-7),
    "sigmoid": (ops.sigmoid, torch.sigmoid, 1e-6, 1e-37),
    # torch's vectorized float32 GELU answers NaN for +inf on AVX-512 hosts (its scalar and float64
    # code answer +inf, as MindSpore does): the reference is computed in float64
    "gelu": (nn.GELU(approximate=False), lambda v: F.gelu(v.double()).float(), 1e-6, 1e-6),
    "silu": (nn.SiLU(), F.silu, 1e-6, 1e-37),
}


@pytest.mark.parametrize("name", list(CASES))
def test_transcendentals_match_torch_special_values_included(name):
    ours, theirs, rtol, atol = CASES[name]
    x = values(len(name))
    actual = ours(Tensor(x)).asnumpy()
    expected = theirs(t(x)).numpy()
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax(axis):
    x = values(7)[:, :700]
    np.testing.assert_allclose(ops.softmax(Tensor(x), axis).asnumpy(), torch.softmax(t(x), axis).numpy(),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(nn.LogSoftmax(axis)(Tensor(x)).asnumpy(), torch.log_softmax(t(x), axis).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_float64_keeps_libm():
    x = np.linspace(-5, 5, 64)
    np.testing.assert_allclose(ops.exp(Tensor(x)).asnumpy(), np.exp(x), rtol=1e-14)


def test_exp_kernel_is_vectorized():
    rules = rules_used(lambda v: ops.exp(v), [("x", (4, 256), "float32")])
    assert list(rules.values()) == ["elementwise"], rules


def test_erf_within_two_ulp_over_a_dense_sweep():
    """Against float64 erf: the division-free form is about 1 ulp (2 allowed for the fast exp)."""
    x = np.concatenate([np.linspace(-6, 6, 200_001), np.geomspace(1e-30, 8, 20_000), -np.geomspace(1e-30, 8, 20_000)])
    x = x.astype(np.float32)[: 240_000].reshape(-1, 1000)
    actual = ops.erf(Tensor(x)).asnumpy().astype(np.float64)
    expected = torch.erf(torch.from_numpy(x.astype(np.float64))).numpy()
    ulp = np.spacing(np.abs(expected).astype(np.float32)).astype(np.float64)
    assert float((np.abs(actual - expected) / ulp).max()) <= 2.0


@pytest.mark.parametrize("make", [lambda v: ops.exp(v), lambda v: ops.erf(v), lambda v: nn.GELU(approximate=False)(v),
                                  lambda v: ops.sigmoid(v), lambda v: ops.tanh(v)],
                         ids=["exp", "erf", "gelu", "sigmoid", "tanh"])
def test_transcendentals_behind_a_reshape_are_vectorized(make):
    """A reshape fused in front leaves int64 index arithmetic in the loads; the kernel must still
    run on vectors (``tirx.isnan`` there made TVM scalarize BERT's GELU: 2.5x slower)."""
    lowered = lowered_kernels(lambda v: make(ops.reshape(v, (1, 128, 256))), [("x", (128, 256), "float32")])
    (name, text), = [(n, s) for n, s in lowered.items() if "reshape" in n]
    assert "T.Ramp" in text and not scalarized_loops(text), f"{name} runs one lane at a time"
