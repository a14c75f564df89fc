"""save_checkpoint / load_checkpoint / load_param_into_net with MindSpore 2.x semantics."""
import os
from collections import OrderedDict

import numpy as np
import pytest

from aotnn.common import dtype as mstype
from aotnn.common.parameter import Parameter
from aotnn.common.tensor import Tensor
from aotnn.train import serialization as ser
from aotnn.train.checkpoint_format import read_checkpoint
from aotnn.train.serialization import load_checkpoint, load_param_into_net, save_checkpoint

from .wire import ld, varint


# ------------------------------------------------------------------ checkpoint bytes encoded by hand
def _entry(tag, dims, tensor_type, content):
    tensor = b"".join(varint(8) + varint(d) for d in dims) + ld(2, tensor_type.encode()) + ld(3, content)
    return ld(1, ld(1, tag.encode()) + ld(2, tensor))


# ------------------------------------------------------------------------------------------------ networks
class FakeCell:
    """Just what the serialization functions use of a Cell."""

    def __init__(self, **params):
        self._params = OrderedDict((name, Parameter(value, name=name)) for name, value in params.items())

    def parameters_and_names(self):
        return iter(self._params.items())

    def parameters_dict(self):
        return OrderedDict(self._params)


def _real_net():
    nn = pytest.importorskip("aotnn.nn")
    if not hasattr(nn, "Dense") or not hasattr(nn, "Conv2d"):
        pytest.skip("aotnn.nn.Dense/Conv2d not available")

    class LeNetish(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 2, 3)
            self.fc = nn.Dense(4, 3)

        def construct(self, x):
            return self.fc(x)

    return LeNetish()


def _params(net):
    return OrderedDict((name, p.asnumpy()) for name, p in net.parameters_and_names())


@pytest.fixture
def fake():
    rng = np.random.default_rng(0)
    return FakeCell(**{"conv1.weight": rng.standard_normal((2, 1, 3, 3)).astype(np.float32),
                       "fc.weight": rng.standard_normal((3, 4)).astype(np.float32),
                       "fc.bias": rng.standard_normal(3).astype(np.float32)})


# -------------------------------------------------------------------------------------------------- tests
def test_real_net_round_trip(tmp_path):
    net = _real_net()
    path = str(tmp_path / "lenet")
    save_checkpoint(net, path)
    assert os.path.exists(path + ".ckpt")
    saved = _params(net)
    assert list(read_checkpoint(path + ".ckpt")) == list(saved)
    assert {"conv1.weight", "fc.weight", "fc.bias"} <= set(saved)
    other = _real_net()
    param_dict = load_checkpoint(path + ".ckpt")
    assert all(isinstance(p, Parameter) and p.name == k for k, p in param_dict.items())
    not_loaded, ckpt_not_loaded = load_param_into_net(other, param_dict)
    assert not_loaded == [] and ckpt_not_loaded == []
    for name, value in _params(other).items():
        np.testing.assert_array_equal(value, saved[name])


def test_fake_cell_round_trip_and_load_into_net(tmp_path, fake):
    path = str(tmp_path / "net.ckpt")
    save_checkpoint(fake, path)
    target = FakeCell(**{k: np.zeros(p.shape, np.float32) for k, p in fake.parameters_dict().items()})
    param_dict = load_checkpoint(path, net=target)
    assert list(param_dict) == ["conv1.weight", "fc.weight", "fc.bias"]
    for name, param in target.parameters_and_names():
        np.testing.assert_array_equal(param.asnumpy(), fake.parameters_dict()[name].asnumpy())


def test_save_list_dict_and_choice_func(tmp_path, fake):
    params = list(fake.parameters_dict().values())
    path = str(tmp_path / "l.ckpt")
    save_checkpoint([{"name": "a", "data": Tensor(np.ones(2, np.float32))},
                     {"name": "b", "data": np.arange(3, dtype=np.int16)}], path)
    got = read_checkpoint(path)
    assert list(got) == ["a", "b"] and got["b"].dtype == np.int16
    save_checkpoint(params, path, choice_func=lambda n: n.startswith("fc"))
    assert list(read_checkpoint(path)) == ["fc.weight", "fc.bias"]
    save_checkpoint(load_checkpoint(path), path)  # dict, as load_checkpoint returns
    assert list(read_checkpoint(path)) == ["fc.weight", "fc.bias"]
    save_checkpoint(fake, path, choice_func=lambda n: n.endswith("weight"))
    assert list(read_checkpoint(path)) == ["conv1.weight", "fc.weight"]


