"""RNN, LSTM, GRU and their cells against PyTorch's with the same weights."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import aotnn
from aotnn import Tensor, nn

_TORCH = {"RNN": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}


def _rng(seed=0):
    return np.random.default_rng(seed)


def _torch_twin(net, kind: str, **extra):
    """The PyTorch layer of the same configuration holding ``net``'s weights (same parameter names)."""
    ref = _TORCH[kind](net.input_size, net.hidden_size, net.num_layers, bias=net.has_bias,
                       batch_first=net.batch_first, bidirectional=net.bidirectional, **extra)
    with torch.no_grad():
        for name, param in ref.named_parameters():
            param.copy_(torch.tensor(getattr(net, name).asnumpy()))
    return ref.eval()


def _randomize(net, seed=1, scale=0.4):
    for i, param in enumerate(net.get_parameters()):
        param.set_data(_rng(seed + i).uniform(-scale, scale, param.shape).astype(np.float32))


def _run_torch(ref, x, hx=None, lengths=None):
    xt = torch.tensor(x)
    if hx is not None:
        hx = tuple(torch.tensor(h) for h in hx) if isinstance(hx, tuple) else torch.tensor(hx)
    with torch.no_grad():
        if lengths is None:
            out, h = ref(xt, hx)
        else:
            packed = torch.nn.utils.rnn.pack_padded_sequence(xt, torch.tensor(lengths), batch_first=ref.batch_first,
                                                             enforce_sorted=False)
            out, h = ref(packed, hx)
            total = x.shape[1] if ref.batch_first else x.shape[0]
            out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=ref.batch_first, total_length=total)
    if isinstance(h, tuple):
        return out.numpy(), tuple(t.numpy() for t in h)
    return out.numpy(), h.numpy()


def _state(num, batch, hidden, seed):
    return _rng(seed).normal(0, 0.5, (num, batch, hidden)).astype(np.float32)


