"""The Winograd weight transform on its own rule (``schedules/defaults/winograd_pack.py``), pinned AVX2 and
AVX-512 targets, against ``U = G w G^T`` written in numpy from the F(2x2, 3x3) definition."""
import numpy as np
import pytest
import tvm
from tvm import te

from schedules.defaults import cpu_info, schedule_with_rule, winograd

# F(2x2, 3x3)'s weight matrix (Lavin & Gray), written out here rather than read from the module
G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def _reference(w: np.ndarray, oc_block: int) -> np.ndarray:
    """Packed ``[16 * OC / oc_block, 1, 1, IC, oc_block]``: position k = 4 eps + nu, then channel blocks."""
    oc, ic = w.shape[:2]
    u = np.einsum("er,oirs,ns->enoi", G, w.astype(np.float64), G).reshape(16, oc, ic)
    return u.reshape(16 * oc // oc_block, oc_block, ic).transpose(0, 2, 1).reshape(16 * oc // oc_block, 1, 1, ic,
                                                                                   oc_block)


@pytest.mark.parametrize("oc,ic,oc_block", [(32, 24, 16), (48, 8, 8), (64, 16, 32)])
def test_weight_transform_matches_numpy(oc, ic, oc_block, cpu_target):
    target = tvm.target.Target({"kind": "llvm", "mcpu": cpu_target, "num-cores": 2})
    w = te.placeholder((oc, ic, 3, 3), "float32", name="w")
    func = te.create_prim_func([w, winograd.pack_weight(w, oc_block)])
    scheduled, rule = schedule_with_rule(func, cpu_info(target), target)
    assert rule == "winograd_pack"
    weights = np.random.default_rng(oc + ic).standard_normal((oc, ic, 3, 3)).astype(np.float32)
    want = _reference(weights, oc_block)
    dev = tvm.cpu()
    out = tvm.runtime.tensor(np.zeros(want.shape, np.float32), dev)
    tvm.compile(tvm.IRModule({"main": scheduled}), target=target)["main"](tvm.runtime.tensor(weights, dev), out)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
