"""The Cell API (MindSpore's nn.Cell documentation) and MindSpore's parameter naming rules."""
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
import relay_frontend
from aotnn import Parameter, Tensor, layers, nn, ops
from aotnn.jit.compiled import STATS

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def dense_ref(x, dense):
    out = x @ dense.weight.asnumpy().T
    return out + dense.bias.asnumpy() if dense.has_bias else out


class TwoLayer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 5)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(5, 3)
        self.fc1.bias.set_data(rand(5))
        self.fc2.bias.set_data(rand(3))

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))

    def reference(self, x):
        return dense_ref(np.maximum(dense_ref(x, self.fc1), 0), self.fc2)


class WithBN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)

    def construct(self, x):
        return self.bn(self.conv(x))


# -- construct and __call__ ------------------------------------------------------------------------
def test_construct_and_call():
    net = TwoLayer()
    x = rand(2, 4)
    out = net(Tensor(x))
    assert isinstance(out, Tensor) and out.shape == (2, 3) and out.dtype == ms.float32
    np.testing.assert_allclose(out.asnumpy(), net.reference(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net.construct(Tensor(x)).asnumpy(), net.reference(x), rtol=1e-5, atol=1e-5)
    # numpy input is accepted
    np.testing.assert_allclose(net(x).asnumpy(), net.reference(x), rtol=1e-5, atol=1e-5)


def test_multiple_inputs_and_outputs_and_constants():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.scale = Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="scale")

        def construct(self, x, y, power=2):
            s = x * self.scale + y
            return s ** power, (x - y, ops.reduce_sum(s))

    x, y = rand(3, 2), rand(3, 2)
    a, (b, c) = Net()(Tensor(x), Tensor(y))
    s = x * np.array([2.0, 3.0], np.float32) + y
    np.testing.assert_allclose(a.asnumpy(), s ** 2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), x - y, rtol=1e-6)
    np.testing.assert_allclose(c.asnumpy(), s.sum(), rtol=1e-5)
    a3, _ = Net()(Tensor(x), Tensor(y), 3)
    np.testing.assert_allclose(a3.asnumpy(), s ** 3, rtol=1e-5, atol=1e-5)


def test_base_construct_not_implemented():
    with pytest.raises(NotImplementedError):
        nn.Cell()(Tensor(rand(2)))


def test_parameter_update_is_seen_by_compiled_graph():
    net = TwoLayer()
    x = rand(2, 4)
    net(Tensor(x))
    net.fc2.weight.set_data(rand(3, 5))
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), net.reference(x), rtol=1e-5, atol=1e-5)


# -- parameters ----------------------------------------------------------------------------------
def test_parameters_and_names_and_get_parameters():
    net = WithBN()
    names = [n for n, _ in net.parameters_and_names()]
    assert names == ["conv.weight", "bn.moving_mean", "bn.moving_variance", "bn.gamma", "bn.beta"]
    assert [p.name for p in net.get_parameters()] == names
    assert [n for n, _ in net.parameters_and_names(name_prefix="net")] == ["net." + n for n in names]
    assert list(net.get_parameters(expand=False)) == []
    assert [p.name for p in net.bn.get_parameters()] == names[1:]


def test_seed_get_parameters_example():
    class TestNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.my_w1 = Parameter(Tensor(np.ones([4, 4]), ms.float32))
            self.my_w2 = Parameter(Tensor(np.ones([16]), ms.float32))

    class TestNet2(nn.Cell):
        def __init__(self):
            super().__init__()
            self.my_t1 = Parameter(Tensor(np.ones([4, 4]), ms.float32))
            self.subcell = TestNet()

    net = TestNet2()
    params = list(net.get_parameters(expand=True))
    assert [p.name for p in params] == ["my_t1", "subcell.my_w1", "subcell.my_w2"]
    assert repr(params[0]) == "Parameter (name=my_t1, shape=(4, 4), dtype=Float32, requires_grad=True)"
    assert [p.name for p in net.get_parameters(expand=False)] == ["my_t1"]


def test_trainable_and_untrainable_params():
    net = WithBN()
    assert [p.name for p in net.trainable_params()] == ["conv.weight", "bn.gamma", "bn.beta"]
    assert [p.name for p in net.untrainable_params()] == ["bn.moving_mean", "bn.moving_variance"]
    assert net.trainable_params(recurse=False) == []
    net.conv.weight.requires_grad = False
    assert "conv.weight" in [p.name for p in net.untrainable_params()]


