"""The ECAPA-TDNN speaker-embedding model of mindaudio 0.3.0, built the same way on MindSpore and on aotnn.

mindaudio's package ``__init__`` imports its data pipeline (scipy, sentencepiece, ...); only the model file
``mindaudio/models/ecapatdnn.py`` is loaded here, straight from the installed package and unmodified, so that
it needs nothing but ``mindspore``. Weights come from :mod:`mindcv_weights` (seeded by parameter name).
Used by tools/ms_models_fixture.py (MindSpore side) and tests/models/test_ms_models_zoo.py (aotnn side).
"""
import importlib.util
import os
import sys

import numpy as np

from .mindcv_weights import SEED

MODULE_NAME = "mindaudio_ecapatdnn_unmodified"
# A small configuration (the file's defaults are 512..1536 channels) so the aotnn compile stays short.
EMBEDDING_CONFIG = dict(input_size=40, lin_neurons=32, channels=(64, 64, 64, 64, 192),
                        attention_channels=16, res2net_scale=4, se_channels=16)
NUM_SPEAKERS = 10
INPUT_SHAPE = (2, 100, 40)  # batch, frames, filterbank features


def is_installed() -> bool:
    """Whether mindaudio is installed (looked up without importing its package ``__init__``)."""
    return importlib.util.find_spec("mindaudio") is not None


def load_module():
    """Execute the installed ``mindaudio/models/ecapatdnn.py`` as a standalone module and return it.

    Raises:
        ModuleNotFoundError: mindaudio is not installed.
    """
    spec = importlib.util.find_spec("mindaudio")
    if spec is None:
        raise ModuleNotFoundError("mindaudio is not installed")
    path = os.path.join(list(spec.submodule_search_locations)[0], "models", "ecapatdnn.py")
    module_spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules.pop(MODULE_NAME, None)
    module_spec.loader.exec_module(module)
    return module


def build(module):
    """The embedding network and the cosine classifier on top of it, in inference mode."""
    embedding = module.EcapaTDNN(**EMBEDDING_CONFIG)
    classifier = module.Classifier(EMBEDDING_CONFIG["lin_neurons"], lin_neurons=EMBEDDING_CONFIG["lin_neurons"],
                                   out_neurons=NUM_SPEAKERS)
    embedding.set_train(False)
    classifier.set_train(False)
    return embedding, classifier


def model_input() -> np.ndarray:
    """The seeded (batch, frames, features) input."""
    return np.random.default_rng(SEED).standard_normal(INPUT_SHAPE).astype(np.float32)
