"""Data-parallel training over MPI (two ranks on loopback) and the single-device parallel wrappers,
against PyTorch / numpy references."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn
from aotnn import Parameter, Tensor, context, nn
from aotnn.communication import GlobalComm, get_group_size, get_rank, init, release
from aotnn.context import ParallelMode
from tests.nn.wrap.mpi_worker import MatMulNet, TrainingWrapper

HAVE_MPI = shutil.which("mpirun") is not None and importlib.util.find_spec("mpi4py") is not None
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="mpirun or mpi4py missing (tools/install.sh installs them)")
WORKER = Path(__file__).with_name("mpi_worker.py")
DENSE_KEYS, CONV_KEYS = ("dw1", "db1", "dw2", "db2"), ("cw1", "cb1", "cw2", "cb2")


@pytest.fixture(autouse=True)
def _clean_context():
    context.reset_auto_parallel_context()
    yield
    context.reset_auto_parallel_context()
    release()


# -- references ---------------------------------------------------------------------------------------
def dense_ref(p, x):
    return F.linear(F.relu(F.linear(x, p[0], p[1])), p[2], p[3])


def conv_ref(p, x):
    return F.linear(F.relu(F.conv2d(x, p[0], p[1])).flatten(1), p[2], p[3])


def torch_grads(fn, weights, x, y, scale=1.0):
    p = [torch.tensor(w, dtype=torch.float64, requires_grad=True) for w in weights]
    loss = F.mse_loss(fn(p, torch.tensor(x, dtype=torch.float64)), torch.tensor(y, dtype=torch.float64)) * scale
    loss.backward()
    return [q.grad.numpy() for q in p], loss.item() / scale


def momentum_train(fn, weights, x, y, steps, scale=1.0, lr=0.1, momentum=0.9):
    """MindSpore's Momentum (accum = m * accum + g; w -= lr * accum) on the whole batch."""
    w = [np.asarray(a, np.float64) for a in weights]
    accum = [np.zeros_like(a) for a in w]
    losses = []
    for _ in range(steps):
        grads, loss = torch_grads(fn, w, x, y, scale)
        accum = [momentum * a + g for a, g in zip(accum, grads)]
        w = [p - lr * a for p, a in zip(w, accum)]
        losses.append(loss)
    return w, losses


def adasum(g1, g2):
    """The AdaSum formula, with a 0-norm vector kept as is."""
    dot = float(np.sum(g1 * g2))
    n1, n2 = float(np.sum(g1 * g1)), float(np.sum(g2 * g2))
    return (1 - dot / (2 * n1) if n1 else 1.0) * g1 + (1 - dot / (2 * n2) if n2 else 1.0) * g2


def adasum_train(weights, x, y, steps, by_delta, lr=0.1, momentum=0.9):
    w = [np.asarray(a, np.float64) for a in weights]
    halves = [(x[:4], y[:4]), (x[4:], y[4:])]
    accum = [[np.zeros_like(a) for a in w] for _ in halves]  # per rank (equal for by-grad)
    for _ in range(steps):
        grads = [torch_grads(dense_ref, w, hx, hy)[0] for hx, hy in halves]
        if by_delta:
            accum = [[momentum * a + g for a, g in zip(acc, gr)] for acc, gr in zip(accum, grads)]
            deltas = [[-lr * a for a in acc] for acc in accum]
            w = [p + adasum(d0, d1) for p, d0, d1 in zip(w, *deltas)]
        else:
            combined = [adasum(g0, g1) for g0, g1 in zip(*grads)]
            accum[0] = [momentum * a + g for a, g in zip(accum[0], combined)]
            w = [p - lr * a for p, a in zip(w, accum[0])]
    return w