def test_parameters_dict():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2, 2)

    d = Net().parameters_dict()
    assert isinstance(d, OrderedDict)
    assert list(d) == ["dense.weight", "dense.bias"]
    assert d["dense.weight"].shape == (2, 2) and d["dense.bias"].shape == (2,)


def test_seed_auto_prefix_false_example():
    class MyCell(nn.Cell):
        def __init__(self, forward_net):
            super().__init__(auto_prefix=False)
            self.net = forward_net
            self.relu = ops.ReLU()

        def construct(self, x):
            return self.relu(self.net(x))

    inner = nn.Conv2d(12, 24, 4, has_bias=False, weight_init="normal")
    net = MyCell(inner)
    assert net.auto_prefix is False
    params = net.trainable_params()
    assert len(params) == 1
    assert repr(params[0]) == "Parameter (name=weight, shape=(24, 12, 4, 4), dtype=Float32, requires_grad=True)"
    # ...and with the default auto_prefix the name would be the attribute path
    class Prefixed(nn.Cell):
        def __init__(self, forward_net):
            super().__init__()
            self.net = forward_net

    assert Prefixed(nn.Conv2d(12, 24, 4)).trainable_params()[0].name == "net.weight"


def test_insert_param_to_cell():
    net = nn.ReLU()
    net.insert_param_to_cell("bias", Parameter(Tensor([1, 2, 3])))
    assert repr(net.bias) == "Parameter (name=bias, shape=(3,), dtype=Int64, requires_grad=True)"
    assert [n for n, _ in net.parameters_and_names()] == ["bias"]
    named = Parameter(Tensor([1.0]), name="keep")
    net.insert_param_to_cell("other", named)
    assert net.other is named and named.name == "keep"
    with pytest.raises(KeyError):
        net.insert_param_to_cell("a.b", Parameter(Tensor([1.0])))
    with pytest.raises(TypeError):
        net.insert_param_to_cell("c", Tensor([1.0]))


# -- cells --------------------------------------------------------------------------------------
def test_cells_name_cells_cells_and_names():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2, 2)

    net = Net()
    assert repr(net.cells()) == "odict_values([Dense(input_channels=2, output_channels=2, has_bias=True)])"
    assert list(net.cells()) == [net.dense]
    assert repr(net.name_cells()) == \
        "OrderedDict([('dense', Dense(input_channels=2, output_channels=2, has_bias=True))])"
    outer = WithBN()
    names = [name for name, _ in outer.cells_and_names()]
    assert names == ["", "conv", "bn"]
    assert [c for _, c in outer.cells_and_names()][0] is outer
    assert [n for n, _ in outer.cells_and_names(name_prefix="top")] == ["top", "top.conv", "top.bn"]


def test_shared_cell_listed_once():
    shared = nn.Dense(3, 3)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = shared
            self.b = shared

        def construct(self, x):
            return self.b(self.a(x))

    net = Net()
    assert [n for n, _ in net.cells_and_names()] == ["", "a"]
    assert len(list(net.get_parameters())) == 2
    x = rand(2, 3)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), dense_ref(dense_ref(x, shared), shared), rtol=1e-5,
                               atol=1e-5)


def test_insert_child_to_cell_keeps_names_and_repr():
    net1 = nn.ReLU()
    net2 = nn.Dense(2, 2)
    net1.insert_child_to_cell("child", net2)
    assert repr(net1) == "ReLU(\n  (child): Dense(input_channels=2, output_channels=2, has_bias=True)\n)"
    assert net2.weight.name == "weight" and net2.bias.name == "bias"     # not renamed
    assert [n for n, _ in net1.parameters_and_names()] == ["child.weight", "child.bias"]
    assert net1.child is net2
    with pytest.raises(KeyError):
        net1.insert_child_to_cell("a.b", nn.ReLU())
    with pytest.raises(TypeError):
        net1.insert_child_to_cell("x", 3)


