"""Deterministic weights and input for mindcv models, the same on MindSpore and on aotnn.

Each parameter's value comes from a numpy generator seeded by (seed, crc32 of its key), so both sides set
identical values by name without shipping a checkpoint. Used by tools/mindcv_fixtures.py (MindSpore side)
and tests/models/test_mindcv_models.py (aotnn side); numpy only.
"""
import zlib

import numpy as np

SEED = 20261128
INPUT_SHAPE = (1, 3, 224, 224)


def value_for(key: str, shape: tuple) -> np.ndarray:
    """The value of the parameter at ``key`` (a ``parameters_and_names`` key) with this shape."""
    rng = np.random.default_rng([SEED, zlib.crc32(key.encode())])
    shape = tuple(int(d) for d in shape)
    leaf = key.rsplit(".", 1)[-1]
    if "variance" in leaf:
        value = rng.uniform(0.5, 1.5, shape)
    elif leaf in ("gamma",) or leaf.endswith("gamma"):
        value = 1.0 + 0.1 * rng.standard_normal(shape)
    elif len(shape) <= 1:  # beta, bias, moving_mean, scalar knobs
        value = 0.05 * rng.standard_normal(shape)
    else:
        fan_in = int(np.prod(shape[1:]))
        value = rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))
    return value.astype(np.float32)


def model_input(size: int = INPUT_SHAPE[-1]) -> np.ndarray:
    """The seeded 1x3x``size``x``size`` input (224 by default)."""
    return np.random.default_rng(SEED).standard_normal((1, 3, size, size)).astype(np.float32)


def fixture_name(model: str, size: int) -> str:
    """File stem of a model's fixture: ``<model>`` at 224x224, ``<model>@<size>`` otherwise."""
    return model if size == INPUT_SHAPE[-1] else f"{model}@{size}"


def parse_fixture_name(stem: str) -> tuple:
    """Inverse of :func:`fixture_name`: ``(model, size)``."""
    model, _, size = stem.partition("@")
    return model, int(size) if size else INPUT_SHAPE[-1]


def set_weights(net) -> list:
    """Set every parameter from :func:`value_for`; returns ``[key, Parameter.name]`` pairs."""
    pairs = []
    for key, param in net.parameters_and_names():
        param.set_data(_tensor_like(param, value_for(key, param.shape)))
        pairs.append([key, param.name])
    return pairs


def _tensor_like(param, array):
    import mindspore  # the real one in the fixture tool, aotnn's through the aliases in the test
    return mindspore.Tensor(array.astype(np.float32), param.dtype)
