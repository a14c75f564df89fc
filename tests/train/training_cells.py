"""Cells the training tests share: a mean-square loss and plain gradient descent."""
from aotnn import nn, ops


class MeanSquare(nn.Cell):
    def construct(self, y, t):
        d = y - t
        return (d * d).mean()


class PlainSGD(nn.Cell):
    """p <- p - lr * g, written with ops.assign (the optimizers' mechanism)."""

    def __init__(self, params, lr):
        super().__init__(auto_prefix=False)
        self.parameters = list(params)
        self.lr = lr

    def construct(self, grads):
        for p, g in zip(self.parameters, grads):
            ops.assign(p, p - g * self.lr)
        return True
