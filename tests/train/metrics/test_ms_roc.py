"""ROC against MindSpore 2.10's ``nn.ROC`` outputs on a fixed input: multi-class (``class_num=3``, 10 samples,
where MindSpore reshapes the scores rather than transposing them) and binary.

Fixture: tools/ms_numeric_fixtures.py (``roc_fixture``) run under MindSpore 2.10.
"""
from __future__ import annotations

import json
import os

import numpy as np

from aotnn import Tensor, nn

with open(os.path.join(os.path.dirname(__file__), "fixtures", "ms_roc.json")) as _f:
    FIXTURE = json.load(_f)
SCORES = np.array(FIXTURE["scores"], np.float32)
LABELS = np.array(FIXTURE["labels"], np.int32)


def _check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w), rtol=1e-6, atol=1e-7)


def test_multiclass_roc_matches_mindspore():
    metric = nn.ROC(class_num=3)
    metric.clear()
    metric.update(Tensor(SCORES), Tensor(LABELS))
    fpr, tpr, thresholds = metric.eval()
    want = FIXTURE["multiclass"]
    assert len(fpr) == len(tpr) == len(thresholds) == 3
    _check(fpr, want["fpr"])
    _check(tpr, want["tpr"])
    _check(thresholds, want["thresholds"])


def test_binary_roc_matches_mindspore():
    metric = nn.ROC(pos_label=1)
    metric.update(Tensor(SCORES[:, 1]), Tensor((LABELS == 1).astype(np.int32)))
    got = metric.eval()
    want = FIXTURE["binary"]
    _check(got, [want["fpr"], want["tpr"], want["thresholds"]])
