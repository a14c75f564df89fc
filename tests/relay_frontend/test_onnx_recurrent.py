"""ONNX LSTM, GRU and RNN import (relay_frontend/onnx_recurrent.py) against onnxruntime: layers exported by
PyTorch (torch.onnx.export, opset 17) and hand-built nodes for what PyTorch does not write (reverse,
sequence_lens, layout 1, clip, input_forget, peepholes, other activations). Tiny sizes keep it fast."""
from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import aotnn
from relay_frontend.onnx_import import OnnxImportError, import_onnx


def run_both(model_bytes: bytes, feeds: dict[str, np.ndarray], reference: str = "ort") -> tuple[list, list]:
    """(aotnn's outputs, the reference's outputs) for ``feeds`` (in the model's input order); the reference
    is onnxruntime or, for what onnxruntime refuses (layout 1), the onnx package's reference evaluator."""
    net = aotnn.load_onnx(model_bytes)
    got = net(*[aotnn.Tensor(v) for v in feeds.values()])
    got = [np.asarray(t.asnumpy()) for t in (got if isinstance(got, (tuple, list)) else [got])]
    if reference == "onnx":
        return got, ReferenceEvaluator(onnx.load_from_string(model_bytes)).run(None, feeds)
    session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return got, session.run(None, feeds)


def assert_close(got: list, expected: list, tol: float = 1e-5) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def export(module: torch.nn.Module, args: tuple, input_names: list[str], output_names: list[str]) -> bytes:
    module.eval()
    stream = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, stream, opset_version=17, dynamo=False, input_names=input_names,
                          output_names=output_names)
    return stream.getvalue()


@pytest.mark.parametrize("kind, kwargs", [
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True}),
    ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
])
def test_pytorch_exported_layer_matches_onnxruntime_and_torch(kind, kwargs):
    torch.manual_seed(0)
    layer = getattr(torch.nn, kind)(input_size=6, hidden_size=5, **kwargs)
    directions = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6) if kwargs.get("batch_first") else (4, 2, 6)).astype(np.float32)
    h0 = rng.standard_normal((layers * directions, 2, 5)).astype(np.float32)
    feeds = {"x": x, "h0": h0}
    state: tuple = (torch.from_numpy(h0),)
    if kind == "LSTM":
        feeds["c0"] = rng.standard_normal(h0.shape).astype(np.float32)
        state = ((torch.from_numpy(h0), torch.from_numpy(feeds["c0"])),)
    names = ["y", "hn", "cn"] if kind == "LSTM" else ["y", "hn"]
    model = export(layer, (torch.from_numpy(x),) + state, list(feeds), names)
    got, expected = run_both(model, feeds)
    assert_close(got, expected)
    with torch.no_grad():
        y, hidden = layer(torch.from_numpy(x), *state)
    reference = [y, *hidden] if kind == "LSTM" else [y, hidden]
    assert_close(got, [t.numpy() for t in reference], tol=1e-4)


def lstm_node_model(attrs: dict, with_seq_lens: bool, layout: int = 0, op_type: str = "LSTM") -> tuple[bytes, dict]:
    """A one-node model of ``op_type`` with inputs X, W, R, B, (sequence_lens), initial_h (+ initial_c, P)."""
    steps, batch, features, hidden = 4, 3, 2, 3
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op_type]
    directions = 2 if attrs.get("direction") == "bidirectional" else 1
    rng = np.random.default_rng(7)
    arrays = {
        "X": rng.standard_normal((batch, steps, features) if layout else (steps, batch, features)),
        "W": rng.standard_normal((directions, gates * hidden, features)) * 0.5,
        "R": rng.standard_normal((directions, gates * hidden, hidden)) * 0.5,
        "B": rng.standard_normal((directions, 2 * gates * hidden)) * 0.5,
    }
    if with_seq_lens:
        arrays["sequence_lens"] = np.array([4, 2, 3], np.int32)
    arrays["initial_h"] = rng.standard_normal((batch, directions, hidden) if layout else (directions, batch, hidden))
    if op_type == "LSTM":
        arrays["initial_c"] = rng.standard_normal(arrays["initial_h"].shape)
        arrays["P"] = rng.standard_normal((directions, 3 * hidden)) * 0.5
    feeds = {k: (v if v.dtype == np.int32 else v.astype(np.float32)) for k, v in arrays.items()}
    inputs = [helper.make_tensor_value_info(k, TensorProto.INT32 if v.dtype == np.int32 else TensorProto.FLOAT,
                                            list(v.shape)) for k, v in feeds.items()]
    node_inputs = list(feeds) if with_seq_lens else ["X", "W", "R", "B", "", *list(feeds)[4:]]
    outputs = ["Y", "Y_h", "Y_c"] if op_type == "LSTM" else ["Y", "Y_h"]
    node = helper.make_node(op_type, node_inputs, outputs, name="rnn0", hidden_size=hidden, layout=layout, **attrs)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info(o, TensorProto.FLOAT, [None] * (4 if o == "Y" else 3))
                                                    for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    return model.SerializeToString(), feeds


@pytest.mark.parametrize("op_type, attrs, with_seq_lens", [
    ("LSTM", {"direction": "reverse", "clip": 0.8}, True),
    ("LSTM", {"direction": "bidirectional", "input_forget": 1}, False),
    ("GRU", {"direction": "bidirectional", "linear_before_reset": 1}, True),
    ("GRU", {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.3], "activation_beta": [0.4]},
     False),
    ("RNN", {"direction": "reverse", "activations": ["LeakyRelu"], "activation_alpha": [0.2]}, True),
])
def test_onnx_node_forms_match_onnxruntime(op_type, attrs, with_seq_lens):
    model, feeds = lstm_node_model(attrs, with_seq_lens, 0, op_type)
    got, expected = run_both(model, feeds)
    assert_close(got, expected)


@pytest.mark.parametrize("op_type, attrs", [("LSTM", {"direction": "bidirectional"}), ("GRU", {})])
def test_batch_major_layout_matches_the_onnx_reference(op_type, attrs):
    model, feeds = lstm_node_model(attrs, False, 1, op_type)
    got, expected = run_both(model, feeds, reference="onnx")
    assert_close(got, expected)


def test_unsupported_activation_names_the_node_and_attribute():
    model, _ = lstm_node_model({"activations": ["Sigmoid", "Gaussian", "Tanh"]}, False)
    with pytest.raises(OnnxImportError, match=r"node 'rnn0' \(LSTM\): attribute 'activations': 'Gaussian'"):
        import_onnx(model)


def test_wrong_weight_shape_names_the_input():
    model, feeds = lstm_node_model({"direction": "bidirectional"}, False, op_type="RNN")
    shapes = {k: v.shape for k, v in feeds.items()}
    shapes["W"] = (1,) + shapes["W"][1:]
    with pytest.raises(OnnxImportError, match=r"node 'rnn0' \(RNN\): input 'W': expected shape \(2, 3, 2\)"):
        import_onnx(model, shape_dict=shapes)
