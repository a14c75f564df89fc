"""Finite-difference check of compiled gradients, shared by the test_gradients*.py files.

The objective is ``L = sum_k sum(w_k * f(x)_k)`` over the float outputs of a layer, with fixed
pseudo-random weights ``w_k`` built from each output's (static) shape. Its gradients (from
``ops.value_and_grad``, i.e. Relax autodiff plus our rules) are compared, at a few random
coordinates of every input and parameter, with central differences of the compiled forward: the
value that the same compiled graph returns, so each case compiles once (inputs move by value,
parameters through ``set_data``, neither recompiles).
"""
from __future__ import annotations

import zlib

import numpy as np

from aotnn import Tensor, nn, ops
from aotnn.common import dtype as mstype
from aotnn.ops.grad_ops import _EAGER


def normal(*shape, scale=1.0, seed=0):
    """Standard normal samples (seeded by the shape)."""
    return np.random.default_rng(seed + len(shape) * 31 + sum(shape)).standard_normal(shape) * scale


def spread(*shape, low=0.5, high=3.0, seed=1):
    """Distinct values (no ties, away from kinks at 0), random signs."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    mags = low + (high - low) * (np.arange(size) + 0.37) / size
    return (rng.permutation(mags) * rng.choice([-1.0, 1.0], size)).reshape(shape)


def ids(high, *shape, seed=2):
    """Random int32 indices in [0, high)."""
    return np.random.default_rng(seed).integers(0, high, shape).astype(np.int32)


def _float_leaves(out) -> list:
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in _float_leaves(item)]
    return [out] if isinstance(out, Tensor) and out.dtype.is_float else []


def _weights_for(shape: tuple, dtype: str, index: int) -> np.ndarray:
    seed = zlib.crc32(repr((shape, index)).encode())
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


class Objective(nn.Cell):
    """``sum_k sum(w_k * net(*inputs)_k)`` (a random linear functional of the outputs)."""

    def __init__(self, net: nn.Cell, kwargs: dict | None = None):
        super().__init__()
        self.net = net
        self.kwargs = kwargs or {}

    def construct(self, *inputs):
        total = None
        for k, out in enumerate(_float_leaves(self.net(*inputs, **self.kwargs))):
            w = Tensor(_weights_for(out.shape, out.dtype.name, k))
            term = (out * w).sum()
            total = term if total is None else total + term
        return total


def _to64(net: nn.Cell) -> None:
    for p in net.get_parameters():
        if p.dtype.is_float:
            p.set_dtype(mstype.float64)


def check_gradients(net: nn.Cell, inputs: list[np.ndarray], *, dtype: str = "float64", train: bool = False,
                    samples: int = 3, wrt_inputs: tuple[int, ...] | None = None, eps: float | None = None,
                    rtol: float | None = None, seed: int = 0, kwargs: dict | None = None) -> None:
    """Assert the compiled gradients of ``net`` match central finite differences.

    Args:
        net: the layer (its float parameters are converted to ``dtype``).
        inputs: numpy inputs; float ones are cast to ``dtype``.
        kwargs: constant keyword arguments of the layer call.
        train: run the layer in training mode (batch statistics...).
        samples: coordinates sampled per tensor.
        wrt_inputs: input positions to differentiate (default: every float input).
    """
    net.set_train(train)
    if dtype == "float64":
        _to64(net)
    eps = eps if eps is not None else (1e-6 if dtype == "float64" else 1e-2)
    rtol = rtol if rtol is not None else (1e-5 if dtype == "float64" else 3e-2)
    arrays = [a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a for a in inputs]
    if wrt_inputs is None:
        wrt_inputs = tuple(i for i, a in enumerate(arrays) if np.issubdtype(a.dtype, np.floating))
    params = [p for p in net.trainable_params() if p.dtype.is_float]
    obj = Objective(net, kwargs)
    obj.set_train(train)
    fn = ops.value_and_grad(obj, wrt_inputs if wrt_inputs else None, params if params else None)
    _, grads = fn(*[Tensor(a) for a in arrays])
    if wrt_inputs and params:
        input_grads, param_grads = grads
    elif params:
        input_grads, param_grads = (), grads
    else:
        input_grads, param_grads = grads, ()
    # copies now: later calls of the compiled graph may reuse its output buffers
    input_grads, param_grads = [g.asnumpy().copy() for g in input_grads], [g.asnumpy().copy() for g in param_grads]
    rng = np.random.default_rng(seed)
    compiled = dict(_EAGER[obj])  # the differentiated graph, compiled once for these shapes

    def loss() -> float:
        # the value output of the same compiled graph: its forward half, run on the moved point
        return float(fn(*[Tensor(a) for a in arrays])[0].asnumpy())

    def check(name: str, analytic: np.ndarray, get, put) -> None:
        base = get().copy()
        flat_count = base.size
        picks = rng.choice(flat_count, size=min(samples, flat_count), replace=False)
        scale = max(float(np.abs(analytic).max()), 1e-3)
        for flat in picks:
            idx = np.unravel_index(flat, base.shape)
            values = []
            for sign in (1, -1):
                moved = base.copy()
                moved[idx] += sign * eps
                put(moved)
                values.append(loss())
            put(base)
            numeric = (values[0] - values[1]) / (2 * eps)
            got = float(analytic[idx])
            assert abs(got - numeric) <= rtol * max(abs(numeric), scale), \
                f"{name}{list(idx)}: autodiff {got:.8g} vs finite differences {numeric:.8g}"

    for pos, g in zip(wrt_inputs, input_grads):
        def put(v, pos=pos):
            arrays[pos] = v
        check(f"input {pos}", g, lambda pos=pos: arrays[pos], put)
    for p, g in zip(params, param_grads):
        check(p.name, g, p.asnumpy, p.set_data)
    assert dict(_EAGER[obj]) == compiled, "new input or parameter values recompiled the network"