# -- two ranks over mpirun --------------------------------------------------------------------------
def _inputs() -> dict[str, np.ndarray]:
    r = np.random.default_rng(0)
    f = np.float32
    return {
        "g0_rank0": r.normal(size=(3, 4)).astype(f), "g0_rank1": r.normal(size=(3, 4)).astype(f),
        "g1_rank0": r.normal(size=(5,)).astype(f), "g1_rank1": r.normal(size=(5,)).astype(f),
        "dw1": r.normal(0, .4, (8, 6)).astype(f), "db1": r.normal(0, .1, 8).astype(f),
        "dw2": r.normal(0, .4, (3, 8)).astype(f), "db2": r.normal(0, .1, 3).astype(f),
        "dx": r.normal(size=(8, 6)).astype(f), "dy": r.normal(size=(8, 3)).astype(f),
        "cw1": r.normal(0, .3, (3, 2, 3, 3)).astype(f), "cb1": r.normal(0, .1, 3).astype(f),
        "cw2": r.normal(0, .2, (2, 48)).astype(f), "cb2": r.normal(0, .1, 2).astype(f),
        "cx": r.normal(size=(4, 2, 6, 6)).astype(f), "cy": r.normal(size=(4, 2)).astype(f),
    }


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """Runs mpi_worker.py on two ranks once; (inputs, [rank 0 results, rank 1 results])."""
    if not HAVE_MPI:
        pytest.skip("mpirun or mpi4py missing (tools/install.sh installs them)")
    folder = tmp_path_factory.mktemp("mpi")
    data = _inputs()
    np.savez(folder / "inputs.npz", **data)
    # CI runs as root on a machine without ssh: allow root, keep to loopback, allow more ranks than cores.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    command = ["mpirun", "-n", "2", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,tcp",
               "--mca", "btl_tcp_if_include", "lo"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-run-as-root")
    command += [sys.executable, str(WORKER), str(folder / "inputs.npz"), str(folder / "out")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mpirun failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return data, [dict(np.load(folder / f"out{rank}.npz")) for rank in (0, 1)]


@needs_mpi
def test_grad_reducer_sums_over_ranks(two_ranks):
    data, outs = two_ranks
    for out in outs:
        assert int(out["size"]) == 2
        for i in (0, 1):
            total = data[f"g{i}_rank0"] + data[f"g{i}_rank1"]
            np.testing.assert_allclose(out[f"sum{i}"], total, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(out[f"mean4_{i}"], total / 4, rtol=1e-6, atol=1e-6)
        assert out["sum_f16"].dtype == np.float16
        half_total = data["g0_rank0"].astype(np.float16).astype(np.float32) + data["g0_rank1"].astype(np.float16)
        np.testing.assert_allclose(out["sum_f16"].astype(np.float32), half_total, rtol=2e-3, atol=2e-3)


@needs_mpi
@pytest.mark.parametrize("name, fn, keys, prefix", [("dense", dense_ref, DENSE_KEYS, "d"),
                                                    ("conv", conv_ref, CONV_KEYS, "c")])
def test_data_parallel_matches_one_process_on_the_whole_batch(two_ranks, name, fn, keys, prefix):
    data, outs = two_ranks
    want, losses = momentum_train(fn, [data[k] for k in keys], data[prefix + "x"], data[prefix + "y"], 3)
    for out in outs:  # rank 1 started from other weights: the broadcast made them rank 0's
        for i, w in enumerate(want):
            np.testing.assert_allclose(out[f"{name}_p{i}"], w, rtol=1e-5, atol=1e-5)
    # Equal halves: the mean of the ranks' losses is the whole batch's loss.
    np.testing.assert_allclose((outs[0][f"{name}_losses"] + outs[1][f"{name}_losses"]) / 2, losses, rtol=1e-5)


@needs_mpi
def test_seed_example_custom_cell_two_ranks(two_ranks):
    """000_DistributedGradReducer_1 on two ranks: the reducer (sum) inside a custom cell runs op by op."""
    _, outs = two_ranks
    for out in outs:
        np.testing.assert_allclose(out["seed_loss"], 256.0, rtol=1e-6)
        np.testing.assert_allclose(out["seed_weight"], np.full((16, 10), 1 - 0.1 * 2 * 3.2), rtol=1e-6)


@needs_mpi
def test_loss_scale_cell_two_ranks(two_ranks):
    """Rank r trains Dense(4, 2) (weights 1, bias 0) on x = r + 1, label 0: dW = 2/4 * 2 * 4(r+1)^2 (4, 16),
    db = 4(r+1) (4, 8); their means 10 and 6, one Momentum step of lr 0.1."""
    _, outs = two_ranks
    for rank, out in enumerate(outs):
        np.testing.assert_allclose(out["scaled_loss"], 16.0 * (rank + 1) ** 2, rtol=1e-6)
        assert not out["scaled_overflow"]
        np.testing.assert_allclose(out["scaled_weight"], np.full((2, 4), 1 - 0.1 * 10), atol=1e-6)
        np.testing.assert_allclose(out["scaled_bias"], np.full(2, -0.1 * 6), atol=1e-6)


@needs_mpi
@pytest.mark.parametrize("by_delta", [False, True])
def test_adasum_two_ranks(two_ranks, by_delta):
    data, outs = two_ranks
    want = adasum_train([data[k] for k in DENSE_KEYS], data["dx"], data["dy"], 2, by_delta)
    name = "adasum_delta" if by_delta else "adasum_grad"
    for out in outs:
        for i, w in enumerate(want):
            np.testing.assert_allclose(out[f"{name}_p{i}"], w, rtol=1e-5, atol=1e-5)


# -- one process --------------------------------------------------------------------------------------
def test_communication_single_process():
    with pytest.raises(RuntimeError, match="init"):
        get_rank()
    with pytest.raises(ValueError, match="backend_name"):
        init("gloo")
    with pytest.raises(TypeError, match="backend_name"):
        init(3)
    init()
    assert GlobalComm.INITED
    for group in ("hccl_world_group", "nccl_world_group", "mpi_world_group"):
        assert get_rank(group) == 0 and get_group_size(group) == 1
    with pytest.raises(ValueError, match="group"):
        get_rank("no_such_group")
    from aotnn.communication import get_local_rank, get_local_rank_size
    assert get_local_rank() == 0 and get_local_rank_size() == 1
    from aotnn.communication import (create_group, destroy_group, get_group_rank_from_world_rank,
                                     get_world_rank_from_group_rank)
    create_group("pair", [0])
    assert get_group_size("pair") == 1 and get_rank("pair") == 0
    assert get_world_rank_from_group_rank("pair", 0) == 0 and get_group_rank_from_world_rank(0, "pair") == 0
    with pytest.raises(ValueError, match="rank_ids"):
        create_group("bad", [0, 3])
    with pytest.raises(ValueError, match="exists"):
        create_group("pair", [0])
    destroy_group("pair")
    with pytest.raises(ValueError, match="group"):
        get_group_size("pair")
    init("nccl")
    assert GlobalComm.WORLD_COMM_GROUP == "nccl_world_group"
    GlobalComm.WORLD_COMM_GROUP = "hccl_world_group"


def test_init_without_mpi4py(monkeypatch):
    """Without mpi4py a lone process is a world of one; under a launcher of several it is an error."""
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"):
        monkeypatch.delenv(var, raising=False)
    init()
    assert get_group_size() == 1 and get_rank() == 0
    release()
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    with pytest.raises(ImportError, match="mpi4py"):
        init()


def test_auto_parallel_context():
    assert context.get_auto_parallel_context("parallel_mode") == ParallelMode.STAND_ALONE
    assert context.get_auto_parallel_context("gradients_mean") is False
    init()
    context.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
    assert context.get_auto_parallel_context("device_num") == 1  # the world's size when not set
    context.set_auto_parallel_context(device_num=8)
    assert context.get_auto_parallel_context("device_num") == 8
    context.reset_auto_parallel_context()
    assert context.get_auto_parallel_context("parallel_mode") == "stand_alone"
    with pytest.raises(ValueError, match="parallel_mode"):
        context.set_auto_parallel_context(parallel_mode="model_parallel")
    with pytest.raises(ValueError, match="device_num"):
        context.set_auto_parallel_context(device_num=0)
    with pytest.raises(TypeError, match="gradients_mean"):
        context.set_auto_parallel_context(gradients_mean=1)
    with pytest.raises(ValueError, match="unknown"):
        context.set_auto_parallel_context(no_such_key=1)
    assert aotnn.context.ParallelMode is ParallelMode


def test_grad_reducer_arguments_and_host_call():
    init()
    params = [Parameter(Tensor(np.zeros((2, 3), np.float32)), name="w")]
    reducer = nn.DistributedGradReducer(params)
    assert reducer.mean is True and reducer.degree == 1 and "mean=True" in repr(reducer)
    with pytest.raises(TypeError, match="mean"):
        nn.DistributedGradReducer(params, mean=1)
    with pytest.raises(ValueError, match="degree"):
        nn.DistributedGradReducer(params, degree=0)
    g = np.random.default_rng(1).normal(size=(2, 3))
    for dtype, tol in ((np.float32, 1e-6), (np.float16, 1e-3)):
        (out,) = nn.DistributedGradReducer(params, mean=True, degree=2)((Tensor(g.astype(dtype)),))
        assert out.dtype == aotnn.dtype.float16 if dtype == np.float16 else True
        np.testing.assert_allclose(out.asnumpy().astype(np.float64), g.astype(dtype) / 2, rtol=tol, atol=tol)
    release()
    with pytest.raises(RuntimeError, match="init"):
        nn.DistributedGradReducer(params)


def _dense(weights):
    net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
    for param, array in zip(net.trainable_params(), weights):
        param.set_data(array)
    return net


def test_train_one_step_data_parallel_mode_one_process():
    """One process, data-parallel with device_num=2 and mean: the gradients are halved (in the graph)."""
    data = _inputs()
    weights = [data[k] for k in DENSE_KEYS]
    init()
    context.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=2)
    net = _dense(weights)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    assert step.reducer_flag and isinstance(step.grad_reducer, nn.DistributedGradReducer)
    for _ in range(2):
        step(Tensor(data["dx"]), Tensor(data["dy"]))
    want, _ = momentum_train(dense_ref, weights, data["dx"], data["dy"], 2, scale=0.5)
    for param, w in zip(net.trainable_params(), want):
        np.testing.assert_allclose(param.asnumpy(), w, rtol=1e-5, atol=1e-5)


def test_adasum_one_process_is_the_inner_optimizer():
    """A world of one: AdaSum of a single update is that update (runs the host-split step)."""
    data = _inputs()
    weights = [data[k] for k in DENSE_KEYS]
    init()
    with pytest.raises(RuntimeError, match="stand_alone"):
        nn.AdaSumByGradWrapCell(nn.Momentum(_dense(weights).trainable_params(), 0.1, 0.9))
    context.set_auto_parallel_context(parallel_mode=ParallelMode.SEMI_AUTO_PARALLEL)
    with pytest.raises(TypeError, match="optimizer"):
        nn.AdaSumByDeltaWeightWrapCell("momentum")
    want, _ = momentum_train(dense_ref, weights, data["dx"], data["dy"], 2)
    for wrap in (nn.AdaSumByGradWrapCell, nn.AdaSumByDeltaWeightWrapCell):
        net = _dense(weights)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                   wrap(nn.Momentum(net.trainable_params(), 0.1, 0.9)))
        for _ in range(2):
            step(Tensor(data["dx"]), Tensor(data["dy"]))
        for param, w in zip(net.trainable_params(), want):
            np.testing.assert_allclose(param.asnumpy(), w, rtol=1e-5, atol=1e-5)


