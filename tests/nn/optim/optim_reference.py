"""Shared data and helpers for the optimizer tests, and numpy versions of MindSpore's update rules.

Every reference is written from MindSpore's documented formula (and its kernels where the docs are silent:
epsilon placement, first-step handling); they use float64 and know nothing of aotnn.
"""
from __future__ import annotations

import numpy as np

from aotnn import Parameter, Tensor

STEPS = 5
SHAPES = [(2, 3), (3,)]
NAMES = ["w", "b"]
_RNG = np.random.default_rng(7)
INIT = [_RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [[_RNG.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]


def make_params(names=NAMES, init=INIT, dtype=np.float32):
    return [Parameter(Tensor(a.astype(dtype)), name=n) for a, n in zip(init, names)]


def run(opt, params, grads=GRADS, dtype=np.float32):
    """Call ``opt`` once per step; the parameter values after each step."""
    trajectory = []
    for step_grads in grads:
        assert opt(tuple(Tensor(g.astype(dtype)) for g in step_grads))
        trajectory.append([p.asnumpy() for p in params])
    return trajectory


def check(trajectory, expected, rtol=1e-5, atol=1e-6):
    assert len(trajectory) == len(expected)
    for step, (got, want) in enumerate(zip(trajectory, expected)):
        for i, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"step {step}, parameter {i}")


def close(actual, expected, rtol=1e-5, atol=1e-6):
    actual = actual.asnumpy() if isinstance(actual, Tensor) else np.asarray(actual)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def f64(arrays):
    return [np.asarray(a, np.float64) for a in arrays]


class Reference:
    """Runs a per-parameter numpy update over the steps: ``update(i, w, g, state, t, lr) -> w``.

    ``lr`` is a float or a list of per-step values (the last one repeats); ``wd`` is added to the gradient
    (``g + wd * w``) for the parameters in ``decay``; ``scale`` divides the gradients (loss scale).
    """

    def __init__(self, update, init_state, lr=0.1, wd=0.0, decay=None, scale=1.0, init=INIT):
        self.update, self.lr, self.wd, self.scale = update, lr, wd, scale
        self.params = f64(init)
        self.decay = decay if decay is not None else [True] * len(self.params)
        self.state = [init_state(w) for w in self.params]

    def lr_at(self, index, step):
        lr = self.lr[index] if isinstance(self.lr, tuple) else self.lr
        if isinstance(lr, list):
            return lr[min(step, len(lr) - 1)]
        return lr

    def run(self, grads=GRADS):
        trajectory = []
        for step, step_grads in enumerate(grads):
            for i, g in enumerate(f64(step_grads)):
                wd = self.wd[i] if isinstance(self.wd, (list, tuple)) else self.wd
                g = g / self.scale
                if self.decay[i] and wd:
                    g = g + wd * self.params[i]
                self.params[i] = self.update(i, self.params[i], g, self.state[i], step + 1, self.lr_at(i, step))
            trajectory.append([w.copy() for w in self.params])
        return trajectory


# -- update rules ---------------------------------------------------------------------------------
def momentum_rule(u, nesterov=False):
    def update(i, w, g, s, t, lr):
        s["v"] = s["v"] * u + g
        return w - (g * lr + s["v"] * u * lr) if nesterov else w - lr * s["v"]
    return update, lambda w: {"v": np.zeros_like(w)}


def sgd_rule(momentum, dampening, wd, nesterov=False):
    """MindSpore's SGD kernel: the weight decay is inside; the first momentum step copies the gradient."""
    def update(i, w, g, s, t, lr):
        if wd > 0:
            g = g + wd * w
        if momentum > 0:
            s["v"] = g if s["first"] else momentum * s["v"] + (1 - dampening) * g
            s["first"] = False
            g = g + momentum * s["v"] if nesterov else s["v"]
        return w - lr * g
    return update, lambda w: {"v": np.zeros_like(w), "first": True}


def adam_rule(b1=0.9, b2=0.999, eps=1e-8, nesterov=False, amsgrad=False):
    def update(i, w, g, s, t, lr):
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        s["vhat"] = np.maximum(s["vhat"], s["v"])
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        numer = b1 * s["m"] + (1 - b1) * g if nesterov else s["m"]
        return w - lr_t * numer / (np.sqrt(s["vhat"] if amsgrad else s["v"]) + eps)
    return update, lambda w: {"m": np.zeros_like(w), "v": np.zeros_like(w), "vhat": np.zeros_like(w)}


def adam_weight_decay_rule(b1, b2, eps, wds):
    def update(i, w, g, s, t, lr):
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        return w - lr * (s["m"] / (np.sqrt(s["v"]) + eps) + wds[i] * w)
    return update, lambda w: {"m": np.zeros_like(w), "v": np.zeros_like(w)}


def adagrad_rule(accum=0.1, update_slots=True):
    def update(i, w, g, s, t, lr):
        if update_slots:
            s["h"] = s["h"] + g * g
        return w - lr * g / np.sqrt(s["h"])
    return update, lambda w: {"h": np.full_like(w, accum)}


def rmsprop_rule(decay=0.9, momentum=0.0, eps=1e-10, centered=False):
    def update(i, w, g, s, t, lr):
        s["ms"] = decay * s["ms"] + (1 - decay) * g * g
        s["mg"] = decay * s["mg"] + (1 - decay) * g
        var = s["ms"] - s["mg"] ** 2 if centered else s["ms"]
        s["mom"] = momentum * s["mom"] + lr * g / np.sqrt(var + eps)
        return w - s["mom"]
    return update, lambda w: {"ms": np.ones_like(w), "mg": np.zeros_like(w), "mom": np.zeros_like(w)}


def proximal_adagrad_rule(accum=0.1, l1=0.0, l2=0.0):
    """MindSpore's ApplyProximalAdagrad kernel: l1 and l2 scale with the per-element step lr / sqrt(accum)."""
    def update(i, w, g, s, t, lr):
        s["h"] = s["h"] + g * g
        step = lr / np.sqrt(s["h"])
        prox = w - step * g
        return np.sign(prox) / (1 + step * l2) * np.maximum(np.abs(prox) - step * l1, 0)
    return update, lambda w: {"h": np.full_like(w, accum)}


def ftrl_rule(accum=0.1, lr_power=-0.5, l1=0.0, l2=0.0):
    """MindSpore 2.10's ApplyFtrl kernel: the shrinkage is ``l1 - u`` whatever u's sign (its docstring writes
    ``sign(u) * l1 - u``; the kernel's numbers are the reference)."""
    def update(i, w, g, s, t, lr):
        m_new = s["m"] + g * g
        s["u"] = s["u"] + g - (m_new ** -lr_power - s["m"] ** -lr_power) / lr * w
        s["m"] = m_new
        shrunk = (l1 - s["u"]) / (m_new ** -lr_power / lr + 2 * l2)
        return np.where(np.abs(s["u"]) > l1, shrunk, 0.0)
    return update, lambda w: {"m": np.full_like(w, accum), "u": np.zeros_like(w)}


def lamb_rule(b1=0.9, b2=0.999, eps=1e-6, wds=(0.0, 0.0)):
    """MindSpore's Lamb kernel: bias-corrected moments; the trust ratio uses eps inside the root, clipped to
    [0, 10]; t counts the steps from 1."""
    def update(i, w, g, s, t, lr):
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        mh, vh = s["m"] / (1 - b1 ** t), s["v"] / (1 - b2 ** t)
        upd = mh / (np.sqrt(vh) + eps) + wds[i] * w
        ghat = mh / np.sqrt(vh + eps) + wds[i] * w
        wn, gn = np.linalg.norm(w), np.linalg.norm(ghat)
        trust = np.clip(wn / gn if wn > 0 and gn > 0 else 1.0, 0, 10)
        return w - trust * lr * upd
    return update, lambda w: {"m": np.zeros_like(w), "v": np.zeros_like(w)}


def rprop_rule(etaminus=0.5, etaplus=1.2, smin=1e-6, smax=50.0):
    def update(i, w, g, s, t, lr):
        if t == 1:
            s["step"] = np.full_like(w, lr)
        sign = np.sign(g * s["prev"])
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0))
        s["step"] = np.clip(s["step"] * factor, smin, smax)
        g = np.where(sign < 0, 0.0, g)
        s["prev"] = g
        return w - np.sign(g) * s["step"]
    return update, lambda w: {"prev": np.zeros_like(w), "step": np.zeros_like(w)}


