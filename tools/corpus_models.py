"""Networks written as a user would, for tools/bench_models.py: a U-Net, a 1-D convolution audio
net, and GRU/LSTM text classifiers.

Each entry gives the Cell (inference mode) and its input: ``CORPUS[name](size)`` returns
``(net, x)``. The audio net is mindaudio 0.3.0's ECAPA-TDNN (its unmodified model file, imported
through ``aotnn.compat``'s ``mindspore`` aliases) when mindaudio is installed, else a plain 1-D
convolution stack of the same kind (``AudioConvNet``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from aotnn import nn, ops

TEXT_VOCAB = 10000
TEXT_SEQ = 96
AUDIO_FRAMES = 200
AUDIO_FEATURES = 80


class _ConvBlock(nn.SequentialCell):
    """Two 3x3 "same" convolutions, each with batch norm and ReLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__([
            nn.Conv2d(in_channels, out_channels, 3, pad_mode="same", has_bias=False), nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, pad_mode="same", has_bias=False), nn.BatchNorm2d(out_channels),
            nn.ReLU()])


class UNet(nn.Cell):
    """The U-Net of Ronneberger et al. (2015) with "same" convolutions: four 2x2 max-pool downs,
    four 2x2 transposed-convolution ups, each concatenated with the encoder's map of that size.

    Args:
        in_channels: input channels.
        num_classes: output channels (per-pixel logits).
        base: channels of the first level (doubled per level).
    """

    def __init__(self, in_channels: int = 3, num_classes: int = 2, base: int = 32):
        super().__init__()
        widths = [base * 2 ** i for i in range(5)]
        self.downs = nn.CellList([_ConvBlock(in_channels, widths[0])] +
                                 [_ConvBlock(widths[i], widths[i + 1]) for i in range(4)])
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.ups = nn.CellList([nn.Conv2dTranspose(widths[i + 1], widths[i], 2, stride=2, has_bias=True)
                                for i in reversed(range(4))])
        self.merges = nn.CellList([_ConvBlock(2 * widths[i], widths[i]) for i in reversed(range(4))])
        self.head = nn.Conv2d(widths[0], num_classes, 1, has_bias=True)
        self.concat = ops.Concat(axis=1)

    def construct(self, x):
        skips = []
        for index, down in enumerate(self.downs):
            x = down(x if index == 0 else self.pool(x))
            skips.append(x)
        x = skips.pop()
        for up, merge in zip(self.ups, self.merges):
            x = merge(self.concat((skips.pop(), up(x))))
        return self.head(x)


class AudioConvNet(nn.Cell):
    """A 1-D convolution audio classifier over (batch, frames, features) filterbanks: dilated
    Conv1d + BatchNorm1d + ReLU layers (TDNN style), mean over time, dense.

    Args:
        features: filterbank features per frame.
        channels: channels of each convolution.
        num_classes: outputs.
    """

    def __init__(self, features: int = AUDIO_FEATURES, channels: int = 256, num_classes: int = 10):
        super().__init__()
        layers = []
        for index, (kernel, dilation) in enumerate(((5, 1), (3, 2), (3, 3), (1, 1))):
            layers += [nn.Conv1d(features if index == 0 else channels, channels, kernel, dilation=dilation,
                                 pad_mode="same", has_bias=True), nn.BatchNorm1d(channels), nn.ReLU()]
        self.body = nn.SequentialCell(layers)
        self.transpose = ops.Transpose()
        self.mean = ops.ReduceMean(keep_dims=False)
        self.dense = nn.Dense(channels, num_classes)

    def construct(self, x):
        x = self.body(self.transpose(x, (0, 2, 1)))
        return self.dense(self.mean(x, 2))


