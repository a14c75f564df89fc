"""Global random seed, MindSpore's ``set_seed`` / ``get_seed``, and the generators initializers draw from."""
from __future__ import annotations

import numbers
import threading
from typing import Optional

import numpy as np

_GLOBAL_SEED: Optional[int] = None
_COUNTERS: dict = {}
_LOCK = threading.Lock()


def _check_seed(value, arg_name: str) -> int:
    """Validate a seed argument: a non-negative int (numpy integers accepted, bool rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"The argument '{arg_name}' must be type of int, but got {type(value).__name__}.")
    value = int(value)
    if value < 0:
        raise ValueError(f"The argument '{arg_name}' must be a non-negative int, but got {value}.")
    return value


def set_seed(seed: int) -> None:
    """
    Set the global seed.

    The global seed makes initializers (``aotnn.common.initializer``) deterministic and, as in MindSpore,
    also seeds ``numpy.random``. Calling it again with the same seed replays the same random sequence,
    because the per-call counters used by :func:`get_rng` are reset.

    Args:
        seed (int): The seed, an int >= 0.

    Raises:
        TypeError: If `seed` is not an int.
        ValueError: If `seed` is negative.
    """
    seed = _check_seed(seed, "seed")
    global _GLOBAL_SEED
    with _LOCK:
        _GLOBAL_SEED = seed
        _COUNTERS.clear()
    np.random.seed(seed % (1 << 32))


def get_seed() -> Optional[int]:
    """
    Get the global seed.

    Returns:
        int or None, the seed given to :func:`set_seed`, None when it was never called.
    """
    return _GLOBAL_SEED


def _reset_global_seed() -> None:
    """Forget the global seed (back to non-deterministic initialisation). For tests."""
    global _GLOBAL_SEED
    with _LOCK:
        _GLOBAL_SEED = None
        _COUNTERS.clear()


def get_rng(op_seed: Optional[int] = None) -> np.random.Generator:
    """
    A numpy random generator for one random operation (one initializer call, for instance).

    With no global seed and no `op_seed` the generator is seeded from OS entropy. Otherwise it is derived
    from (global seed, op_seed, n) where n counts the calls made with that `op_seed` since the last
    :func:`set_seed`, so successive calls give different values and a rerun after ``set_seed`` replays them.
    A missing global seed counts as 0 when `op_seed` is given.

    Args:
        op_seed (int, optional): Operator-level seed, an int >= 0. Default: ``None``.

    Returns:
        numpy.random.Generator.

    Raises:
        TypeError: If `op_seed` is not an int.
        ValueError: If `op_seed` is negative.
    """
    if op_seed is not None:
        op_seed = _check_seed(op_seed, "op_seed")
    with _LOCK:
        global_seed = _GLOBAL_SEED
        if global_seed is None and op_seed is None:
            return np.random.default_rng()
        key = op_seed
        count = _COUNTERS.get(key, 0)
        _COUNTERS[key] = count + 1
    entropy = [global_seed or 0, 0 if op_seed is None else 1, op_seed or 0, count]
    return np.random.default_rng(np.random.SeedSequence(entropy))
