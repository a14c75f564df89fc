"""``QuantizationAwareTraining``: MindSpore 1.x's converter of a float network into a quantization-aware one.

Like MindSpore's, it rewrites the network's ``Conv2dBnAct`` and ``DenseBnAct`` cells in place:
the convolution becomes ``Conv2dBnFoldQuantOneConv`` / ``Conv2dBnFoldQuant`` (BatchNorm folded,
``bn_fold=True`` and ``has_bn``) or ``Conv2dQuant``, the dense layer ``DenseQuant``, each with the
float layer's weights; the activation becomes an ``ActQuant`` with its own range (or, with no
activation and ``after_fake``, a ``FakeQuantWithMinMaxObserver``). Other cells are left as they are.
"""
from __future__ import annotations

from typing import Any

from ...common.tensor import Tensor
from ...nn.cell import Cell
from ..common import QuantDtype

__all__ = ["QuantizationAwareTraining"]


def _pair(value: Any, name: str) -> tuple[Any, Any]:
    if not isinstance(value, (tuple, list)) or len(value) not in (1, 2):
        raise TypeError(f"For 'QuantizationAwareTraining', the '{name}' must be a tuple of 1 or 2 items, "
                        f"but got {value!r}.")
    return tuple(value) if len(value) == 2 else (value[0], value[0])


class QuantizationAwareTraining:
    """Convert a network built with ``Conv2dBnAct`` / ``DenseBnAct`` for quantization-aware training.

    Args:
        bn_fold (bool): fold BatchNorm into the fake-quantized convolution weight. Default: True.
        freeze_bn (int): steps after which ``Conv2dBnFoldQuant`` freezes its statistics. Default: 10000000.
        quant_delay (tuple[int]): steps before quantizing (weights, activations). Default: (0, 0).
        quant_dtype (tuple[QuantDtype]): Default: (QuantDtype.INT8, QuantDtype.INT8).
        per_channel (tuple[bool]): Default: (False, False).
        symmetric (tuple[bool]): Default: (False, False).
        narrow_range (tuple[bool]): Default: (False, False).
        optimize_option: only quantization-aware training ('QAT') is supported. Default: 'QAT'.
        one_conv_fold (bool): use ``Conv2dBnFoldQuantOneConv`` rather than ``Conv2dBnFoldQuant``. Default: True.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: activations per channel, or an unsupported ``optimize_option``.

    Examples:
        >>> net = QuantizationAwareTraining(per_channel=[True, False], symmetric=[True, False]).quantize(net)
    """

    def __init__(self, bn_fold=True, freeze_bn=10000000, quant_delay=(0, 0), quant_dtype=(QuantDtype.INT8,
                 QuantDtype.INT8), per_channel=(False, False), symmetric=(False, False), narrow_range=(False, False),
                 optimize_option="QAT", one_conv_fold=True):
        from . import create_quant_config

        for name, value in (("bn_fold", bn_fold), ("one_conv_fold", one_conv_fold)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'QuantizationAwareTraining', the '{name}' must be bool, "
                                f"but got {type(value).__name__}.")
        if isinstance(freeze_bn, bool) or not isinstance(freeze_bn, int) or freeze_bn < 0:
            raise TypeError(f"For 'QuantizationAwareTraining', the 'freeze_bn' must be a non-negative int, "
                            f"but got {freeze_bn!r}.")
        options = optimize_option if isinstance(optimize_option, (list, tuple)) else [optimize_option]
        if any(str(getattr(o, "name", o)).upper() != "QAT" for o in options):
            raise ValueError(f"For 'QuantizationAwareTraining', only the 'QAT' optimize_option is supported, "
                             f"but got {optimize_option!r}.")
        self.bn_fold, self.freeze_bn, self.one_conv_fold = bn_fold, freeze_bn, one_conv_fold
        self.quant_dtype = _pair(quant_dtype, "quant_dtype")
        self.quant_config = create_quant_config(quant_delay=_pair(quant_delay, "quant_delay"),
                                                quant_dtype=self.quant_dtype,
                                                per_channel=_pair(per_channel, "per_channel"),
                                                symmetric=_pair(symmetric, "symmetric"),
                                                narrow_range=_pair(narrow_range, "narrow_range"))

    def quantize(self, network: Cell) -> Cell:
        """Rewrite ``network``'s Conv2dBnAct / DenseBnAct cells in place and return it.

        Raises:
            TypeError: ``network`` is not a Cell.
        """
        if not isinstance(network, Cell):
            raise TypeError(f"For 'QuantizationAwareTraining', the 'network' must be a Cell, "
                            f"but got {type(network).__name__}.")
        from ...nn import Conv2dBnAct, DenseBnAct

        for _, cell in list(network.cells_and_names()):
            if isinstance(cell, Conv2dBnAct):
                self._convert_conv(cell)
            elif isinstance(cell, DenseBnAct):
                self._convert_dense(cell)
        return network

    def _act(self, cell: Cell, act: Any) -> Cell | None:
        from ...nn import ActQuant

        if act is not None:
            return ActQuant(act, quant_config=self.quant_config, quant_dtype=self.quant_dtype[1])
        if getattr(cell, "after_fake", False):
            return self.quant_config.activation(quant_dtype=self.quant_dtype[1])
        return None

    def _convert_conv(self, cell: Cell) -> None:
        from ... import nn

        conv = cell.conv
        common = dict(stride=conv.stride, pad_mode=conv.pad_mode, padding=conv.padding, dilation=conv.dilation,
                      group=conv.group, quant_config=self.quant_config, quant_dtype=self.quant_dtype[0])
        args = (conv.in_channels, conv.out_channels, conv.kernel_size)
        if cell.has_bn and self.bn_fold:
            bn = cell.batchnorm
            extra = dict(eps=float(bn.eps), momentum=float(bn.momentum))
            if self.one_conv_fold:
                quant = nn.Conv2dBnFoldQuantOneConv(*args, **common, **extra)
            else:
                quant = nn.Conv2dBnFoldQuant(*args, **common, **extra, has_bias=conv.has_bias,
                                             freeze_bn=self.freeze_bn)
            for name in ("gamma", "beta", "moving_mean", "moving_variance"):
                getattr(quant, name).set_data(Tensor(getattr(bn, name).asnumpy()))
            cell.has_bn = False
        else:
            quant = nn.Conv2dQuant(*args, **common, has_bias=conv.has_bias)
        quant.weight.set_data(Tensor(conv.weight.asnumpy()))
        if conv.has_bias and getattr(quant, "bias", None) is not None:
            quant.bias.set_data(Tensor(conv.bias.asnumpy()))
        cell.conv = quant
        self._replace_act(cell)

    def _convert_dense(self, cell: Cell) -> None:
        from ... import nn

        dense = cell.dense
        quant = nn.DenseQuant(dense.in_channels, dense.out_channels, has_bias=dense.has_bias,
                              quant_config=self.quant_config, quant_dtype=self.quant_dtype[0])
        quant.weight.set_data(Tensor(dense.weight.asnumpy()))
        if dense.has_bias:
            quant.bias.set_data(Tensor(dense.bias.asnumpy()))
        cell.dense = quant
        self._replace_act(cell)

    def _replace_act(self, cell: Cell) -> None:
        act = self._act(cell, cell.activation if cell.has_act else None)
        if act is not None:
            cell.activation = act
            cell.has_act = True
