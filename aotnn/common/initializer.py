"""Parameter initializers, MindSpore's ``mindspore.common.initializer``.

Every ``Initializer`` fills a numpy array in place (``init(arr)``); :func:`initializer` builds a Tensor from an
initializer, one of its string names, a number or an existing value. Random ones draw from
:func:`aotnn.common.seed.get_rng`, so ``set_seed`` makes them reproducible.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import dtype as mstype
from .seed import get_rng

_INITIALIZER_ALIAS: dict = {}


class Initializer:
    """
    The abstract base class of the initializers.

    Calling an initializer on a numpy array fills the array in place (and returns it).

    Args:
        kwargs (dict): Keyword arguments of the initializer, kept for ``repr``.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._seed: Optional[int] = None

    @property
    def seed(self) -> Optional[int]:
        """Operator-level seed passed to ``get_rng`` (None: use the global seed only)."""
        return self._seed

    @seed.setter
    def seed(self, value: Optional[int]) -> None:
        self._seed = value

    def _rng(self) -> np.random.Generator:
        return get_rng(self._seed)

    def _initialize(self, arr: np.ndarray) -> None:
        raise NotImplementedError("Must be overridden!")

    def __call__(self, arr: np.ndarray) -> np.ndarray:
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"For '{type(self).__name__}', the argument 'arr' must be a numpy.ndarray, "
                            f"but got {type(arr).__name__}.")
        self._initialize(arr)
        return arr

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


def _register(*aliases: str):
    """Register a class under its lower-cased name and the given aliases."""
    def alias_reg(cls):
        for name in (cls.__name__.lower(),) + aliases:
            _INITIALIZER_ALIAS.setdefault(name, cls)
        return cls
    return alias_reg


def _assign(arr: np.ndarray, data: Any) -> None:
    arr[...] = data


def _calculate_fan_in_and_fan_out(shape: Sequence[int]) -> Tuple[int, int]:
    """fan_in/fan_out as MindSpore and PyTorch compute them: (dims[1], dims[0]) times the receptive field."""
    dimensions = len(shape)
    if dimensions < 2:
        raise ValueError("'fan_in' and 'fan_out' can not be computed for tensor with fewer than 2 dimensions, "
                         f"but got dimensions {dimensions}.")
    receptive_field_size = int(np.prod(shape[2:], dtype=np.int64)) if dimensions > 2 else 1
    return int(shape[1]) * receptive_field_size, int(shape[0]) * receptive_field_size


def _calculate_correct_fan(shape: Sequence[int], mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"The argument 'mode' must be 'fan_in' or 'fan_out', but got {mode!r}.")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
    return fan_in if mode == "fan_in" else fan_out


def _calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain of a nonlinearity (MindSpore's ``_calculate_gain``)."""
    linear_fns = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "sigmoid")
    if nonlinearity in linear_fns:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            negative_slope = param
        else:
            raise ValueError(f"The argument 'negative_slope' must be int or float when 'nonlinearity' is "
                             f"'leaky_relu', but got {param!r}.")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    raise ValueError("The argument 'nonlinearity' must be one of ['linear', 'conv1d', 'conv2d', 'conv3d', "
                     "'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'sigmoid', 'tanh', 'relu', "
                     f"'leaky_relu'], but got {nonlinearity!r}.")


def _check_sigma(sigma: float, name: str) -> None:
    if sigma < 0:
        raise ValueError(f"For '{name}', the argument 'sigma' must be >= 0, but got {sigma}.")


def _truncated_normal(rng: np.random.Generator, shape: Tuple[int, ...], sigma: float,
                      bound: float = 2.0) -> np.ndarray:
    """N(0, sigma^2) samples redrawn until they lie within [-bound*sigma, bound*sigma]."""
    data = rng.standard_normal(shape)
    outside = np.abs(data) > bound
    while outside.any():
        data[outside] = rng.standard_normal(int(outside.sum()))
        outside = np.abs(data) > bound
    return data * sigma


@_register("zeros")
class Zero(Initializer):
    """Fills the array with zeros. String names: 'zero', 'zeros'."""

    def _initialize(self, arr):
        arr.fill(0)


@_register("ones")
class One(Initializer):
    """Fills the array with ones. String names: 'one', 'ones'."""

    def _initialize(self, arr):
        arr.fill(1)