@pytest.mark.parametrize("kind,kwargs", [
    ("RNN", dict(num_layers=2, batch_first=True)),
    ("RNN", dict(nonlinearity="relu", bidirectional=True, has_bias=False)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(num_layers=2, batch_first=True, bidirectional=True)),
])
def test_matches_torch(kind, kwargs):
    aotnn.set_seed(0)
    net = getattr(nn, kind)(6, 5, **kwargs)
    _randomize(net)
    extra = {"nonlinearity": kwargs["nonlinearity"]} if "nonlinearity" in kwargs else {}
    ref = _torch_twin(net, kind, **extra)
    batch, steps = 3, 4
    shape = (batch, steps, 6) if net.batch_first else (steps, batch, 6)
    x = _rng(2).normal(0, 1, shape).astype(np.float32)
    directions = 2 if net.bidirectional else 1
    num = net.num_layers * directions
    hx = (_state(num, batch, 5, 3), _state(num, batch, 5, 4)) if kind == "LSTM" else _state(num, batch, 5, 3)
    out, h = net(Tensor(x), tuple(Tensor(s) for s in hx) if kind == "LSTM" else Tensor(hx))
    ref_out, ref_h = _run_torch(ref, x, hx)
    assert out.shape == ref_out.shape
    np.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-5, atol=1e-5)
    if kind == "LSTM":
        np.testing.assert_allclose(h[0].asnumpy(), ref_h[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(h[1].asnumpy(), ref_h[1], rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(h.asnumpy(), ref_h, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind,kwargs", [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(batch_first=True, bidirectional=True)),
    ("RNN", dict(num_layers=2)),
])
def test_seq_length_masks_padding_like_packed_sequences(kind, kwargs):
    aotnn.set_seed(0)
    net = getattr(nn, kind)(4, 3, **kwargs)
    _randomize(net, seed=7)
    ref = _torch_twin(net, kind)
    batch, steps = 3, 5
    lengths = np.array([5, 2, 3], np.int32)
    shape = (batch, steps, 4) if net.batch_first else (steps, batch, 4)
    x = _rng(5).normal(0, 1, shape).astype(np.float32)
    out, h = net(Tensor(x), seq_length=Tensor(lengths))
    ref_out, ref_h = _run_torch(ref, x, lengths=lengths)
    np.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-5, atol=1e-5)
    for got, want in zip(h if kind == "LSTM" else (h,), ref_h if kind == "LSTM" else (ref_h,)):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_float16_gru():
    aotnn.set_seed(0)
    net = nn.GRU(6, 5, num_layers=2)
    _randomize(net, seed=11)
    ref = _torch_twin(net, "GRU")
    x = _rng(6).normal(0, 1, (4, 2, 6)).astype(np.float32)
    hx = _state(2, 2, 5, 8)
    out, h = net(Tensor(x.astype(np.float16)), Tensor(hx.astype(np.float16)))
    assert out.dtype == aotnn.float16 and h.dtype == aotnn.float16
    ref_out, ref_h = _run_torch(ref, x, hx)
    np.testing.assert_allclose(out.asnumpy().astype(np.float32), ref_out, atol=1e-2)
    np.testing.assert_allclose(h.asnumpy().astype(np.float32), ref_h, atol=1e-2)


def test_documented_example_shapes():
    net = nn.LSTM(10, 16, 2, has_bias=True, batch_first=True, bidirectional=False)
    x = Tensor(np.ones([3, 5, 10]).astype(np.float32))
    h0 = Tensor(np.ones([1 * 2, 3, 16]).astype(np.float32))
    c0 = Tensor(np.ones([1 * 2, 3, 16]).astype(np.float32))
    output, (hn, cn) = net(x, (h0, c0))
    assert output.shape == (3, 5, 16) and hn.shape == (2, 3, 16) and cn.shape == (2, 3, 16)


def test_parameter_names_and_order():
    net = nn.LSTM(3, 2, num_layers=2, bidirectional=True)
    names = [p.name for p in net.get_parameters()]
    groups = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    assert names == [f"{g}_l{k}{s}" for g in groups for k in range(2) for s in ("", "_reverse")]
    assert net.weight_ih_l1.shape == (8, 4) and net.weight_hh_l0_reverse.shape == (8, 2)
    bound = 1 / np.sqrt(2)
    assert all(np.abs(p.asnumpy()).max() <= bound for p in net.get_parameters())
    assert [p.name for p in nn.GRU(3, 2, has_bias=False).get_parameters()] == ["weight_ih_l0", "weight_hh_l0"]

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(3, 2)

    assert [p.name for p in Net().get_parameters()][:2] == ["rnn.weight_ih_l0", "rnn.weight_hh_l0"]


def test_init_is_reproducible_under_set_seed():
    aotnn.set_seed(5)
    a = nn.GRU(3, 4).weight_ih_l0.asnumpy()
    aotnn.set_seed(5)
    b = nn.GRU(3, 4).weight_ih_l0.asnumpy()
    np.testing.assert_array_equal(a, b)


def test_dropout_between_layers_only_in_training():
    aotnn.set_seed(0)
    net = nn.RNN(6, 5, num_layers=2, dropout=0.5, batch_first=True)
    _randomize(net)
    ref = _torch_twin(net, "RNN")
    x = _rng(2).normal(0, 1, (3, 4, 6)).astype(np.float32)
    hx = _state(2, 3, 5, 3)
    out, _ = net(Tensor(x), Tensor(hx))  # inference: no dropout
    np.testing.assert_allclose(out.asnumpy(), _run_torch(ref, x, hx)[0], rtol=1e-5, atol=1e-5)
    net.set_train()
    aotnn.set_seed(1)
    first = net(Tensor(x), Tensor(hx))[0].asnumpy()
    second = net(Tensor(x), Tensor(hx))[0].asnumpy()
    aotnn.set_seed(1)
    replay = net(Tensor(x), Tensor(hx))[0].asnumpy()
    assert not np.allclose(first, out.asnumpy())
    assert not np.allclose(first, second)
    np.testing.assert_array_equal(first, replay)


@pytest.mark.parametrize("kind", ["RNNCell", "GRUCell"])
def test_cells_match_torch(kind):
    aotnn.set_seed(0)
    kwargs = {"nonlinearity": "relu"} if kind == "RNNCell" else {}
    net = getattr(nn, kind)(6, 5, **kwargs)
    _randomize(net, seed=3)
    ref = getattr(torch.nn, kind)(6, 5, **kwargs)
    with torch.no_grad():
        for name, param in ref.named_parameters():
            param.copy_(torch.tensor(getattr(net, name).asnumpy()))
    x = _rng(1).normal(0, 1, (3, 6)).astype(np.float32)
    h = _rng(2).normal(0, 1, (3, 5)).astype(np.float32)
    with torch.no_grad():
        want = ref(torch.tensor(x), torch.tensor(h)).numpy()
    np.testing.assert_allclose(net(Tensor(x), Tensor(h)).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_lstm_cell_matches_torch_and_float16():
    aotnn.set_seed(0)
    net = nn.LSTMCell(6, 5, has_bias=False)
    assert [p.name for p in net.get_parameters()] == ["weight_ih", "weight_hh"]
    _randomize(net, seed=4)
    ref = torch.nn.LSTMCell(6, 5, bias=False)
    with torch.no_grad():
        for name, param in ref.named_parameters():
            param.copy_(torch.tensor(getattr(net, name).asnumpy()))
    x = _rng(1).normal(0, 1, (3, 6)).astype(np.float32)
    h, c = (_rng(s).normal(0, 1, (3, 5)).astype(np.float32) for s in (2, 3))
    with torch.no_grad():
        want_h, want_c = (t.numpy() for t in ref(torch.tensor(x), (torch.tensor(h), torch.tensor(c))))
    got_h, got_c = net(Tensor(x), (Tensor(h), Tensor(c)))
    np.testing.assert_allclose(got_h.asnumpy(), want_h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_c.asnumpy(), want_c, rtol=1e-5, atol=1e-5)
    half_h, half_c = net(Tensor(x.astype(np.float16)), (Tensor(h.astype(np.float16)), Tensor(c.astype(np.float16))))
    assert half_h.dtype == aotnn.float16
    np.testing.assert_allclose(half_h.asnumpy().astype(np.float32), want_h, atol=1e-2)
    np.testing.assert_allclose(half_c.asnumpy().astype(np.float32), want_c, atol=1e-2)


def test_rnn_cell_documented_loop():
    net = nn.RNNCell(10, 16)
    x = Tensor(np.ones([5, 3, 10]).astype(np.float32))
    hx = Tensor(np.ones([3, 16]).astype(np.float32))
    output = []
    for i in range(5):
        hx = net(x[i], hx)
        output.append(hx)
    assert output[0].shape == (3, 16)
    assert np.abs(output[-1].asnumpy()).max() <= 1.0


@pytest.mark.parametrize("make,error", [
    (lambda: nn.LSTM(10.0, 4), TypeError),
    (lambda: nn.GRU(3, 0), ValueError),
    (lambda: nn.RNN(3, 4, num_layers="2"), TypeError),
    (lambda: nn.RNN(3, 4, has_bias=1), TypeError),
    (lambda: nn.GRU(3, 4, bidirectional="yes"), TypeError),
    (lambda: nn.LSTM(3, 4, dropout=1.0), ValueError),
    (lambda: nn.LSTM(3, 4, dropout="0.1"), TypeError),
    (lambda: nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError),
    (lambda: nn.RNNCell(3, 4, nonlinearity="gelu"), ValueError),
    (lambda: nn.GRUCell(3, 4, has_bias="no"), TypeError),
    (lambda: nn.LSTMCell(10, 12, has_bias=True, batch_first=True, bidirectional=False), ValueError),
])
def test_invalid_arguments(make, error):
    with pytest.raises(error):
        make()


def test_invalid_inputs():
    net = nn.GRU(3, 4)
    x = Tensor(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(TypeError, match="float16 or float32"):
        net(Tensor(np.zeros((2, 2, 3), np.int32)))
    with pytest.raises(ValueError, match="shape of 'hx'"):
        net(x, Tensor(np.zeros((2, 2, 4), np.float32)))
    with pytest.raises(TypeError, match="same as 'x'"):
        net(x, Tensor(np.zeros((1, 2, 4), np.float16)))
    with pytest.raises(TypeError, match="seq_length"):
        net(x, seq_length=Tensor(np.array([1.0, 2.0], np.float32)))
    with pytest.raises(TypeError, match="tuple"):
        nn.LSTM(3, 4)(x, Tensor(np.zeros((1, 2, 4), np.float32)))


def test_weight_gradients_match_torch_with_seq_length():
    aotnn.set_seed(0)
    net = nn.LSTM(4, 3, bidirectional=True, batch_first=True)
    x = _rng(9).normal(size=(2, 5, 4)).astype(np.float32)
    lengths = np.array([5, 3], np.int32)

    class Loss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lstm = net

        def construct(self, inputs, seq_length):
            return self.lstm(inputs, seq_length=seq_length)[0].sum()

    grads = aotnn.ops.GradOperation(get_by_list=True)(Loss(), net.trainable_params())(Tensor(x), Tensor(lengths))
    ref = _torch_twin(net, "LSTM")
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), torch.tensor(lengths), batch_first=True,
                                                     enforce_sorted=False)
    out, _ = torch.nn.utils.rnn.pad_packed_sequence(ref(packed)[0], batch_first=True, total_length=5)
    out.sum().backward()
    want = dict(ref.named_parameters())
    for param, grad in zip(net.trainable_params(), grads):
        np.testing.assert_allclose(grad.asnumpy(), want[param.name.split(".")[-1]].grad.numpy(), rtol=1e-4, atol=1e-5)
