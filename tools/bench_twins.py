"""PyTorch twins of the aotnn model zoo: the same networks, module for module, so that
``copy_weights`` can move an aotnn model's parameters into them by name.

The twins give the benchmark its peers (PyTorch directly, onnxruntime through
``torch.onnx.export``) and the zoo tests their reference outputs.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

# MindSpore parameter name suffix -> PyTorch's
_RENAMES = {
    "gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "moving_variance": "running_var",
    "embedding_table": "weight",
}


def torch_name(name: str) -> str:
    """The PyTorch state-dict key of an aotnn (MindSpore-named) parameter of the same module tree."""
    head, _, last = name.rpartition(".")
    last = _RENAMES.get(last, last)
    return f"{head}.{last}" if head else last


def copy_weights(net, twin: nn.Module) -> nn.Module:
    """Load every parameter of the aotnn ``net`` into ``twin`` (names must correspond); returns ``twin``."""
    state = twin.state_dict()
    loaded = set()
    for name, param in net.parameters_and_names():
        key = torch_name(name)
        if key not in state:
            raise KeyError(f"twin {type(twin).__name__} has no parameter {key!r} (from {name!r})")
        value = torch.from_numpy(np.ascontiguousarray(param.asnumpy()))
        if tuple(value.shape) != tuple(state[key].shape):
            raise ValueError(f"{key}: twin shape {tuple(state[key].shape)}, aotnn shape {tuple(value.shape)}")
        state[key] = value
        loaded.add(key)
    missing = [k for k in state if k not in loaded and not k.endswith("num_batches_tracked")]
    if missing:
        raise KeyError(f"twin {type(twin).__name__}: no aotnn parameter for {missing[:5]}")
    twin.load_state_dict(state)
    return twin.eval()


def _bn(channels: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(channels, eps=1e-5)


# -- LeNet5 -----------------------------------------------------------------------------------------
class LeNet5(nn.Module):
    def __init__(self, num_class: int = 10, num_channel: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, bias=False)
        self.conv2 = nn.Conv2d(6, 16, 5, bias=False)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_class)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2, 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2, 2)
        x = torch.relu(self.fc1(x.flatten(1)))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


# -- ResNet-18 --------------------------------------------------------------------------------------
class ResidualBlockBase(nn.Module):
    def __init__(self, in_channel: int, out_channel: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channel, out_channel, 3, stride, 1, bias=False)
        self.bn1d = _bn(out_channel)
        self.conv2 = nn.Conv2d(out_channel, out_channel, 3, 1, 1, bias=False)
        self.bn2d = _bn(out_channel)
        self.down_sample = stride != 1 or in_channel != out_channel
        if self.down_sample:
            self.down_sample_layer = nn.Sequential(nn.Conv2d(in_channel, out_channel, 1, stride, 0, bias=False),
                                                   _bn(out_channel))

    def forward(self, x):
        out = torch.relu(self.bn1d(self.conv1(x)))
        out = self.bn2d(self.conv2(out))
        identity = self.down_sample_layer(x) if self.down_sample else x
        return torch.relu(out + identity)


class ResNet18(nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        ins, outs, strides = [64, 64, 128, 256], [64, 128, 256, 512], [1, 2, 2, 2]
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = _bn(64)
        for i in range(4):
            setattr(self, f"layer{i + 1}", nn.Sequential(ResidualBlockBase(ins[i], outs[i], strides[i]),
                                                         ResidualBlockBase(outs[i], outs[i], 1)))
        self.end_point = nn.Linear(512, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        # MindSpore's pad_mode="same" 3x3/2 max pool on an even size pads one pixel at the end only
        x = torch.max_pool2d(nn.functional.pad(x, (0, 1, 0, 1), value=-math.inf), 3, 2)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.end_point(x.mean((2, 3)))


# -- MobileNetV2 ------------------------------------------------------------------------------------
class ConvBNReLU(nn.Module):
    def __init__(self, in_planes: int, out_planes: int, kernel_size: int = 3, stride: int = 1, groups: int = 1):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, (kernel_size - 1) // 2, groups=groups, bias=False),
            _bn(out_planes), nn.ReLU6())

    def forward(self, x):
        return self.features(x)


class InvertedResidual(nn.Module):
    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = [ConvBNReLU(inp, hidden, kernel_size=1)] if expand_ratio != 1 else []
        layers += [ConvBNReLU(hidden, hidden, stride=stride, groups=hidden),
                   nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), _bn(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        cfgs = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                [6, 320, 1, 1]]
        channels = 32
        features = [ConvBNReLU(3, channels, stride=2)]
        for t, c, n, s in cfgs:
            for i in range(n):
                features.append(InvertedResidual(channels, c, s if i == 0 else 1, t))
                channels = c
        features.append(ConvBNReLU(channels, 1280, kernel_size=1))
        self.features = nn.Sequential(*features)

    def forward(self, x):
        return self.features(x)


class MobileNetV2Head(nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.dense = nn.Linear(1280, num_classes)

    def forward(self, x):
        return self.dense(x.mean((2, 3)))


class MobileNetV2(nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.backbone = MobileNetV2Backbone()
        self.head = MobileNetV2Head(num_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


# -- BERT-style encoder -----------------------------------------------------------------------------
class BertSelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int, eps: float):
        super().__init__()
        self.heads, self.head_size = heads, hidden // heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x):
        b, s, h = x.shape

        def split(t):
            return t.reshape(b, s, self.heads, self.head_size).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_size)
        context = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, s, h)
        return self.norm(x + self.output(context))


class BertLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int, eps: float):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads, eps)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x):
        x = self.attention(x)
        return self.norm(x + self.output(nn.functional.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab_size: int = 30522, hidden: int = 256, layers: int = 2, heads: int = 4,
                 intermediate: int = 1024, max_position: int = 512, type_vocab_size: int = 2, eps: float = 1e-12):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden)
        self.position_embeddings = nn.Embedding(max_position, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, intermediate, eps) for _ in range(layers)])

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        positions = torch.arange(seq).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions) + \
            self.token_type_embeddings(torch.zeros_like(positions))
        x = self.embedding_norm(x)
        for layer in self.layers:
            x = layer(x)
        return x


# -- LSTM -------------------------------------------------------------------------------------------
class LSTMModel(nn.Module):
    def __init__(self, input_size: int = 256, hidden_size: int = 256, num_layers: int = 1):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers)

    def forward(self, x):
        return self.lstm(x)[0]
