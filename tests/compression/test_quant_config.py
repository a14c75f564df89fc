"""compression.common.QuantDtype and compression.quant.create_quant_config (MindSpore's QAT configuration)."""
from __future__ import annotations

import functools

import pytest

from aotnn import nn
from aotnn.compression.common import QuantDtype
from aotnn.compression.quant import create_quant_config


def test_quant_dtype_bits_and_ranges():
    assert [d.num_bits for d in (QuantDtype.INT2, QuantDtype.INT4, QuantDtype.INT8, QuantDtype.UINT8)] == [2, 4, 8, 8]
    assert QuantDtype.INT8.range == (-128, 127) and QuantDtype.UINT4.range == (0, 15)
    assert QuantDtype.is_signed(QuantDtype.INT4) and not QuantDtype.is_signed(QuantDtype.UINT4)
    assert QuantDtype.switch_signed(QuantDtype.INT8) is QuantDtype.UINT8
    assert QuantDtype.switch_signed(QuantDtype.UINT3) is QuantDtype.INT3
    assert str(QuantDtype.INT8) == "INT8"


def test_default_config_builds_default_observers():
    config = create_quant_config()
    assert isinstance(config, nn.QuantConfig) and config._fields == ("weight", "activation")
    for factory in config:
        assert isinstance(factory, functools.partial) and factory.func is nn.FakeQuantWithMinMaxObserver
    weight = config.weight(channel_axis=0, num_channels=3)
    assert not weight.per_channel and weight.quant_delay == 0 and weight.quant_dtype is QuantDtype.INT8
    assert weight.minq.shape == (1,) and float(weight.minq.asnumpy()[0]) == -6.0
    assert float(weight.maxq.asnumpy()[0]) == 6.0


def test_config_pairs_go_to_weight_and_activation():
    config = create_quant_config(quant_delay=(3, 5), quant_dtype=(QuantDtype.INT4, QuantDtype.UINT8),
                                 per_channel=(True, False), symmetric=(True, False), narrow_range=(True, False))
    weight = config.weight(channel_axis=0, num_channels=4)
    act = config.activation()
    assert (weight.quant_delay, act.quant_delay) == (3, 5)
    assert weight.per_channel and weight.minq.shape == (4,) and not act.per_channel
    assert weight.symmetric and weight.narrow_range and not act.symmetric and not act.narrow_range
    assert weight.quant_dtype is QuantDtype.INT4 and act.quant_dtype is QuantDtype.UINT8
    assert weight.quant_range == (-7, 7) and act.quant_range == (0, 255)
    # a layer's own quant_dtype overrides the config's (as MindSpore's layers pass it on)
    conv = nn.Conv2dQuant(2, 4, 3, quant_config=config, quant_dtype=QuantDtype.INT8)
    assert conv.fake_quant_weight.quant_dtype is QuantDtype.INT8 and conv.fake_quant_weight.per_channel


def test_default_layer_config_is_a_quant_config():
    assert isinstance(nn.quant_config_default, nn.QuantConfig)
    assert nn.quant_config_default.weight.func is nn.FakeQuantWithMinMaxObserver


def test_mindspore_import_path():
    from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases
    install_mindspore_aliases()
    try:
        from mindspore.compression import quant
        from mindspore.compression.common import QuantDtype as AliasedDtype
        assert quant.create_quant_config is create_quant_config and AliasedDtype is QuantDtype
    finally:
        uninstall_mindspore_aliases()


@pytest.mark.parametrize("kwargs, error", [
    ({"per_channel": (False, True)}, ValueError),
    ({"mode": "OTHER"}, ValueError),
    ({"quant_delay": 0}, TypeError),
    ({"quant_delay": (0, 1.5)}, TypeError),
    ({"quant_dtype": ("INT8", "INT8")}, TypeError),
    ({"symmetric": (1, 0)}, TypeError),
    ({"quant_observer": (nn.FakeQuantWithMinMaxObserver,)}, TypeError),
])
def test_invalid_arguments(kwargs, error):
    with pytest.raises(error):
        create_quant_config(**kwargs)