def test_apply_seed_example():
    net = nn.SequentialCell(nn.Dense(2, 2), nn.Dense(2, 2))
    visited = []

    def func(cell):
        visited.append(type(cell).__name__)
        if isinstance(cell, nn.Dense):
            cell.weight.set_data(np.ones(cell.weight.shape, np.float32))

    assert net.apply(func) is net
    assert visited == ["Dense", "Dense", "SequentialCell"]
    np.testing.assert_array_equal(net[0].weight.asnumpy(), [[1.0, 1.0], [1.0, 1.0]])
    assert repr(net) == ("SequentialCell(\n"
                         "  (0): Dense(input_channels=2, output_channels=2, has_bias=True)\n"
                         "  (1): Dense(input_channels=2, output_channels=2, has_bias=True)\n)")


# -- modes and flags --------------------------------------------------------------------------------
def test_set_train_and_training_flag():
    net = WithBN()
    assert net.training is False and net.bn.training is False
    assert net.phase == "predict"
    assert net.set_train() is net
    assert net.training and net.conv.training and net.bn.training
    assert net.phase == "train"
    net.set_train(False)
    assert not net.training and not net.bn.training


def test_set_grad_and_flags():
    net = TwoLayer()
    assert net.requires_grad is False
    assert net.set_grad() is net and net.requires_grad is True
    net.set_grad(False)
    assert net.requires_grad is False
    net.add_flags(sink_mode=True)
    assert net.sink_mode is True and net.get_flags() == {"sink_mode": True}
    net.add_flags_recursive(foo=1)
    assert net.fc1.foo == 1 and net.foo == 1


def test_to_float16_outputs_keep_float32_parameters():
    dense = nn.Dense(4, 3)
    dense.bias.set_data(rand(3))
    x = rand(2, 4)
    assert dense.to_float(ms.float16) is dense
    out = dense(Tensor(x))
    assert out.dtype == ms.float16
    assert dense.weight.dtype == ms.float32 and dense.bias.dtype == ms.float32
    w16, b16 = dense.weight.asnumpy().astype(np.float16), dense.bias.asnumpy().astype(np.float16)
    ref = (x.astype(np.float16).astype(np.float32) @ w16.astype(np.float32).T + b16.astype(np.float32))
    np.testing.assert_allclose(out.asnumpy().astype(np.float32), ref, rtol=1e-2, atol=1e-2)
    # float16 input to a float16 cell works too
    assert dense(Tensor(x.astype(np.float16))).dtype == ms.float16
    dense.to_float(ms.float32)
    assert dense(Tensor(x)).dtype == ms.float32
    with pytest.raises(ValueError):
        dense.to_float(ms.int32)


def test_to_float_recurses_into_children():
    net = TwoLayer().to_float(ms.float16)
    assert net.fc1._mixed_precision == ms.float16
    out = net(Tensor(rand(2, 4)))
    assert out.dtype == ms.float16
    assert all(p.dtype == ms.float32 for p in net.get_parameters())


def test_float32_layer_fed_by_float16_raises_type_error():
    class Mixed(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(3, 4).to_float(ms.float16)
            self.b = nn.Dense(4, 2)

        def construct(self, x):
            return self.b(self.a(x))

    with pytest.raises(TypeError):
        Mixed()(Tensor(rand(2, 3)))


# -- buffers and state --------------------------------------------------------------------------------
class NetB(nn.Cell):
    def __init__(self):
        super().__init__()
        self.buffer_b = nn.Buffer(ms.tensor([1, 2, 3]))

    def construct(self, x):
        return x + self.buffer_b


class NetA(nn.Cell):
    def __init__(self, net_b):
        super().__init__()
        self.net_b = net_b
        self.buffer_a = nn.Buffer(ms.tensor([4, 5, 6]))

    def construct(self, x):
        return self.net_b(x) + self.buffer_a


def test_buffers_seed_example():
    net_a = NetA(NetB())
    bufs = list(net_a.buffers())
    assert [b.asnumpy().tolist() for b in bufs] == [[4, 5, 6], [1, 2, 3]]
    assert [b.asnumpy().tolist() for b in net_a.buffers(recurse=False)] == [[4, 5, 6]]
    assert [n for n, _ in net_a.named_buffers()] == ["buffer_a", "net_b.buffer_b"]
    assert net_a.get_buffer("net_b.buffer_b").asnumpy().tolist() == [1, 2, 3]
    assert list(net_a.get_parameters()) == []
    out = net_a(Tensor(np.array([10, 20, 30], np.int64)))
    assert out.dtype == ms.int64
    np.testing.assert_array_equal(out.asnumpy(), [15, 27, 39])


def test_register_buffer_and_persistence():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.register_buffer("buffer0", ms.tensor([1, 2, 3]))
            self.register_buffer("scratch", ms.tensor([0.5]), persistent=False)
            self.w = Parameter(Tensor(np.ones(3, np.float32)), name="w")

        def construct(self, x):
            return x * self.w + self.scratch

    net = Net()
    assert net.buffer0.asnumpy().tolist() == [1, 2, 3]
    assert list(net.state_dict()) == ["w", "buffer0"]
    assert [n for n, _ in net.named_buffers()] == ["buffer0", "scratch"]
    x = rand(3)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), x + 0.5, rtol=1e-6)
    with pytest.raises(KeyError):
        net.register_buffer("a.b", ms.tensor([1]))
    with pytest.raises(TypeError):
        net.register_buffer("c", [1, 2])