class TextClassifier(nn.Cell):
    """Token ids -> embedding -> 2-layer bidirectional LSTM or GRU -> last step's state -> dense.

    Args:
        cell: ``"lstm"`` or ``"gru"``.
        vocab: vocabulary size.
        embed: embedding width.
        hidden: hidden units per direction.
        num_classes: outputs.
    Raises:
        ValueError: ``cell`` is neither.
    """

    def __init__(self, cell: str = "lstm", vocab: int = TEXT_VOCAB, embed: int = 128, hidden: int = 128,
                 num_classes: int = 4):
        super().__init__()
        layers = {"lstm": nn.LSTM, "gru": nn.GRU}
        if cell not in layers:
            raise ValueError(f"cell: expected 'lstm' or 'gru', got {cell!r}")
        self.kind = cell
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = layers[cell](embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.dense = nn.Dense(2 * hidden, num_classes)

    def construct(self, ids):
        output, _ = self.rnn(self.embedding(ids))
        return self.dense(output[:, -1, :])


def torch_twin(net: nn.Cell):
    """A PyTorch module computing ``net``'s function with its weights, for onnxruntime to run from
    PyTorch's ONNX export, or None where aotnn's own export serves.

    Only ``TextClassifier`` has one: aotnn's export unrolls the recurrent steps into thousands of
    nodes (7408 for ``text_lstm``), PyTorch's keeps one ONNX LSTM/GRU node per layer, which is what
    onnxruntime is fast on.
    """
    if not isinstance(net, TextClassifier):
        return None
    import torch

    params = {name: torch.tensor(param.asnumpy()) for name, param in net.parameters_and_names()}
    vocab, embed = params["embedding.embedding_table"].shape
    hidden = params["rnn.weight_hh_l0"].shape[1]
    layers = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}

    class Twin(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(vocab, embed)
            self.rnn = layers[net.kind](embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
            self.dense = torch.nn.Linear(2 * hidden, params["dense.weight"].shape[0])

        def forward(self, ids):
            output, _ = self.rnn(self.embedding(ids.long()))
            return self.dense(output[:, -1, :])

    twin = Twin()
    twin.load_state_dict({"embedding.weight": params["embedding.embedding_table"],
                          **{name: value for name, value in params.items() if not name.startswith("embedding.")}})
    return twin.eval()


def _ecapa_tdnn() -> nn.Cell:
    """mindaudio 0.3.0's ECAPA-TDNN (default widths, 80 features), or ``AudioConvNet`` without mindaudio."""
    from aotnn.compat import install_mindspore_aliases

    try:
        from tests.models.mindaudio_ecapa import is_installed, load_module
    except ImportError:  # run from outside the repository root
        return AudioConvNet()
    if not is_installed():
        return AudioConvNet()
    install_mindspore_aliases()
    return load_module().EcapaTDNN(input_size=AUDIO_FEATURES)


def _image(size: int, channels: int = 3) -> np.ndarray:
    return np.random.default_rng(1).standard_normal((1, channels, size, size)).astype(np.float32)


def _audio() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((1, AUDIO_FRAMES, AUDIO_FEATURES)).astype(np.float32)


def _tokens() -> np.ndarray:
    return np.random.default_rng(1).integers(0, TEXT_VOCAB, (1, TEXT_SEQ)).astype(np.int32)


def _eval(net: nn.Cell) -> nn.Cell:
    net.set_train(False)
    return net


CORPUS: dict[str, Callable[[int], tuple[nn.Cell, np.ndarray]]] = {
    # a U-Net runs at half the classifiers' size (224 -> 112): its 32-channel full-size maps
    # already cost ten times a ResNet-18's
    "unet": lambda size: (_eval(UNet()), _image(size // 2)),
    "ecapa_tdnn": lambda size: (_eval(_ecapa_tdnn()), _audio()),
    "audio_conv1d": lambda size: (_eval(AudioConvNet()), _audio()),
    "text_lstm": lambda size: (_eval(TextClassifier("lstm")), _tokens()),
    "text_gru": lambda size: (_eval(TextClassifier("gru")), _tokens()),
}
