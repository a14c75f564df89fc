"""Kernels whose stages run per output row (microcontroller bundles): same results as numpy, scratch
of a few rows instead of whole tensors."""
from __future__ import annotations

import numpy as np
import tvm
from tvm import te, topi

from schedules.kernel_workspace import lowered_workspace_per_kernel
from schedules.stream_rows import stream_rows

H, W, C = 25, 5, 16


def _depthwise_pointwise() -> tvm.tirx.PrimFunc:
    """pad -> 3x3 depthwise -> + bias -> relu -> 1x1 convolution -> relu (NHWC), as one kernel."""
    x = te.placeholder((1, H, W, C), "float32", name="x")
    dw = te.placeholder((3, 3, C), "float32", name="dw")
    bias = te.placeholder((C,), "float32", name="bias")
    pw = te.placeholder((C, C), "float32", name="pw")
    padded = topi.nn.pad(x, [0, 1, 1, 0], [0, 1, 1, 0], name="pad")
    kh, kw = te.reduce_axis((0, 3), "kh"), te.reduce_axis((0, 3), "kw")
    depthwise = te.compute((1, H, W, C), lambda b, i, j, c: te.sum(padded[b, i + kh, j + kw, c] * dw[kh, kw, c],
                                                                   axis=[kh, kw]), name="depthwise")
    shifted = te.compute((1, H, W, C), lambda b, i, j, c: depthwise[b, i, j, c] + bias[c], name="shifted")
    relu = te.compute((1, H, W, C), lambda b, i, j, c: te.max(shifted[b, i, j, c], 0.0), name="relu")
    ic = te.reduce_axis((0, C), "ic")
    pointwise = te.compute((1, H, W, C), lambda b, i, j, o: te.sum(relu[b, i, j, ic] * pw[ic, o], axis=ic),
                           name="pointwise")
    out = te.compute((1, H, W, C), lambda b, i, j, o: te.max(pointwise[b, i, j, o], 0.0), name="out")
    return te.create_prim_func([x, dw, bias, pw, out]).with_attr("global_symbol", "main")


def _reference(x, dw, bias, pw):
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)])
    depthwise = sum(padded[:, i:i + H, j:j + W, :] * dw[i, j] for i in range(3) for j in range(3))
    return np.maximum(np.maximum(depthwise + bias, 0) @ pw, 0)


def test_streamed_kernel_matches_numpy_with_a_few_rows_of_scratch():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in [(1, H, W, C), (3, 3, C), (C,), (C, C)]]
    target = tvm.target.Target("llvm")
    func = _depthwise_pointwise()
    streamed = stream_rows(func)
    library = tvm.compile(tvm.IRModule({"main": streamed}), target=target)
    out = tvm.runtime.tensor(np.zeros((1, H, W, C), np.float32))
    library["main"](*[tvm.runtime.tensor(a) for a in arrays], out)
    np.testing.assert_allclose(out.numpy(), _reference(*arrays), rtol=1e-5, atol=1e-5)

    row = W * C * 4
    (whole,) = lowered_workspace_per_kernel(tvm.IRModule({"main": func}), target).values()
    (rows,) = lowered_workspace_per_kernel(tvm.IRModule({"main": streamed}), target).values()
    assert whole >= (H + 2) * (W + 2) * C * 4  # unstreamed: at least the whole padded input
    assert rows <= 3 * (W + 2) * C * 4 + 2 * row + 256  # three padded rows, a row of each stage


def test_a_batched_convolution_before_a_pooling_is_streamed_by_rows_of_one_sample():
    """conv 3x3 -> relu -> 2x2 max-pool on a batch of 3 (NHWC), one kernel: the convolution's
    result is kept for the two rows one pooled row needs, not for a whole sample or batch."""
    n, size, c_in, c_out = 3, 12, 2, 4
    x = te.placeholder((n, size + 2, size + 2, c_in), "float32", name="x")
    w = te.placeholder((3, 3, c_in, c_out), "float32", name="w")
    kh, kw, ic = te.reduce_axis((0, 3), "kh"), te.reduce_axis((0, 3), "kw"), te.reduce_axis((0, c_in), "ic")
    conv = te.compute((n, size, size, c_out), lambda b, i, j, o: te.sum(
        x[b, i + kh, j + kw, ic] * w[kh, kw, ic, o], axis=[kh, kw, ic]), name="conv")
    relu = te.compute((n, size, size, c_out), lambda b, i, j, o: te.max(conv[b, i, j, o], 0.0), name="relu")
    ph, pw = te.reduce_axis((0, 2), "ph"), te.reduce_axis((0, 2), "pw")
    pooled = te.compute((n, size // 2, size // 2, c_out), lambda b, i, j, o: te.max(
        relu[b, 2 * i + ph, 2 * j + pw, o], axis=[ph, pw]), name="pool")
    func = te.create_prim_func([x, w, pooled]).with_attr("global_symbol", "main")
    streamed = stream_rows(func)

    rng = np.random.default_rng(1)
    xs = rng.standard_normal((n, size + 2, size + 2, c_in)).astype(np.float32)
    ws = rng.standard_normal((3, 3, c_in, c_out)).astype(np.float32)
    target = tvm.target.Target("llvm")
    library = tvm.compile(tvm.IRModule({"main": streamed}), target=target)
    out = tvm.runtime.tensor(np.zeros((n, size // 2, size // 2, c_out), np.float32))
    library["main"](tvm.runtime.tensor(xs), tvm.runtime.tensor(ws), out)
    full = sum(xs[:, i:i + size, j:j + size, :] @ ws[i, j] for i in range(3) for j in range(3))
    expected = np.maximum(full, 0).reshape(n, size // 2, 2, size // 2, 2, c_out).max(axis=(2, 4))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)

    (rows,) = lowered_workspace_per_kernel(tvm.IRModule({"main": streamed}), target).values()
    assert rows <= 2 * size * c_out * 4 + 256  # two rows of the convolution, not a sample (2304 bytes)