def test_state_dict_seed_example():
    class Model(nn.Cell):
        def __init__(self):
            super().__init__()
            self.buffer_a = nn.Buffer(ms.tensor([4, 5, 6]))
            self.param_a = Parameter(ms.tensor([1, 2, 3]))

        def construct(self, x):
            return x + self.buffer_a + self.param_a

    model = Model()
    state = model.state_dict()
    assert isinstance(state, OrderedDict)
    assert list(state) == ["param_a", "buffer_a"]
    assert state["param_a"] is model.param_a            # references, not copies
    assert repr(state["param_a"]) == "Parameter (name=param_a, shape=(3,), dtype=Int64, requires_grad=True)"
    assert list(model.state_dict(prefix="m.")) == ["m.param_a", "m.buffer_a"]


def test_load_state_dict():
    src, dst = TwoLayer(), TwoLayer()
    for p in src.get_parameters():
        p.set_data(rand(*p.shape))
    x = rand(3, 4)
    dst(Tensor(x))   # compiled before loading: the graph must see the loaded values
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n1, p1), (n2, p2) in zip(src.parameters_and_names(), dst.parameters_and_names()):
        assert n1 == n2 and p1 is not p2
        np.testing.assert_array_equal(p1.asnumpy(), p2.asnumpy())
    np.testing.assert_allclose(dst(Tensor(x)).asnumpy(), src.reference(x), rtol=1e-5, atol=1e-5)

    partial = {k: v for k, v in src.state_dict().items() if k != "fc2.bias"}
    partial["extra"] = Tensor(np.zeros(1, np.float32))
    with pytest.raises(RuntimeError):
        dst.load_state_dict(partial)
    result = dst.load_state_dict(partial, strict=False)
    assert result.missing_keys == ["fc2.bias"] and result.unexpected_keys == ["extra"]
    with pytest.raises(RuntimeError):
        dst.load_state_dict({"fc1.weight": np.zeros((2, 2), np.float32)}, strict=False)


def test_load_state_dict_buffers():
    a, b = NetA(NetB()), NetA(NetB())
    b.load_state_dict({"buffer_a": np.array([7, 8, 9]), "net_b.buffer_b": np.array([0, 0, 1])})
    np.testing.assert_array_equal(b.buffer_a.asnumpy(), [7, 8, 9])
    np.testing.assert_array_equal(b(Tensor(np.zeros(3, np.int64))).asnumpy(), [7, 8, 10])
    assert a.buffer_a.asnumpy().tolist() == [4, 5, 6]


# -- hooks ----------------------------------------------------------------------------------------
def test_forward_pre_hook_and_forward_hook_every_call():
    net = TwoLayer()
    calls = []

    def pre(cell, inputs):
        assert cell is net
        calls.append(("pre", inputs[0].asnumpy().copy()))
        return (inputs[0] * 2,)

    def post(cell, inputs, output):
        calls.append(("post", output.asnumpy().copy()))
        return output + 1

    h1 = net.register_forward_pre_hook(pre)
    h2 = net.register_forward_hook(post)
    for _ in range(2):
        x = rand(2, 4)
        out = net(Tensor(x))
        np.testing.assert_allclose(out.asnumpy(), net.reference(2 * x) + 1, rtol=1e-5, atol=1e-5)
    assert [c[0] for c in calls] == ["pre", "post", "pre", "post"]
    np.testing.assert_array_equal(calls[2][1], x)
    np.testing.assert_allclose(calls[3][1], net.reference(2 * x), rtol=1e-5, atol=1e-5)
    h1.remove()
    h2.remove()
    x = rand(2, 4)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), net.reference(x), rtol=1e-5, atol=1e-5)
    assert len(calls) == 4


