"""Gradient of strided slices (a roll is captured as two slices joined) against PyTorch autograd."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import tvm
from tvm import relax

import relay_frontend.gradients  # noqa: F401  (registers the rules)
from aotnn import Tensor, nn, ops


def _slice_gradient(x: np.ndarray, w: np.ndarray, begin, end, strides) -> np.ndarray:
    """d/dx sum(strided_slice(x) * w), through Relax's Gradient pass and our rule, run by TVM's VM."""
    builder = relax.BlockBuilder()
    var = relax.Var("x", relax.TensorType(x.shape, "float32"))
    with builder.function("main", [var]):
        with builder.dataflow():
            sliced = builder.emit(relax.op.strided_slice(var, axes=list(range(x.ndim)), begin=list(begin),
                                                         end=list(end), strides=list(strides)))
            loss = builder.emit(relax.op.sum(relax.op.multiply(sliced, relax.const(w))))
            out = builder.emit_output(loss)
        builder.emit_func_output(out)
    mod = relax.transform.Gradient("main")(builder.get())
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    _, grads = vm["main_adjoint"](tvm.runtime.tensor(x))
    return grads[0].numpy()


@pytest.mark.parametrize("begin,end,strides", [
    ((0, 1, 0), (2, 6, 5), (1, 1, 1)),      # unit steps, one axis cut
    ((1, 0, 1), (2, 7, 5), (1, 3, 2)),      # steps 3 and 2, overhang at the end
    ((0, 2, 4), (2, 7, 5), (1, 2, 1)),      # a single element on the last axis
    ((0, -5, 0), (2, 100, 5), (2, 2, 3)),   # negative begin, end past the axis
])
def test_strided_slice_gradient_matches_pytorch(begin, end, strides):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 7, 5)).astype(np.float32)
    index = tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))
    w = rng.standard_normal(x[index].shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    (tx[index] * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(_slice_gradient(x, w, begin, end, strides), tx.grad.numpy(), rtol=0, atol=1e-6)


def test_roll_gradient_matches_pytorch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    w = rng.standard_normal((3, 8)).astype(np.float32)

    class Rolled(nn.Cell):
        def construct(self, x, w):
            return (ops.roll(x, shifts=3, dims=1) * w).sum()

    grad = ops.GradOperation()(Rolled())(Tensor(x), Tensor(w)).asnumpy()
    tx = torch.tensor(x, requires_grad=True)
    (torch.roll(tx, 3, 1) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(grad, tx.grad.numpy(), rtol=0, atol=1e-6)
