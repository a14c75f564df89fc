"""Round half to even without a library call (schedules/round_half_even.py, used on microcontrollers): the
same float32 bits as numpy's rint on halves, signed zeros, the limits of the exact range, large values,
infinities and NaN."""
from __future__ import annotations

import numpy as np
import tvm
from tvm import te

from schedules.round_half_even import round_te


def test_round_te_gives_rint_bit_for_bit():
    rng = np.random.default_rng(0)
    special = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 0.0, -0.0, -0.3, 0.3, 126.5, -127.5,
               2 ** 22 - 0.5, -(2 ** 22) + 0.5, 2 ** 22, 2 ** 22 + 1, 2 ** 23 - 1, 2 ** 23 + 2, 3e9, -3e9,
               3.4e38, -3.4e38, 1e-40, -1e-40, np.inf, -np.inf, np.nan]
    x = np.concatenate([np.array(special, np.float32),
                        (rng.standard_normal(4000) * 300).astype(np.float32),
                        np.round(rng.standard_normal(1000) * 200).astype(np.float32) + 0.5]).astype(np.float32)
    data = te.placeholder((x.size,), "float32", name="data")
    func = tvm.compile(te.create_prim_func([data, round_te(data)]), target="llvm")
    out = tvm.runtime.tensor(np.empty_like(x))
    func(tvm.runtime.tensor(x), out)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), np.rint(x).view(np.uint32))