def test_hook_on_child_sees_real_values_and_can_modify_output():
    net = TwoLayer()
    seen = []

    def on_fc1(cell, inputs, output):
        assert cell is net.fc1
        assert not inputs[0].is_symbolic and not output.is_symbolic
        seen.append((inputs[0].asnumpy().copy(), output.asnumpy().copy()))
        return output * 0 - 1.0          # relu(-1) = 0: the parent's output becomes fc2's bias

    def pre_fc2(cell, inputs):
        seen.append(("fc2 in", inputs[0].asnumpy().copy()))

    x = rand(3, 4)
    plain = net(Tensor(x)).asnumpy()
    handle = net.fc1.register_forward_hook(on_fc1)
    handle2 = net.fc2.register_forward_pre_hook(pre_fc2)
    out = net(Tensor(x))
    np.testing.assert_array_equal(seen[0][0], x)
    np.testing.assert_allclose(seen[0][1], dense_ref(x, net.fc1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(seen[1][1], np.zeros((3, 5), np.float32))
    np.testing.assert_allclose(out.asnumpy(), np.broadcast_to(net.fc2.bias.asnumpy(), (3, 3)), rtol=1e-6)
    net(Tensor(x))
    assert len(seen) == 4                 # on every call
    handle.remove()
    handle2.remove()
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), plain, rtol=1e-6)
    assert len(seen) == 4


def test_pre_hook_returning_a_single_tensor():
    relu = nn.ReLU()
    relu.register_forward_pre_hook(lambda cell, inputs: -inputs[0])
    x = rand(4)
    np.testing.assert_array_equal(relu(Tensor(x)).asnumpy(), np.maximum(-x, 0))


def test_hook_must_be_callable():
    with pytest.raises(TypeError):
        nn.ReLU().register_forward_hook(3)


# -- repr --------------------------------------------------------------------------------------------
def test_repr_formats():
    assert repr(nn.Dense(2, 2)) == "Dense(input_channels=2, output_channels=2, has_bias=True)"
    assert repr(nn.ReLU()) == "ReLU()"
    conv = nn.Conv2d(120, 240, 4, has_bias=False, weight_init="normal")
    assert repr(conv.to_float(ms.float16)) == (
        "Conv2d(input_channels=120, output_channels=240, kernel_size=(4, 4), stride=(1, 1), pad_mode=same, "
        "padding=0, dilation=(1, 1), group=1, has_bias=False, weight_init=normal, bias_init=None, format=NCHW)")

    class NetC(nn.Cell):
        def __init__(self):
            super().__init__()
            self.buffer_c = nn.Buffer(ms.tensor([0, 0, 0]))
            self.dense_c = nn.Dense(5, 3)

    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.net_c = NetC()
            self.relu = nn.ReLU()

    assert str(NetC()) == "NetC(\n  (dense_c): Dense(input_channels=5, output_channels=3, has_bias=True)\n)"
    assert repr(Outer()) == ("Outer(\n"
                             "  (net_c): NetC(\n"
                             "    (dense_c): Dense(input_channels=5, output_channels=3, has_bias=True)\n"
                             "  )\n"
                             "  (relu): ReLU()\n)")


def test_extend_repr_override():
    class Custom(nn.Cell):
        def extend_repr(self):
            return "alpha=0.5"

    class Parent(nn.Cell):
        def __init__(self):
            super().__init__()
            self.c = Custom()

        def extend_repr(self):
            return "depth=1"

    assert repr(Custom()) == "Custom(alpha=0.5)"
    assert repr(Parent()) == "Parent(\n  depth=1\n  (c): Custom(alpha=0.5)\n)"