def test_append_dict(tmp_path, fake):
    path = str(tmp_path / "a.ckpt")
    save_checkpoint(fake, path, append_dict={"epoch_num": 3, "lr": 0.5, "flag": True, "note": "hi",
                                             "extra": Tensor(np.ones((2, 2), np.float16))},
                    choice_func=lambda n: n == "fc.bias")
    got = read_checkpoint(path)
    assert list(got) == ["fc.bias", "epoch_num", "lr", "flag", "note", "extra"]
    assert got["epoch_num"].dtype == np.int64 and got["epoch_num"].shape == () and got["epoch_num"] == 3
    assert got["lr"].dtype == np.float32 and got["lr"] == 0.5
    assert got["flag"].dtype == np.bool_ and got["flag"]
    assert got["extra"].dtype == np.float16
    loaded = load_checkpoint(path)
    assert loaded["note"] == "hi" and isinstance(loaded["note"], str)
    assert loaded["epoch_num"].dtype == mstype.int64 and loaded["epoch_num"].shape == ()


def test_mindspore_style_hand_made_checkpoint(tmp_path):
    weight = np.arange(18, dtype="<f4").reshape(2, 1, 3, 3)
    bias = np.array([0.5, -1.0, 2.0], dtype="<f4")
    path = tmp_path / "ms.ckpt"
    path.write_bytes(_entry("conv1.weight", [2, 1, 3, 3], "Float32", weight.tobytes())
                     + _entry("fc.bias", [3], "Float32", bias.tobytes())
                     + _entry("global_step", [1], "Int32", np.array([100], "<i4").tobytes())
                     + _entry("learning_rate", [0], "Float32", np.array(0.01, "<f4").tobytes()))
    param_dict = load_checkpoint(str(path))
    assert list(param_dict) == ["conv1.weight", "fc.bias", "global_step", "learning_rate"]
    assert param_dict["global_step"].shape == (1,) and param_dict["global_step"].dtype == mstype.int32
    assert int(param_dict["global_step"].asnumpy()[0]) == 100
    assert param_dict["learning_rate"].shape == () and param_dict["learning_rate"].dtype == mstype.float32
    assert float(param_dict["learning_rate"].asnumpy()) == pytest.approx(0.01)
    net = FakeCell(**{"conv1.weight": np.zeros((2, 1, 3, 3), np.float32), "fc.bias": np.zeros(3, np.float32),
                      "fc.weight": np.zeros((3, 4), np.float32)})
    not_loaded, ckpt_not_loaded = load_param_into_net(net, param_dict)
    assert not_loaded == ["fc.weight"]
    assert ckpt_not_loaded == ["global_step", "learning_rate"]
    np.testing.assert_array_equal(net.parameters_dict()["conv1.weight"].asnumpy(), weight)
    np.testing.assert_array_equal(net.parameters_dict()["fc.bias"].asnumpy(), bias)


def test_load_filters(tmp_path, fake):
    path = str(tmp_path / "f.ckpt")
    save_checkpoint(fake, path)
    assert list(load_checkpoint(path, filter_prefix="fc")) == ["conv1.weight"]
    assert list(load_checkpoint(path, filter_prefix=["conv1", "fc.b"])) == ["fc.weight"]
    assert list(load_checkpoint(path, specify_prefix=("fc.",))) == ["fc.weight", "fc.bias"]
    assert list(load_checkpoint(path, choice_func=lambda n: "bias" in n)) == ["fc.bias"]
    # choice_func is ignored when a prefix argument is given (MindSpore's rule)
    assert list(load_checkpoint(path, specify_prefix="fc", choice_func=lambda n: False)) == ["fc.weight", "fc.bias"]
    with pytest.raises(ValueError, match="empty"):
        load_checkpoint(path, specify_prefix="nothing")
    with pytest.raises(TypeError, match="filter_prefix"):
        load_checkpoint(path, filter_prefix=3)
    with pytest.raises(ValueError, match="filter_prefix"):
        load_checkpoint(path, filter_prefix=[])


def test_load_file_errors(tmp_path):
    with pytest.raises(ValueError, match="absent.ckpt") as info:
        load_checkpoint(str(tmp_path / "absent.ckpt"))
    assert isinstance(info.value, FileNotFoundError)
    (tmp_path / "x.bin").write_bytes(b"")
    with pytest.raises(ValueError, match=".ckpt"):
        load_checkpoint(str(tmp_path / "x.bin"))
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"\xff" * 32)
    with pytest.raises(ValueError, match="not a valid"):
        load_checkpoint(str(bad))
    with pytest.raises(TypeError, match="ckpt_file_name"):
        load_checkpoint(3)


def test_shape_mismatch_names_parameter(tmp_path, fake):
    path = str(tmp_path / "s.ckpt")
    save_checkpoint(fake, path)
    net = FakeCell(**{"fc.weight": np.zeros((4, 4), np.float32)})
    with pytest.raises(ValueError, match=r"fc\.weight.*\(4, 4\).*\(3, 4\)") as info:
        load_checkpoint(path, net=net)
    assert isinstance(info.value, RuntimeError)  # what MindSpore raises


