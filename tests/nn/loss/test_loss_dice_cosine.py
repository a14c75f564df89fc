"""DiceLoss and MultiClassDiceLoss against numpy implementations of their formulas, and
CosineEmbeddingLoss against torch's cosine_embedding_loss."""
from __future__ import annotations

import numpy as np
import pytest
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn, ops
from .loss_reference import close, t

RNG = np.random.default_rng(33)
P2 = RNG.random((4, 3)).astype(np.float32)
Y2 = (RNG.random((4, 3)) > 0.5).astype(np.float32)
P4 = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
Y4 = (RNG.random((2, 3, 4, 4)) > 0.5).astype(np.float32)


def dice_reference(x, y, smooth=1e-5):
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    return 1 - 2 * (x @ y) / (x @ x + y @ y + smooth)


def softmax_last(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def multiclass_dice_reference(x, y, weights=None, ignore=None, activation=softmax_last):
    """Mean over channels (axis 1) of the binary Dice loss of each channel, optionally weighted."""
    x = activation(x.astype(np.float64)) if activation else x.astype(np.float64)
    channels = y.shape[1]
    total = 0.0
    for c in range(channels):
        if c == ignore:
            continue
        loss = dice_reference(x[:, c], y[:, c])
        total = total + (loss * weights[c] if weights is not None else loss)
    return np.asarray(total / channels)


def test_dice_loss_matches_formula_and_docstring():
    close(nn.DiceLoss()(Tensor(P2), Tensor(Y2)), np.float32(dice_reference(P2, Y2)), rtol=1e-5)
    close(nn.DiceLoss(smooth=0.5)(Tensor(P4), Tensor(Y4)), np.float32(dice_reference(P4, Y4, 0.5)), rtol=1e-5)
    logits = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]), ms.float32)
    labels = Tensor(np.array([[0, 1], [1, 0], [0, 1]]), ms.float32)
    close(nn.DiceLoss(smooth=1e-5)(logits, labels), np.float32(0.38596618), rtol=1e-6)


def test_dice_loss_float16_and_errors():
    out = nn.DiceLoss()(Tensor(P2.astype(np.float16)), Tensor(Y2.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, np.float32(dice_reference(P2, Y2)), rtol=3e-3)
    with pytest.raises(TypeError, match="smooth"):
        nn.DiceLoss(smooth=1)
    with pytest.raises(ValueError, match="smooth"):
        nn.DiceLoss(smooth=-1.0)
    with pytest.raises(ValueError, match="shape"):
        nn.DiceLoss()(Tensor(P2), Tensor(Y2[:2]))
    with pytest.raises(TypeError, match="uint8"):
        nn.DiceLoss()(Tensor(P2.astype(np.uint8)), Tensor(Y2))


def test_multiclass_dice_docstring_example():
    logits = Tensor(np.array([[0.2, 0.5, 0.7], [0.3, 0.1, 0.5], [0.9, 0.6, 0.3]]), ms.float32)
    labels = Tensor(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]]), ms.float32)
    out = nn.MultiClassDiceLoss(weights=None, ignore_indiex=None, activation="softmax")(logits, labels)
    assert out.shape == ()
    close(out, np.float32(0.54958105), rtol=1e-6)


def test_multiclass_dice_weights_give_shape_one_and_ignore_index():
    weights = np.array([[1.0], [2.0], [0.5]], np.float32)
    out = nn.MultiClassDiceLoss(weights=Tensor(weights), ignore_indiex=1)(Tensor(P4), Tensor(Y4))
    assert out.shape == (1,)
    close(out, multiclass_dice_reference(P4, Y4, weights, ignore=1), rtol=1e-5)


@pytest.mark.parametrize("name, fn", [("sigmoid", lambda a: 1 / (1 + np.exp(-a))), ("relu", lambda a: np.maximum(a, 0)),
                                      ("tanh", np.tanh)])
def test_multiclass_dice_activations(name, fn):
    close(nn.MultiClassDiceLoss(activation=name)(Tensor(P4), Tensor(Y4)),
          multiclass_dice_reference(P4, Y4, activation=fn), rtol=1e-5)


