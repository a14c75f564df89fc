"""Dense layers over weights a training step updates: read where they are (no packed copy made on
every call), the same GEMM tiles; results against numpy."""
import numpy as np
import pytest
import tvm
from tvm import relax, te

from schedules.defaults import cpu_info, rewrite_relax, schedule_with_rule
from schedules.defaults.dense import dense_plain, plan_dense
from schedules.defaults.layout import UPDATED_PARAMS_ATTR

HOST = tvm.target.Target("llvm")


@pytest.mark.parametrize("transposed", [False, True], ids=["n_by_k", "k_by_n"])
@pytest.mark.parametrize("m, k, n", [(4, 120, 84), (3, 17, 10)])
def test_plain_weight_dense_matches_numpy(m, k, n, transposed):
    plan = plan_dense(cpu_info(HOST), m, n, "float32")
    x = te.placeholder((m, k), "float32", name="x")
    w = te.placeholder((k, n) if transposed else (n, k), "float32", name="w")
    out = dense_plain(x, w, transposed=transposed, n_block=plan.n_block, n_padded=plan.n_padded,
                      out_features=n, m_block=plan.m_block, m_padded=plan.m_padded)
    func = te.create_prim_func([x, w, out]).with_attr("global_symbol", "main")
    scheduled, rule = schedule_with_rule(func, cpu_info(HOST), HOST)
    assert rule == "dense"
    library = tvm.compile(tvm.IRModule({"main": scheduled}), target=HOST)
    rng = np.random.default_rng(m + k)
    xs, ws = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n) if transposed else (n, k)).astype(np.float32)
    result = tvm.runtime.tensor(np.zeros((m, n), np.float32))
    library["main"](tvm.runtime.tensor(xs), tvm.runtime.tensor(ws), result)
    np.testing.assert_allclose(result.numpy(), xs @ (ws if transposed else ws.T), rtol=1e-5, atol=1e-5)


def _dense_module(updated: bool) -> tvm.IRModule:
    """main(x, w, b) = x @ w.T + b; ``updated``: w listed as a parameter the step updates."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((4, 12), "float32"))
    w = relax.Var("w", relax.TensorType((8, 12), "float32"))
    b = relax.Var("b", relax.TensorType((8,), "float32"))
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            product = bb.emit(relax.op.matmul(x, relax.op.permute_dims(w, [1, 0])))
            out = bb.emit_output(relax.op.add(product, b))
        bb.emit_func_output(out)
    mod = bb.get()
    if updated:
        mod["main"] = mod["main"].with_attr(UPDATED_PARAMS_ATTR, [1])
    return mod


def test_a_weight_the_step_updates_is_not_packed():
    packed = rewrite_relax(_dense_module(False), HOST).script()
    plain = rewrite_relax(_dense_module(True), HOST).script()
    assert "aotnn_pack_dense_weight" in packed and "aotnn_dense" in packed
    assert "aotnn_pack_dense_weight" not in plain and "aotnn_dense" in plain