def test_trailing_ones_reshaped():
    net = FakeCell(w=np.zeros((3, 2), np.float32))
    load_param_into_net(net, {"w": Parameter(np.ones((3, 2, 1, 1), np.float32), name="w")})
    assert net.parameters_dict()["w"].shape == (3, 2)
    assert (net.parameters_dict()["w"].asnumpy() == 1).all()


def test_dtype_conversion_rules():
    net = FakeCell(w=np.zeros(3, np.float32), i=np.zeros(2, np.int32))
    values = {"w": Parameter(np.array([1.5, 2.5, 3.5], np.float16), name="w"),
              "i": Parameter(np.array([7, 8], np.int64), name="i")}
    assert load_param_into_net(net, values) == ([], [])
    assert net.parameters_dict()["w"].dtype == mstype.float32
    np.testing.assert_array_equal(net.parameters_dict()["w"].asnumpy(), [1.5, 2.5, 3.5])
    assert net.parameters_dict()["i"].dtype == mstype.int32
    with pytest.raises(ValueError, match="'w'.*float32.*float16"):
        load_param_into_net(net, {"w": values["w"]}, strict_load=True)
    with pytest.raises(ValueError, match="'w'.*float32.*int32"):
        load_param_into_net(net, {"w": Parameter(np.zeros(3, np.int32), name="w")})


def test_prefix_fallback():
    net = FakeCell(**{"fc.weight": np.zeros((2, 2), np.float32), "fc.bias": np.zeros(2, np.float32)})
    ckpt = {"network.fc.weight": Parameter(np.ones((2, 2), np.float32), name="network.fc.weight"),
            "network.fc.bias": Parameter(np.ones(2, np.float32), name="network.fc.bias"),
            "moments.fc.weight": Parameter(np.ones((2, 2), np.float32), name="moments.fc.weight")}
    not_loaded, ckpt_not_loaded = load_param_into_net(net, ckpt)
    # MindSpore 2.10 (measured): the prefix fallback loads but does not strike keys from ckpt_not_load
    assert not_loaded == [] and ckpt_not_loaded == list(ckpt)
    assert (net.parameters_dict()["fc.bias"].asnumpy() == 1).all()
    net2 = FakeCell(**{"fc.weight": np.zeros((2, 2), np.float32)})
    assert load_param_into_net(net2, ckpt, strict_load=True) == (["fc.weight"], list(ckpt))


def test_argument_errors(tmp_path, fake):
    path = str(tmp_path / "e.ckpt")
    with pytest.raises(TypeError, match="save_obj"):
        save_checkpoint(42, path)
    with pytest.raises(TypeError, match="integrated_save"):
        save_checkpoint(fake, path, integrated_save=1)
    with pytest.raises(TypeError, match="async_save"):
        save_checkpoint(fake, path, async_save="yes")
    with pytest.raises(TypeError, match="ckpt_file_name"):
        save_checkpoint(fake, 5)
    with pytest.raises(TypeError, match="append_dict"):
        save_checkpoint(fake, path, append_dict={"x": [1, 2]})
    with pytest.raises(IsADirectoryError):
        save_checkpoint(fake, str(tmp_path))
    with pytest.raises(NotImplementedError, match="enc_key"):
        save_checkpoint(fake, path, enc_key=b"0" * 16)
    with pytest.raises(NotImplementedError, match="format"):
        save_checkpoint(fake, path, format="safetensors")
    save_checkpoint(fake, path)
    with pytest.raises(NotImplementedError, match="dec_key"):
        load_checkpoint(path, dec_key=b"0" * 16)
    with pytest.raises(TypeError, match="net"):
        load_param_into_net(object(), {})
    with pytest.raises(TypeError, match="parameter_dict"):
        load_param_into_net(fake, [])
    with pytest.raises(TypeError, match="parameter_dict"):
        load_param_into_net(fake, {"fc.bias": [1, 2, 3]})
    with pytest.raises(TypeError, match="strict_load"):
        load_param_into_net(fake, {}, strict_load=None)


def test_async_save(tmp_path, fake):
    path = str(tmp_path / "async.ckpt")
    save_checkpoint(fake, path, async_save=True)
    ser._wait_async_saves()
    assert list(read_checkpoint(path)) == ["conv1.weight", "fc.weight", "fc.bias"]


def test_package_exports():
    aotnn = pytest.importorskip("aotnn")
    if not hasattr(aotnn, "save_checkpoint"):
        pytest.skip("aotnn does not export the serialization API yet")
    assert aotnn.save_checkpoint is save_checkpoint and aotnn.load_checkpoint is load_checkpoint