# -- parameter naming rules (MINDSPORE_BEHAVIOURS) -----------------------------------------------------
def test_attribute_path_names_even_with_explicit_name():
    class Act(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.ones(2, np.float32)), name="bar")

        def construct(self, x):
            return x * self.w

    alone = Act()
    assert alone.w.name == "bar"                # a stand-alone cell keeps its own name

    class Parent(nn.Cell):
        def __init__(self):
            super().__init__()
            self.act = Act()
            self.bn = nn.BatchNorm2d(2)
            self.seq = nn.SequentialCell([nn.Dense(2, 2)])

    parent = Parent()
    names = [p.name for p in parent.get_parameters()]
    assert names == ["act.w", "bn.moving_mean", "bn.moving_variance", "bn.gamma", "bn.beta",
                     "seq.0.weight", "seq.0.bias"]
    assert names == [n for n, _ in parent.parameters_and_names()]


def test_standalone_batchnorm_names():
    bn = nn.BatchNorm2d(3)
    assert [p.name for p in bn.get_parameters()] == ["mean", "variance", "gamma", "beta"]
    assert [n for n, _ in bn.parameters_and_names()] == ["moving_mean", "moving_variance", "gamma", "beta"]
    assert bn.moving_mean.name == "mean" and bn.moving_variance.name == "variance"
    assert not bn.moving_mean.requires_grad and bn.gamma.requires_grad


def test_auto_prefix_false_keeps_names():
    class Wrapper(nn.Cell):
        def __init__(self, net):
            super().__init__(auto_prefix=False)
            self.network = net

        def construct(self, x):
            return self.network(x)

    inner = TwoLayer()
    wrapped = Wrapper(inner)
    assert [p.name for p in wrapped.get_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in wrapped.parameters_and_names()][0] == "network.fc1.weight"


def test_sequential_cell_names():
    seq = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])
    assert [p.name for p in seq.get_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.seq = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU()])

    net = Net()
    assert [p.name for p in net.get_parameters()] == ["seq.0.weight", "seq.0.bias"]
    net.seq.append(nn.Dense(4, 2))            # added after the container joined its parent
    assert [p.name for p in net.get_parameters()][-2:] == ["seq.2.weight", "seq.2.bias"]
    net.seq[0].extra = ms.Parameter(Tensor(np.zeros(1, np.float32)), name="bar")
    assert net.seq[0].extra.name == "bar"     # MindSpore 2.10 keeps a given name; only unnamed ones take the key
    net.seq[0].other = ms.Parameter(Tensor(np.zeros(1, np.float32)))
    assert net.seq[0].other.name == "other"   # set after the cell joined its parent: no prefix (MindSpore 2.10)
    named = nn.SequentialCell(OrderedDict([("fc", nn.Dense(3, 4)), ("act", nn.ReLU())]))
    assert [p.name for p in named.get_parameters()] == ["fc.weight", "fc.bias"]
    assert isinstance(named.fc, nn.Dense)


# -- containers ----------------------------------------------------------------------------------------
def test_sequential_cell_behaviour():
    d1, d2 = nn.Dense(3, 4), nn.Dense(4, 2)
    seq = nn.SequentialCell(d1, nn.ReLU(), d2)
    assert len(seq) == 3
    assert seq[0] is d1 and seq[-1] is d2
    assert list(seq) == [d1, seq[1], d2]
    assert isinstance(seq[1:], nn.SequentialCell) and len(seq[1:]) == 2
    x = rand(5, 3)
    ref = dense_ref(np.maximum(dense_ref(x, d1), 0), d2)
    np.testing.assert_allclose(seq(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-5)
    d3 = nn.Dense(2, 1)
    seq.append(d3)
    assert len(seq) == 4 and seq[3] is d3
    np.testing.assert_allclose(seq(Tensor(x)).asnumpy(), dense_ref(ref, d3), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError):
        nn.SequentialCell([nn.ReLU(), 3])


def test_cell_list_behaviour():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.blocks = nn.CellList([nn.Dense(3, 3), nn.Dense(3, 3)])
            self.blocks.append(nn.Dense(3, 2))

        def construct(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    net = Net()
    assert len(net.blocks) == 3
    assert isinstance(net.blocks[2], nn.Dense) and net.blocks[-1] is net.blocks[2]
    assert [p.name for p in net.get_parameters()][:2] == ["blocks.0.weight", "blocks.0.bias"]
    assert [p.name for p in net.get_parameters()][-1] == "blocks.2.bias"
    x = rand(2, 3)
    ref = x
    for block in net.blocks:
        ref = dense_ref(ref, block)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-5)
    cl = nn.CellList()
    cl.extend([nn.ReLU(), nn.ReLU()])
    cl.insert(0, nn.Dense(1, 1))
    assert len(cl) == 3 and isinstance(cl[0], nn.Dense)
    del cl[0]
    assert len(cl) == 2
    with pytest.raises(TypeError):
        cl.append("not a cell")


def test_tinyms_layer_names():
    assert layers.Layer is nn.Cell
    assert layers.SequentialLayer is nn.SequentialCell
    assert layers.LayerList is nn.CellList
    assert layers.Dense is nn.Dense and layers.Conv2d is nn.Conv2d

    class Net(layers.Layer):
        def __init__(self):
            super().__init__()
            self.body = layers.SequentialLayer([layers.Dense(2, 3), layers.ReLU()])
            self.heads = layers.LayerList([layers.Dense(3, 1)])

        def construct(self, x):
            return self.heads[0](self.body(x))

    net = Net()
    assert [p.name for p in net.get_parameters()] == ["body.0.weight", "body.0.bias", "heads.0.weight",
                                                      "heads.0.bias"]
    x = rand(4, 2)
    ref = dense_ref(np.maximum(dense_ref(x, net.body[0]), 0), net.heads[0])
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-5)


