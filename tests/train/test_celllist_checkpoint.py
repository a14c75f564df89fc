"""Checkpoints of a CellList network move between MindSpore 2.10 and aotnn without losing parameters
(fixtures by tools/mindspore_celllist_ckpt.py, which ran MindSpore on both directions)."""
import json
import logging
import os

import numpy as np


from . import celllist_net

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")



def test_mindspore_checkpoint_loads_fully(ms):
    net = celllist_net.build()
    net.set_train(False)
    not_loaded = ms.load_param_into_net(net, ms.load_checkpoint(os.path.join(FIXTURES, "celllist_mindspore.ckpt")))
    assert not_loaded == ([], [])
    expected = np.load(os.path.join(FIXTURES, "celllist_mindspore_output.npy"))
    np.testing.assert_allclose(net(ms.Tensor(celllist_net.net_input())).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_aotnn_checkpoint_has_the_names_mindspore_loaded_fully(ms, tmp_path):
    record = json.load(open(os.path.join(FIXTURES, "celllist_aotnn_in_mindspore.json")))
    assert record["param_not_load"] == [] and record["ckpt_not_load"] == []   # MindSpore's verdict on our file
    assert record["max_abs_diff_mindspore_vs_aotnn_output"] < 1e-5
    net = celllist_net.build()
    celllist_net.set_weights(net, 2)
    path = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(net, path)
    assert list(ms.load_checkpoint(path)) == record["names_in_aotnn_file"]


def test_unloaded_parameters_are_warned_as_mindspore_does(ms, caplog):
    net = celllist_net.build()
    params = ms.load_checkpoint(os.path.join(FIXTURES, "celllist_mindspore.ckpt"))
    del params["0.1.gamma"], params["head.bias"]
    with caplog.at_level(logging.WARNING):
        not_loaded, _ = ms.load_param_into_net(net, params, strict_load=True)
    assert not_loaded == ["0.1.gamma", "head.bias"]
    text = caplog.text
    assert "For 'load_param_into_net', 2 parameters in the 'net' are not loaded" in text
    assert "['0.1.gamma', 'head.bias'] are not loaded." in text
