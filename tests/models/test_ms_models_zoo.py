"""A model of a second MindSpore model zoo runs unmodified on aotnn and matches MindSpore 2.10.

mindaudio 0.3.0's ``models/ecapatdnn.py`` (ECAPA-TDNN speaker embeddings + cosine Classifier: Conv1d with
dilation, BatchNorm2d through ExpandDims/Squeeze, Res2Net Split/Concat, squeeze-excitation, attentive statistics
pooling, L2Normalize, MatMul) is executed from the installed package as it ships, through
``install_mindspore_aliases``; the parameter names and the outputs for the same by-name weights equal those
MindSpore 2.10 gave (fixture by tools/ms_models_fixture.py).
"""
import os

import numpy as np
import pytest

from . import mindaudio_ecapa, mindcv_weights

if not mindaudio_ecapa.is_installed():
    pytest.skip("mindaudio is not installed", allow_module_level=True)

from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mindaudio", "ecapa_tdnn.npz")


@pytest.fixture(scope="module")
def ecapatdnn():
    install_mindspore_aliases()
    try:
        yield mindaudio_ecapa.load_module()
    finally:
        uninstall_mindspore_aliases()


def test_ecapa_tdnn_matches_mindspore(ecapatdnn):
    fixture = np.load(FIXTURE)
    embedding, classifier = mindaudio_ecapa.build(ecapatdnn)
    assert mindcv_weights.set_weights(embedding) == fixture["embedding_names"].tolist()
    assert mindcv_weights.set_weights(classifier) == fixture["classifier_names"].tolist()
    from aotnn import Tensor
    emb = embedding(Tensor(mindaudio_ecapa.model_input()))
    np.testing.assert_allclose(emb.asnumpy(), fixture["embeddings"], atol=1e-4, rtol=1e-3)
    logits = classifier(emb).asnumpy()
    np.testing.assert_allclose(logits, fixture["logits"], atol=1e-4, rtol=1e-3)
