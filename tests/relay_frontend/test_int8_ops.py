"""Integer inference ops against numpy integer arithmetic written from the documented formulas."""
import numpy as np
import pytest

from aotnn import Tensor, ops

RNG = np.random.default_rng(7)


def _conv_ref(x, w, zx, zw, stride, pads, groups):
    """sum((x - zx) * (w - zw)) in int64, zero-padded after subtracting zx (real zero)."""
    x = x.astype(np.int64) - zx
    w = w.astype(np.int64) - (0 if zw is None else zw.reshape(-1, 1, 1, 1))
    (top, bottom), (left, right) = pads
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    per_group = o // groups
    for oc in range(o):
        g = oc // per_group
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(oh):
            for j in range(ow):
                patch = xs[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out


@pytest.mark.parametrize("xdtype, zx, use_zw, stride, pad_mode, groups", [
    ("uint8", 17, False, 1, "same", 1),
    ("uint8", 200, True, 2, "same", 2),
    ("int8", 0, False, 1, "valid", 1),
    ("int8", -3, True, 1, "pad", 1),
])
def test_int8_conv2d_matches_integer_reference(xdtype, zx, use_zw, stride, pad_mode, groups):
    info = np.iinfo(xdtype)
    x = RNG.integers(info.min, info.max + 1, (2, 4, 7, 7)).astype(xdtype)
    w = RNG.integers(-128, 128, (6, 4 // groups, 3, 3)).astype(np.int8)
    zw = RNG.integers(-9, 10, (6,)).astype(np.int32) if use_zw else None
    acc = ops.int8_conv2d(Tensor(x), Tensor(w), zx, None if zw is None else Tensor(zw), stride, pad_mode,
                          1 if pad_mode == "pad" else 0, 1, groups).asnumpy()
    if pad_mode == "valid":
        pads = ((0, 0), (0, 0))
    elif pad_mode == "pad":
        pads = ((1, 1), (1, 1))
    else:
        out = -(-7 // stride)
        need = max(0, (out - 1) * stride + 3 - 7)
        pads = ((need // 2, need - need // 2),) * 2
    assert acc.dtype == np.int32
    np.testing.assert_array_equal(acc, _conv_ref(x, w, zx, zw, stride, pads, groups))


@pytest.mark.parametrize("xdtype, zx, use_zw", [("uint8", 128, False), ("int8", 5, True)])
def test_int8_dense_matches_integer_reference(xdtype, zx, use_zw):
    info = np.iinfo(xdtype)
    x = RNG.integers(info.min, info.max + 1, (3, 40)).astype(xdtype)
    w = RNG.integers(-128, 128, (5, 40)).astype(np.int8)
    zw = RNG.integers(-9, 10, (5,)).astype(np.int32) if use_zw else None
    acc = ops.int8_dense(Tensor(x), Tensor(w), zx, None if zw is None else Tensor(zw)).asnumpy()
    w_ref = w.astype(np.int64) - (0 if zw is None else zw[:, None])
    assert acc.dtype == np.int32
    np.testing.assert_array_equal(acc, (x.astype(np.int64) - zx) @ w_ref.T)


def test_weight_sums_folded_leaves_out_the_input_zero_point_terms():
    x = RNG.integers(0, 256, (2, 4, 7, 7)).astype(np.uint8)
    w = RNG.integers(-128, 128, (6, 4, 3, 3)).astype(np.int8)
    zw = RNG.integers(-9, 10, (6,)).astype(np.int32)
    full = _conv_ref(x, w, 17, zw, 1, ((1, 1), (1, 1)), 1)
    folded_terms = 17 * (w.astype(np.int64) - zw[:, None, None, None]).reshape(6, -1).sum(axis=1)
    acc = ops.int8_conv2d(Tensor(x), Tensor(w), 17, Tensor(zw), 1, "same", 0, 1, 1, True).asnumpy()
    np.testing.assert_array_equal(acc, full + folded_terms[None, :, None, None])
    xd = x[:, :, 0, :].reshape(2, 28)
    wd = w[:, :, 0, :].reshape(6, 12)
    wd = np.concatenate([wd, wd, wd[:, :4]], axis=1)  # (6, 28)
    dense = ops.int8_dense(Tensor(xd), Tensor(wd), 17, Tensor(zw), True).asnumpy()
    ref = (xd.astype(np.int64) - 17) @ (wd.astype(np.int64) - zw[:, None]).T
    np.testing.assert_array_equal(dense, ref + 17 * (wd.astype(np.int64) - zw[:, None]).sum(axis=1))


def test_int8_quantize_per_channel_rounds_half_to_even():
    x = RNG.normal(size=(2, 3, 4, 4)).astype(np.float32) * 3
    x[0, 0, 0, :4] = [0.25, 0.75, -0.25, 1.25]  # exact halves at scale 0.5
    scale = np.array([0.5, 0.02, 0.1], np.float32)
    q = ops.int8_quantize(Tensor(x), Tensor(scale), 3, 0, 255, "uint8").asnumpy()
    ref = np.clip(np.round(x / scale[:, None, None]) + 3, 0, 255).astype(np.uint8)
    assert q.dtype == np.uint8
    np.testing.assert_array_equal(q, ref)
    np.testing.assert_array_equal(q[0, 0, 0, :4], [3, 5, 3, 5])


def test_int8_quantize_narrow_symmetric_range_and_dequantize():
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    scale = np.array([0.01], np.float32)
    q = ops.int8_quantize(Tensor(x), Tensor(scale), 0, -127, 127, "int8").asnumpy()
    np.testing.assert_array_equal(q, np.clip(np.round(x / scale), -127, 127).astype(np.int8))
    back = ops.int8_dequantize(Tensor(q), Tensor(np.full(6, 0.01, np.float32)), 0, axis=1).asnumpy()
    np.testing.assert_allclose(back, q.astype(np.float32) * np.float32(0.01), rtol=0, atol=0)
    u = np.array([[0, 7, 255]], np.uint8)
    deq = ops.int8_dequantize(Tensor(u), Tensor(np.array([0.5], np.float32)), 7).asnumpy()
    np.testing.assert_array_equal(deq, [[-3.5, 0.0, 124.0]])


def test_int8_requantize_matches_float32_formula():
    acc = RNG.integers(-40000, 40000, (2, 3, 5, 5)).astype(np.int32)
    bias = np.array([100, -2000, 7], np.int32)
    mult = np.array([0.0031, 0.0007, 0.012], np.float32)
    y = ops.int8_requantize(Tensor(acc), Tensor(bias), Tensor(mult), 10, 10, 255, "uint8").asnumpy()
    total = (acc + bias[:, None, None]).astype(np.float32) * mult[:, None, None]
    ref = np.clip(np.round(total) + 10, 10, 255).astype(np.uint8)
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, ref)
    y2 = ops.int8_requantize(Tensor(acc[:, :, 0, 0].copy()), None, Tensor(mult)).asnumpy()
    np.testing.assert_array_equal(y2, np.clip(np.round(acc[:, :, 0, 0].astype(np.float32) * mult), -128, 127))


def test_int8_dynamic_scale():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    s = ops.int8_dynamic_scale(Tensor(x)).asnumpy()
    assert s.shape == (1,)
    np.testing.assert_allclose(s, [np.abs(x).max() / 127], rtol=1e-6)


def test_int8_ops_reject_bad_operands():
    x = Tensor(np.zeros((1, 4, 5, 5), np.float32))
    w = Tensor(np.zeros((2, 4, 3, 3), np.int8))
    with pytest.raises(Exception, match="int8 or uint8 input"):
        ops.int8_conv2d(x, w)
    with pytest.raises(Exception, match="x_zero_point"):
        ops.int8_conv2d(Tensor(np.zeros((1, 4, 5, 5), np.uint8)), w, 300)
    with pytest.raises(Exception, match="out_dtype"):
        ops.int8_quantize(x, Tensor(np.ones(1, np.float32)), out_dtype="float32")
    with pytest.raises(Exception, match="scale"):
        ops.int8_quantize(x, Tensor(np.ones(3, np.float32)))


def test_int8_products_get_the_int8_default_schedule():
    import tvm
    from tvm import te, topi

    from schedules.defaults import cpu_info, schedule_with_rule

    target = tvm.target.Target({"kind": "llvm", "mcpu": "haswell", "num-cores": 2})
    x = te.placeholder((1, 6, 14, 14), "uint8", name="x")
    w = te.placeholder((16, 6, 5, 5), "int8", name="w")
    conv = te.create_prim_func([x, w, topi.nn.conv2d_nchw(x, w, 1, 0, 1, out_dtype="int32")])
    assert schedule_with_rule(conv, cpu_info(target), target)[1] == "int8"
    a = te.placeholder((4, 400), "int8", name="a")
    b = te.placeholder((120, 400), "int8", name="b")
    dense = te.create_prim_func([a, b, topi.nn.dense(a, b, out_dtype="int32")])
    assert schedule_with_rule(dense, cpu_info(target), target)[1] == "int8"
    f = te.placeholder((4, 400), "float32", name="f")
    g = te.placeholder((120, 400), "float32", name="g")
    float_dense = te.create_prim_func([f, g, topi.nn.dense(f, g)])
    assert schedule_with_rule(float_dense, cpu_info(target), target)[1] != "int8"


@pytest.mark.parametrize("mcpu", ["haswell", "skylake-avx512"])
def test_conv2d_with_fused_requantize_matches_integer_reference(mcpu, monkeypatch):
    """The product and its requantization epilogue in one kernel (the int8 schedule's fused path)."""
    with open("/proc/cpuinfo", encoding="utf-8") as stream:
        if mcpu == "skylake-avx512" and not any(l.startswith("flags") and "avx512f" in l.split() for l in stream):
            pytest.skip("the host has no AVX-512")
    monkeypatch.setenv("AOTNN_MCPU", mcpu)
    x = RNG.integers(0, 256, (1, 6, 14, 14)).astype(np.uint8)
    w = RNG.integers(-128, 128, (16, 6, 5, 5)).astype(np.int8)
    bias = RNG.integers(-20000, 20000, 16).astype(np.int32)
    mult = RNG.uniform(2e-5, 2e-4, 16).astype(np.float32)
    y = ops.int8_requantize(ops.int8_conv2d(Tensor(x), Tensor(w), 0, None, 1, "valid", 0, 1, 1, True),
                            Tensor(bias), Tensor(mult), 128, 128, 255, "uint8").asnumpy()
    acc = _conv_ref(x, w, 0, None, 1, ((0, 0), (0, 0)), 1) + bias.reshape(1, -1, 1, 1)
    total = acc.astype(np.float32) * mult.reshape(1, -1, 1, 1)
    ref = np.clip(np.round(total) + 128, 128, 255).astype(np.uint8)
    np.testing.assert_array_equal(y, ref)