def test_seed_example_distributed_grad_reducer():
    """000_DistributedGradReducer_1 on one process: loss 16^2 = 256; dW = 2/160 * 16 * 16 = 3.2 each."""
    context.set_context(mode=context.GRAPH_MODE)
    init()
    context.reset_auto_parallel_context()
    context.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL)
    size, in_features, out_features = 16, 16, 10
    network = MatMulNet(in_features, out_features)
    net_with_loss = nn.WithLossCell(network, nn.MSELoss())
    optimizer = nn.Momentum(net_with_loss.trainable_params(), learning_rate=0.1, momentum=0.9)
    train_cell = TrainingWrapper(net_with_loss, optimizer)
    assert train_cell.reducer_flag
    loss = train_cell(Tensor(np.ones([size, in_features]).astype(np.float32)),
                      Tensor(np.zeros([size, out_features]).astype(np.float32)))
    np.testing.assert_allclose(loss.asnumpy(), 256.0, rtol=1e-6)
    np.testing.assert_allclose(network.weight.asnumpy(), np.full((16, 10), 1 - 0.1 * 3.2), rtol=1e-6)


# -- single-device parallel wrappers ------------------------------------------------------------------
def test_pipeline_cell_sums_micro_batch_losses():
    data = _inputs()
    weights = [data[k] for k in DENSE_KEYS]
    x, y = data["dx"][:6], data["dy"][:6]
    cell = nn.PipelineCell(nn.WithLossCell(_dense(weights), nn.MSELoss()), 4)
    assert cell.micro_size == 4 and "micro_size=4" in repr(cell)
    p = [torch.tensor(w, dtype=torch.float64) for w in weights]
    want = sum(F.mse_loss(dense_ref(p, torch.tensor(x[b:e], dtype=torch.float64)),
                          torch.tensor(y[b:e], dtype=torch.float64)).item()
               for b, e in ((0, 1), (1, 3), (3, 4), (4, 6)))  # rows i*6//4 .. (i+1)*6//4
    np.testing.assert_allclose(cell(Tensor(x), Tensor(y)).asnumpy(), want, rtol=1e-5)
    with pytest.raises(ValueError, match="micro_size"):
        nn.PipelineCell(_dense(weights), 0)
    with pytest.raises(TypeError, match="micro_size"):
        nn.PipelineCell(_dense(weights), 2.0)
    with pytest.raises(TypeError, match="network"):
        nn.PipelineCell("net", 2)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 2e-2)])
