"""One rank of the data-parallel tests; started by test_distributed.py as ``mpirun -n 2 python mpi_worker.py``.

Usage: ``python mpi_worker.py INPUTS.npz OUT_PREFIX``. Every rank writes ``OUT_PREFIX<rank>.npz``.
"""
from __future__ import annotations

import sys

import numpy as np

import aotnn
from aotnn import Parameter, Tensor, context, nn, ops
from aotnn.communication import get_group_size, get_rank, init
from aotnn.context import ParallelMode


class MatMulNet(nn.Cell):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = Parameter(Tensor(np.ones([in_features, out_features]).astype(np.float32)), name="weight")
        self.matmul = ops.MatMul()

    def construct(self, x):
        return self.matmul(x, self.weight)


class TrainingWrapper(nn.Cell):
    """The seed's DistributedGradReducer example: a custom step with the reducer inside its graph."""

    def __init__(self, network, optimizer, sens=1.0):
        super().__init__(auto_prefix=False)
        self.network = network
        self.network.add_flags(defer_inline=True)
        self.weights = optimizer.parameters
        self.optimizer = optimizer
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.sens = sens
        self.reducer_flag = False
        self.grad_reducer = None
        self.parallel_mode = context.get_auto_parallel_context("parallel_mode")
        if self.parallel_mode in [ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL]:
            self.reducer_flag = True
        if self.reducer_flag:
            mean = context.get_auto_parallel_context("gradients_mean")
            degree = context.get_auto_parallel_context("device_num")
            self.grad_reducer = nn.DistributedGradReducer(optimizer.parameters, mean, degree)

    def construct(self, *args):
        weights = self.weights
        loss = self.network(*args)
        sens = ops.Fill()(ops.DType()(loss), ops.Shape()(loss), self.sens)
        grads = self.grad(self.network, weights)(*args, sens)
        if self.reducer_flag:
            grads = self.grad_reducer(grads)
        return ops.Depend()(loss, self.optimizer(grads))


def dense_net():
    return nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])


def conv_net():
    return nn.SequentialCell([nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True), nn.ReLU(), nn.Flatten(),
                              nn.Dense(3 * 4 * 4, 2)])


def load(net, arrays, rank):
    # Rank 1 starts from other weights on purpose: the first step must broadcast rank 0's.
    for param, array in zip(net.trainable_params(), arrays):
        param.set_data(array + (0.5 if rank == 1 else 0.0))


def train(make_net, weights, x, y, rank, size, steps, optimizer_wrap=None):
    net = make_net()
    load(net, weights, rank)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    if optimizer_wrap is not None:
        optimizer = optimizer_wrap(optimizer)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    rows = x.shape[0] // size
    xs, ys = Tensor(x[rank * rows:(rank + 1) * rows]), Tensor(y[rank * rows:(rank + 1) * rows])
    losses = [float(step(xs, ys).asnumpy()) for _ in range(steps)]
    return [p.asnumpy() for p in net.trainable_params()], np.array(losses, np.float32)


def main(inputs_path: str, out_prefix: str) -> None:
    data = dict(np.load(inputs_path))
    init()
    rank, size = get_rank(), get_group_size()
    out: dict[str, np.ndarray] = {"size": np.array(size)}

    # DistributedGradReducer on concrete gradients: a sum, and a mean with an explicit degree.
    grads = (Tensor(data[f"g0_rank{rank}"]), Tensor(data[f"g1_rank{rank}"]))
    params = [aotnn.Parameter(Tensor(np.zeros(g.shape, np.float32)), name=f"p{i}") for i, g in enumerate(grads)]
    for i, g in enumerate(nn.DistributedGradReducer(params, mean=False)(grads)):
        out[f"sum{i}"] = g.asnumpy()
    for i, g in enumerate(nn.DistributedGradReducer(params, mean=True, degree=4)(grads)):
        out[f"mean4_{i}"] = g.asnumpy()
    half = (Tensor(data[f"g0_rank{rank}"].astype(np.float16)),)
    out["sum_f16"] = nn.DistributedGradReducer(params[:1], mean=False)(half)[0].asnumpy()

    # The seed's custom training cell: its graph holds the reducer, so it runs op by op (gradients summed).
    context.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL)
    network = MatMulNet(16, 10)
    net_with_loss = nn.WithLossCell(network, nn.MSELoss())
    train_cell = TrainingWrapper(net_with_loss, nn.Momentum(net_with_loss.trainable_params(), 0.1, 0.9))
    loss = train_cell(Tensor(np.ones([16, 16], np.float32)), Tensor(np.zeros([16, 10], np.float32)))
    out["seed_loss"] = loss.asnumpy()
    out["seed_weight"] = network.weight.asnumpy()

    context.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
    # Loss scaling: the unscaled gradients are averaged, then the guarded update runs.
    net = nn.Dense(4, 2)
    net.weight.set_data(np.ones((2, 4), np.float32))
    net.bias.set_data(np.zeros(2, np.float32))
    step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()),
                                            nn.Momentum(net.trainable_params(), 0.1, 0.9),
                                            nn.FixedLossScaleUpdateCell(8.0))
    loss, overflow, _ = step(Tensor(np.full((2, 4), rank + 1.0, np.float32)), Tensor(np.zeros((2, 2), np.float32)))
    out["scaled_loss"], out["scaled_overflow"] = loss.asnumpy(), overflow.asnumpy()
    out["scaled_weight"], out["scaled_bias"] = net.weight.asnumpy(), net.bias.asnumpy()
    dense_weights = [data[k] for k in ("dw1", "db1", "dw2", "db2")]
    final, out["dense_losses"] = train(dense_net, dense_weights, data["dx"], data["dy"], rank, size, 3)
    out.update({f"dense_p{i}": p for i, p in enumerate(final)})
    conv_weights = [data[k] for k in ("cw1", "cb1", "cw2", "cb2")]
    final, out["conv_losses"] = train(conv_net, conv_weights, data["cx"], data["cy"], rank, size, 3)
    out.update({f"conv_p{i}": p for i, p in enumerate(final)})

    context.reset_auto_parallel_context()
    context.set_auto_parallel_context(parallel_mode=ParallelMode.SEMI_AUTO_PARALLEL)
    for name, wrap in (("adasum_grad", nn.AdaSumByGradWrapCell), ("adasum_delta", nn.AdaSumByDeltaWeightWrapCell)):
        final, out[f"{name}_losses"] = train(dense_net, dense_weights, data["dx"], data["dy"], rank, size, 2, wrap)
        out.update({f"{name}_p{i}": p for i, p in enumerate(final)})
    np.savez(f"{out_prefix}{rank}.npz", **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
