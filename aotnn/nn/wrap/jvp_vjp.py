"""Jacobian products of a network: ``Vjp`` (reverse mode) and ``Jvp`` (via double backward)."""
from __future__ import annotations

from ... import ops
from ...ops.grad_ops import _differentiate
from ..cell import Cell

__all__ = ["Jvp", "Vjp"]


def _tensor_positions(args) -> list[int]:
    return [i for i, a in enumerate(args) if hasattr(a, "shape")]


class Vjp(Cell):
    """Vector-Jacobian product: called as ``Vjp(fn)(*inputs, v)``, returns ``(fn(*inputs), v^T J)``
    with one gradient per input (a single Tensor when there is one input).

    Args:
        fn: a Cell or function of Tensors with one Tensor output.
    """

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *args):
        *inputs, v = args
        outputs, grads, _ = _differentiate(self.fn, inputs, _tensor_positions(inputs), [], v)
        return outputs[0], (grads[0] if len(grads) == 1 else tuple(grads))


class Jvp(Cell):
    """Jacobian-vector product: called as ``Jvp(fn)(*inputs, v)`` with ``v`` a Tensor or a tuple of
    Tensors shaped like the inputs; returns ``(fn(*inputs), J v)``.

    ``J v`` is the derivative of ``u -> <v, J^T u>`` (reverse mode applied twice).

    Args:
        fn: a Cell or function of Tensors with one Tensor output.
    """

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *args):
        *inputs, vs = args
        vs = tuple(vs) if isinstance(vs, (tuple, list)) else (vs,)
        positions = _tensor_positions(inputs)
        if len(vs) != len(positions):
            raise ValueError(f"v: expected {len(positions)} tangent(s), one per input, got {len(vs)}")
        output = self.fn(*inputs)
        count = len(inputs)

        def pairing(u, *rest):
            # tensors of the enclosing graph must come in as arguments of the differentiated function
            xs, tangents = rest[:count], rest[count:]
            _, grads, _ = _differentiate(self.fn, xs, positions, [], u)
            total = None
            for g, v in zip(grads, tangents):
                term = (g * v).sum()
                total = term if total is None else total + term
            return total

        return output, ops.grad(pairing, 0)(ops.zeros_like(output), *inputs, *vs)