# -- compilation ---------------------------------------------------------------------------------------
def test_control_flow_on_tensor_values_raises_capture_error():
    class Branchy(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(relay_frontend.CaptureError, match="control flow"):
        Branchy()(Tensor(rand(3)))

    class Converts(nn.Cell):
        def construct(self, x):
            return x * float(x.max())

    with pytest.raises(relay_frontend.CaptureError, match="control flow"):
        Converts()(Tensor(rand(3)))


def test_control_flow_on_python_values_and_shapes_is_fine():
    class Shapes(nn.Cell):
        def construct(self, x):
            if x.shape[0] > 2:
                return x * 2
            return x - 1

    net = Shapes()
    a, b = rand(3, 2), rand(2, 2)
    np.testing.assert_allclose(net(Tensor(a)).asnumpy(), a * 2)
    np.testing.assert_allclose(net(Tensor(b)).asnumpy(), b - 1)


def test_same_signature_does_not_recompile_new_shape_does():
    net = TwoLayer()
    net(Tensor(rand(2, 4)))
    before = STATS["captures"]
    x = rand(2, 4)
    out = net(Tensor(x))
    assert STATS["captures"] == before
    np.testing.assert_allclose(out.asnumpy(), net.reference(x), rtol=1e-5, atol=1e-5)
    y = rand(5, 4)
    out = net(Tensor(y))
    assert STATS["captures"] == before + 1
    np.testing.assert_allclose(out.asnumpy(), net.reference(y), rtol=1e-5, atol=1e-5)
    net(Tensor(rand(5, 4)))
    assert STATS["captures"] == before + 1


def test_training_mode_change_recompiles_batchnorm():
    bn = nn.BatchNorm2d(2)
    x = rand(4, 2, 3, 3) * 3 + 1
    out_eval = bn(Tensor(x)).asnumpy()
    np.testing.assert_allclose(out_eval, x / np.sqrt(1 + 1e-5), rtol=1e-5, atol=1e-5)
    bn.set_train()
    out_train = bn(Tensor(x))
    ref = F.batch_norm(torch.tensor(x), None, None, training=True, eps=1e-5).numpy()
    np.testing.assert_allclose(out_train.asnumpy(), ref, rtol=1e-4, atol=1e-5)


def test_assigning_a_tensor_to_a_parameter_attribute_updates_the_parameter():
    # MindSpore 2.x (mindcv's XCiT: ``m.weight = initializer(...)``) keeps the Parameter and sets its data
    import numpy as np

    import aotnn
    from aotnn import nn

    dense = nn.Dense(3, 2)
    before = dense.weight
    dense.weight = aotnn.Tensor(np.full((2, 3), 0.5, np.float32))
    assert dense.weight is before and dense.weight.name == "weight"
    np.testing.assert_array_equal(dense.weight.asnumpy(), np.full((2, 3), 0.5))
    assert [p.name for p in dense.get_parameters()] == ["weight", "bias"]
    np.testing.assert_allclose(dense(aotnn.Tensor(np.ones((1, 3), np.float32))).asnumpy(),
                               np.full((1, 2), 1.5) + dense.bias.asnumpy(), rtol=1e-6)
