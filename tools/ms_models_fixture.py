"""Outputs of a second MindSpore model zoo's model on MindSpore, for tests/models/test_ms_models_zoo.py.

Run with a python that has MindSpore 2.x and mindaudio 0.3.0 (installed with --no-deps: only its model file
is loaded, see tests/models/mindaudio_ecapa.py):

    DNNL_MAX_CPU_ISA=AVX2 python tools/ms_models_fixture.py

Builds mindaudio's ECAPA-TDNN (small configuration) and its cosine Classifier, sets every parameter from
tests/models/mindcv_weights.py (seeded by its name), runs the seeded input and writes
tests/models/fixtures/mindaudio/ecapa_tdnn.npz: the embeddings, the logits and both networks'
(key, Parameter.name) pairs. No weights are stored.
"""
from __future__ import annotations

import os
import sys

from fixture_files import save_npz  # tools/ is on sys.path when a tool runs

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(ROOT, "tests", "models", "fixtures", "mindaudio", "ecapa_tdnn.npz")


def _save(path: str, **arrays) -> None:
    save_npz(path, **arrays)


def main() -> None:
    sys.path.insert(0, ROOT)
    import mindspore
    from tests.models import mindaudio_ecapa, mindcv_weights
    from importlib.metadata import version

    mindspore.set_seed(0)
    embedding, classifier = mindaudio_ecapa.build(mindaudio_ecapa.load_module())
    embedding_names = mindcv_weights.set_weights(embedding)
    classifier_names = mindcv_weights.set_weights(classifier)
    emb = embedding(mindspore.Tensor(mindaudio_ecapa.model_input()))
    logits = classifier(emb)
    _save(OUT_PATH, embeddings=emb.asnumpy().astype(np.float32), logits=logits.asnumpy().astype(np.float32),
          embedding_names=np.array(embedding_names, dtype=str), classifier_names=np.array(classifier_names, dtype=str),
          versions=np.array([mindspore.__version__, version("mindaudio")]))
    print(f"ecapa_tdnn: {len(embedding_names)}+{len(classifier_names)} parameters, embeddings {emb.shape}, "
          f"logits {logits.shape} |max| {np.abs(logits.asnumpy()).max():.3g} -> {OUT_PATH}")


if __name__ == "__main__":
    main()