class Constant(Initializer):
    """
    Fills the array with a constant value.

    Args:
        value (Union[int, float, bool, numpy.ndarray]): The value (an array is broadcast to the shape).
    """

    def __init__(self, value: Any):
        super().__init__(value=value)
        self.value = value

    def _initialize(self, arr):
        _assign(arr, self.value)


@_register()
class Normal(Initializer):
    r"""
    Samples from the normal distribution :math:`{N}(\text{mean}, \text{sigma}^2)`. String name: 'normal'.

    Args:
        sigma (float): The standard deviation. Default: 0.01.
        mean (float): The mean. Default: 0.0.

    Raises:
        ValueError: If `sigma` is negative (when called).
    """

    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma = sigma
        self.mean = mean

    def _initialize(self, arr):
        _check_sigma(self.sigma, "Normal")
        _assign(arr, self._rng().normal(self.mean, self.sigma, arr.shape))


@_register()
class Uniform(Initializer):
    r"""
    Samples from the uniform distribution :math:`{U}(-\text{scale}, \text{scale})`. String name: 'uniform'.

    Args:
        scale (float): The bound of the distribution. Default: 0.07.
    """

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _initialize(self, arr):
        _assign(arr, self._rng().uniform(-self.scale, self.scale, arr.shape))


@_register("truncated_normal")
class TruncatedNormal(Initializer):
    r"""
    Samples from :math:`{N}(0, \text{sigma}^2)` truncated to :math:`[-2\sigma, 2\sigma]`.
    String names: 'truncatednormal', 'truncated_normal'.

    Args:
        sigma (float): The standard deviation before truncation. Default: 0.01.
    """

    def __init__(self, sigma: float = 0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _initialize(self, arr):
        _check_sigma(self.sigma, "TruncatedNormal")
        _assign(arr, _truncated_normal(self._rng(), arr.shape, self.sigma))


class _XavierBase(Initializer):
    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    @staticmethod
    def _fan_sum(shape) -> int:
        fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
        return fan_in + fan_out


@_register("xavier_uniform")
class XavierUniform(_XavierBase):
    r"""
    Samples from :math:`{U}(-b, b)`, :math:`b = gain \sqrt{6 / (n_{in} + n_{out})}` (Glorot uniform).
    String names: 'xavieruniform', 'xavier_uniform'.

    Args:
        gain (float): An optional scaling factor. Default: 1.

    Raises:
        ValueError: If the array has fewer than 2 dimensions (when called).
    """

    def _initialize(self, arr):
        bound = self.gain * math.sqrt(6.0 / self._fan_sum(arr.shape))
        _assign(arr, self._rng().uniform(-bound, bound, arr.shape))


@_register("xavier_normal")
class XavierNormal(_XavierBase):
    r"""
    Samples from :math:`{N}(0, \sigma^2)`, :math:`\sigma = gain \sqrt{2 / (n_{in} + n_{out})}` (Glorot normal).
    String names: 'xaviernormal', 'xavier_normal'.

    Args:
        gain (float): An optional scaling factor. Default: 1.

    Raises:
        ValueError: If the array has fewer than 2 dimensions (when called).
    """

    def _initialize(self, arr):
        std = self.gain * math.sqrt(2.0 / self._fan_sum(arr.shape))
        _assign(arr, self._rng().normal(0.0, std, arr.shape))


class _HeBase(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope = negative_slope
        self.mode = mode
        self.nonlinearity = nonlinearity

    def _std(self, shape) -> float:
        fan = _calculate_correct_fan(shape, self.mode)
        return _calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


@_register("he_uniform")
class HeUniform(_HeBase):
    r"""
    Samples from :math:`{U}(-b, b)`, :math:`b = gain \sqrt{3 / fan\_mode}` (Kaiming uniform), where for
    'leaky_relu' :math:`gain = \sqrt{2 / (1 + a^2)}`. String names: 'heuniform', 'he_uniform'.

    Args:
        negative_slope (Union[int, float]): Negative slope `a` of the leaky ReLU. Default: 0.
        mode (str): 'fan_in' or 'fan_out'. Default: 'fan_in'.
        nonlinearity (str): The nonlinearity the gain is computed for. Default: 'leaky_relu'.

    Raises:
        ValueError: If `mode` or `nonlinearity` is invalid, or the array has fewer than 2 dimensions.
    """

    def _initialize(self, arr):
        bound = math.sqrt(3.0) * self._std(arr.shape)
        _assign(arr, self._rng().uniform(-bound, bound, arr.shape))


@_register("he_normal")
class HeNormal(_HeBase):
    r"""
    Samples from :math:`{N}(0, \sigma^2)`, :math:`\sigma = gain / \sqrt{fan\_mode}` (Kaiming normal).
    String names: 'henormal', 'he_normal'.

    Args:
        negative_slope (Union[int, float]): Negative slope `a` of the leaky ReLU. Default: 0.
        mode (str): 'fan_in' or 'fan_out'. Default: 'fan_in'.
        nonlinearity (str): The nonlinearity the gain is computed for. Default: 'leaky_relu'.

    Raises:
        ValueError: If `mode` or `nonlinearity` is invalid, or the array has fewer than 2 dimensions.
    """

    def _initialize(self, arr):
        _assign(arr, self._rng().normal(0.0, self._std(arr.shape), arr.shape))


@_register()
class Identity(Initializer):
    """
    A 2-D identity matrix (``numpy.eye``). String name: 'identity'.

    Raises:
        ValueError: If the array is not 2-D.
    """

    def _initialize(self, arr):
        if arr.ndim != 2:
            raise ValueError(f"For Identity initializer, the dimension of the initialized tensor should be 2, "
                             f"but got {arr.ndim}.")
        _assign(arr, np.eye(arr.shape[0], arr.shape[1]))


@_register()
class Orthogonal(Initializer):
    """
    A (semi-)orthogonal matrix, trailing dimensions flattened. String name: 'orthogonal'.

    Args:
        gain (float): An optional scaling factor. Default: 1.

    Raises:
        ValueError: If the array has fewer than 2 dimensions.
    """

    def __init__(self, gain: float = 1.0):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        if arr.ndim < 2:
            raise ValueError(f"For Orthogonal initializer, the dimension of the initialized tensor should be no "
                             f"less than 2, but got {arr.ndim}.")
        rows = arr.shape[0]
        cols = arr.size // rows
        data = self._rng().standard_normal((rows, cols))
        if rows < cols:
            data = data.T
        q, r = np.linalg.qr(data)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        _assign(arr, (q * self.gain).reshape(arr.shape))


@_register()
class Dirac(Initializer):
    """
    Dirac delta for 3-D/4-D/5-D convolution weights (keeps the input's identity). String name: 'dirac'.

    Args:
        groups (int): Number of convolution groups. Default: 1.

    Raises:
        ValueError: If the array is not 3-D, 4-D or 5-D, or its first dimension is not divisible by `groups`.
    """

    def __init__(self, groups: int = 1):
        super().__init__(groups=groups)
        self.groups = groups

    def _initialize(self, arr):
        if arr.ndim not in (3, 4, 5):
            raise ValueError(f"For Dirac initializer, only support to initialize tensor with dimension of 3, 4 or 5,"
                             f" but got {arr.ndim}.")
        if arr.shape[0] % self.groups != 0:
            raise ValueError(f"For Dirac initializer, the first dimension of the initialized tensor must be "
                             f"divisible by groups, but got first dimension {arr.shape[0]}, groups {self.groups}.")
        data = np.zeros(arr.shape)
        out_per_group = arr.shape[0] // self.groups
        centre = tuple(s // 2 for s in arr.shape[2:])
        for group in range(self.groups):
            for dim in range(min(out_per_group, arr.shape[1])):
                data[(group * out_per_group + dim, dim) + centre] = 1
        _assign(arr, data)


@_register()
class VarianceScaling(Initializer):
    r"""
    Samples scaled to the fan: std :math:`\sqrt{scale / n}` (normal) or bound :math:`\sqrt{3 scale / n}` (uniform),
    n being fan_in, fan_out or their mean. String name: 'variancescaling'.

    Args:
        scale (float): The scaling factor, > 0. Default: 1.0.
        mode (str): 'fan_in', 'fan_out' or 'fan_avg'. Default: 'fan_in'.
        distribution (str): 'uniform', 'truncated_normal' or 'untruncated_normal'. Default: 'truncated_normal'.

    Raises:
        ValueError: If an argument is out of its range.
    """

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal"):
        super().__init__(scale=scale, mode=mode, distribution=distribution)
        if scale <= 0.0:
            raise ValueError(f"For VarianceScaling initializer, the argument 'scale' must be greater than 0, "
                             f"but got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"For VarianceScaling initializer, the argument 'mode' must be fan_in, fan_out or "
                             f"fan_avg, but got {mode}.")
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"For VarianceScaling initializer, the argument 'distribution' must be uniform, "
                             f"truncated_normal or untruncated_normal, but got {distribution}.")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _initialize(self, arr):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(arr.shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, fan)
        rng = self._rng()
        if self.distribution == "truncated_normal":
            # 0.8796... is the std of a standard normal truncated to [-2, 2].
            data = _truncated_normal(rng, arr.shape, math.sqrt(scale) / 0.87962566103423978)
        elif self.distribution == "untruncated_normal":
            data = rng.normal(0.0, math.sqrt(scale), arr.shape)
        else:
            limit = math.sqrt(3.0 * scale)
            data = rng.uniform(-limit, limit, arr.shape)
        _assign(arr, data)


def _normalize_shape(shape: Union[int, Sequence[int], None]) -> Tuple[int, ...]:
    if shape is None:
        raise ValueError("For 'initializer', the argument 'shape' must be given when 'init' is not a Tensor or "
                         "numpy array.")
    if isinstance(shape, (numbers.Integral,)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"For 'initializer', the argument 'shape' must be int, tuple or list, "
                        f"but got {type(shape).__name__}.")
    for value in shape:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
            raise ValueError(f"For 'initializer', the argument 'shape' is invalid, the value of 'shape' must be "
                             f"positive integer, but got {tuple(shape)}.")
    return tuple(int(v) for v in shape)


def _check_value_shape(value_shape: Tuple[int, ...], shape: Any) -> None:
    if shape is None:
        return
    expected = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if tuple(value_shape) != expected:
        raise ValueError(f"For 'initializer', the shape of the 'init' argument should be same as the argument "
                         f"'shape', but got the 'init' shape {list(value_shape)} and the 'shape' {list(expected)}.")


def initializer(init: Any, shape: Union[int, Sequence[int], None] = None, dtype: Any = mstype.float32):
    """
    Create and initialize a tensor.

    Args:
        init (Union[Tensor, numpy.ndarray, str, Initializer, numbers.Number]): How to initialize.

            - `str`: a registered name such as 'normal', 'ones', 'zeros', 'xavier_uniform', 'he_normal'
              (case-insensitive).
            - `Initializer`: an initializer instance.
            - `numbers.Number`: a :class:`Constant`.
            - `Tensor`: returned as is (its shape must match `shape` when given).
            - `numpy.ndarray`: converted to a Tensor of `dtype` (its shape must match `shape` when given).

        shape (Union[int, tuple[int], list[int]]): Shape of the tensor. Default: ``None`` (only allowed
            when `init` is a Tensor or numpy array).
        dtype (aotnn dtype): Element type. Default: ``aotnn.float32``.

    Returns:
        Tensor.

    Raises:
        TypeError: If `init` has an unsupported type.
        ValueError: If `init` is an unknown name, `shape` is invalid or missing, or the shape of a Tensor /
            array `init` differs from `shape`.
    """
    from .tensor import Tensor

    if isinstance(init, Tensor):
        _check_value_shape(init.shape, shape)
        return init
    if isinstance(init, np.ndarray):
        _check_value_shape(init.shape, shape)
        return Tensor(init, dtype=dtype)
    if isinstance(init, str):
        cls = _INITIALIZER_ALIAS.get(init.lower())
        if cls is None:
            raise ValueError(f"For 'initializer', the argument 'init' {init!r} is not a known initializer name; "
                             f"accepted names (case-insensitive): {sorted(_INITIALIZER_ALIAS)}.")
        init = cls()
    elif isinstance(init, numbers.Number):
        init = Constant(init)
    elif not isinstance(init, Initializer):
        raise TypeError("For 'initializer', the type of the 'init' argument should be 'Tensor', 'numpy.ndarray', "
                        f"'number', 'string' or 'Initializer', but got {type(init).__name__}.")
    shape = _normalize_shape(shape)
    arr = np.zeros(shape, dtype=mstype.to_numpy(dtype))
    init(arr)
    return Tensor(arr, dtype=dtype)


__all__ = ["Initializer", "initializer", "TruncatedNormal", "Normal", "Uniform", "HeUniform", "HeNormal",
           "XavierUniform", "XavierNormal", "One", "Zero", "Constant", "Identity", "Dirac", "Orthogonal",
           "VarianceScaling"]
