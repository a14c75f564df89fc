"""MindSpore 2.x's default initializers of Dense and the convolutions (``weight_init=None``/``bias_init=None``):
HeUniform with ``a = sqrt(5)`` over fan_in for the weight, Uniform(1 / sqrt(fan_in)) for the bias."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...common.initializer import HeUniform, Uniform, _calculate_fan_in_and_fan_out


def default_weight_init(weight_init: Any) -> Any:
    """``weight_init``, or MindSpore 2.x's default HeUniform(sqrt(5)) when it is None."""
    return HeUniform(math.sqrt(5)) if weight_init is None else weight_init


def default_bias_init(bias_init: Any, fan_in: int) -> Any:
    """``bias_init``, or Uniform(1 / sqrt(fan_in)) when it is None ('zeros' when fan_in is 0)."""
    if bias_init is not None:
        return bias_init
    return Uniform(1 / math.sqrt(fan_in)) if fan_in else "zeros"


def weight_fan_in(shape: Sequence[int]) -> int:
    """fan_in of a weight of this shape, as MindSpore computes it for the default bias."""
    return _calculate_fan_in_and_fan_out(shape)[0]