def asgd_rule(lambd=1e-4, alpha=0.75, t0=1e6):
    def update(i, w, g, s, t, lr):
        eta = lr if t == 1 else s["eta"]
        w = w * (1 - lambd * eta) - eta * g
        s["ax"] = s["ax"] + (w - s["ax"]) * s["mu"] if s["mu"] != 1 else w.copy()
        s["eta"] = lr / (1 + lambd * lr * t) ** alpha
        s["mu"] = 1 / max(1, t - t0)
        return w
    return update, lambda w: {"eta": 0.0, "mu": 1.0, "ax": np.zeros_like(w)}


def adafactor_rule(eps=(1e-30, 1e-3), clip=1.0, decay_rate=0.8, beta1=0.0, wd=0.0, scale_parameter=True,
                   relative_step=True, warmup_init=False):
    """Adafactor as MindSpore writes it (factored second moment for rank >= 2)."""
    def rms(x):
        return np.sqrt(np.mean(x * x))

    def update(i, w, g, s, t, lr):
        if relative_step:
            lr = min(1e-6 * t if warmup_init else 1e-2, 1 / np.sqrt(t))
        if scale_parameter:
            lr = lr * max(eps[1], rms(w))
        beta2t = 1 - t ** -decay_rate
        u = g * g + eps[0]
        if w.ndim >= 2:
            s["row"] = beta2t * s["row"] + (1 - beta2t) * u.mean(-1)
            s["col"] = beta2t * s["col"] + (1 - beta2t) * u.mean(-2)
            r = 1 / np.sqrt(s["row"] / s["row"].mean(-1, keepdims=True))
            c = 1 / np.sqrt(s["col"])
            upd = r[..., :, None] * c[..., None, :] * g
        else:
            s["v"] = beta2t * s["v"] + (1 - beta2t) * u
            upd = g / np.sqrt(s["v"])
        upd = upd / max(rms(upd) / clip, 1.0) * lr
        if beta1 > 0:
            s["m"] = beta1 * s["m"] + (1 - beta1) * upd
            upd = s["m"]
        if wd:
            w = w - w * wd * lr
        return w - upd

    def init(w):
        return {"row": np.zeros(w.shape[:-1]), "col": np.zeros(w.shape[:-2] + w.shape[-1:]),
                "v": np.zeros_like(w), "m": np.zeros_like(w)}
    return update, init