def test_micro_batch_interleaved_sums_outputs(dtype, tol):
    data = _inputs()
    weights = [data[k] for k in DENSE_KEYS]
    net = _dense(weights)
    if dtype == np.float16:
        net.to_float(aotnn.float16)
    cell = nn.MicroBatchInterleaved(net)
    assert cell.interleave_num == 2
    p = [torch.tensor(w, dtype=torch.float64) for w in weights]
    x = data["dx"]
    want = (dense_ref(p, torch.tensor(x[:4], dtype=torch.float64))
            + dense_ref(p, torch.tensor(x[4:], dtype=torch.float64))).numpy()
    got = cell(Tensor(x.astype(dtype))).asnumpy().astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="interleave_num"):
        nn.MicroBatchInterleaved(net, -1)
    with pytest.raises(TypeError, match="interleave_num"):
        nn.MicroBatchInterleaved(net, "2")


class _ThreeInputs(nn.Cell):
    def construct(self, a, b, c):
        return a * b + c


def test_virtual_dataset_cell_triple():
    r = np.random.default_rng(2)
    a, b, c = (r.normal(size=(3, 4)).astype(np.float32) for _ in range(3))
    out = nn.VirtualDatasetCellTriple(_ThreeInputs())(Tensor(a), Tensor(b), Tensor(c))
    np.testing.assert_allclose(out.asnumpy(), a * b + c, rtol=1e-6)
    with pytest.raises(TypeError, match="backbone"):
        nn.VirtualDatasetCellTriple(None)