def test_multiclass_dice_cell_activation_none_and_float16():
    weights = RNG.random((3, 2)).astype(np.float32)
    close(nn.MultiClassDiceLoss(Tensor(weights), activation=None)(Tensor(P2), Tensor(Y2)),
          multiclass_dice_reference(P2, Y2, weights, activation=None), rtol=1e-5)
    close(nn.MultiClassDiceLoss(activation=nn.Sigmoid())(Tensor(P2), Tensor(Y2)),
          multiclass_dice_reference(P2, Y2, activation=lambda a: 1 / (1 + np.exp(-a))), rtol=1e-5)
    out = nn.MultiClassDiceLoss()(Tensor(P2.astype(np.float16)), Tensor(Y2.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, multiclass_dice_reference(P2, Y2), rtol=3e-3)


def test_multiclass_dice_errors():
    with pytest.raises(TypeError, match="weights"):
        nn.MultiClassDiceLoss(weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="dimension of 'weights'"):
        nn.MultiClassDiceLoss(weights=Tensor(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="ignore_indiex"):
        nn.MultiClassDiceLoss(ignore_indiex=1.0)
    with pytest.raises(ValueError, match="activation"):
        nn.MultiClassDiceLoss(activation="gelu")
    with pytest.raises(TypeError, match="activation"):
        nn.MultiClassDiceLoss(activation=3)
    with pytest.raises(ValueError, match="weight_shape"):
        nn.MultiClassDiceLoss(weights=Tensor(np.ones((2, 1), np.float32)))(Tensor(P2), Tensor(Y2))
    with pytest.raises(ValueError, match="greater than 1"):
        nn.MultiClassDiceLoss()(Tensor(P2[0]), Tensor(Y2[0]))


def test_dice_gradients_match_torch():
    x = t(P2, grad=True)
    y = t(Y2)
    (1 - 2 * (x * y).sum() / ((x * x).sum() + (y * y).sum() + 1e-5)).backward()
    close(ops.grad(nn.DiceLoss())(Tensor(P2), Tensor(Y2)), x.grad, rtol=1e-4, atol=1e-6)


# -- CosineEmbeddingLoss ------------------------------------------------------------------------------

X1 = RNG.standard_normal((5, 4)).astype(np.float32)
X2 = RNG.standard_normal((5, 4)).astype(np.float32)
SIGNS = np.array([1, -1, 1, -1, -1], np.int32)


@pytest.mark.parametrize("margin, reduction", [(0.0, "mean"), (0.3, "sum"), (-0.5, "none")])
def test_cosine_embedding_matches_torch(margin, reduction):
    close(nn.CosineEmbeddingLoss(margin, reduction)(Tensor(X1), Tensor(X2), Tensor(SIGNS)),
          F.cosine_embedding_loss(t(X1), t(X2), t(SIGNS.astype(np.int64)), margin=margin, reduction=reduction),
          rtol=1e-5, atol=1e-6)


def test_cosine_embedding_3d_docstring_and_float16():
    a = RNG.standard_normal((3, 4, 2)).astype(np.float32)
    b = RNG.standard_normal((3, 4, 2)).astype(np.float32)
    signs = np.where(RNG.random((3, 2)) > 0.5, 1, -1).astype(np.float32)
    cos = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    close(nn.CosineEmbeddingLoss(0.1, 'none')(Tensor(a), Tensor(b), Tensor(signs)),
          np.where(signs == 1, 1 - cos, np.maximum(cos - 0.1, 0)), rtol=1e-5, atol=1e-6)
    x1 = Tensor(np.array([[0.3, 0.8], [0.4, 0.3]]), ms.float32)
    x2 = Tensor(np.array([[0.4, 1.2], [-0.4, -0.9]]), ms.float32)
    close(nn.CosineEmbeddingLoss()(x1, x2, Tensor(np.array([1, -1]), ms.int32)), np.float32(0.0003425479),
          rtol=1e-3)
    out = nn.CosineEmbeddingLoss()(Tensor(X1.astype(np.float16)), Tensor(X2.astype(np.float16)), Tensor(SIGNS))
    assert out.dtype == ms.float16
    close(out, F.cosine_embedding_loss(t(X1), t(X2), t(SIGNS.astype(np.int64))), rtol=5e-3, atol=1e-3)


def test_cosine_embedding_errors_and_gradient():
    with pytest.raises(TypeError, match="margin"):
        nn.CosineEmbeddingLoss(margin=0)
    with pytest.raises(ValueError, match="margin"):
        nn.CosineEmbeddingLoss(margin=1.5)
    with pytest.raises(ValueError, match="labels"):
        nn.CosineEmbeddingLoss()(Tensor(X1), Tensor(X2), Tensor(SIGNS[:3]))
    with pytest.raises(TypeError, match="dtype"):
        nn.CosineEmbeddingLoss()(Tensor(X1), Tensor(X2.astype(np.float16)), Tensor(SIGNS))
    a = t(X1, grad=True)
    F.cosine_embedding_loss(a, t(X2), t(SIGNS.astype(np.int64)), margin=-0.5).backward()
    close(ops.grad(nn.CosineEmbeddingLoss(-0.5))(Tensor(X1), Tensor(X2), Tensor(SIGNS)), a.grad, rtol=1e-4, atol=1e-6)
