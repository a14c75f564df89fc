"""Padding layers: ``nn.Pad`` and MindSpore 2.x's ``ZeroPad2d``, ``ConstantPad1d/2d/3d``,
``ReflectionPad1d/2d/3d`` and ``ReplicationPad1d/2d/3d``."""
from __future__ import annotations

from ... import ops
from ..cell import Cell

__all__ = ['Pad', 'ZeroPad2d', 'ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ReflectionPad1d',
           'ReflectionPad2d', 'ReflectionPad3d', 'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d']

_MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")


class Pad(Cell):
    """Pads the input by ``paddings[D] = (before, after)`` along each dimension D.

    Output size of dimension D: ``paddings[D][0] + x.shape[D] + paddings[D][1]``.

    Args:
        paddings (tuple): one (before, after) pair of non-negative ints per input dimension, at most 4 pairs.
        mode (str): 'CONSTANT' (zeros), 'REFLECT' (mirror about the edge element, which is not repeated;
            paddings smaller than the dimension) or 'SYMMETRIC' (mirror about the edge, which is repeated;
            paddings at most the dimension). Default: 'CONSTANT'.

    Inputs:
        - **x** (Tensor) - a tensor of rank ``len(paddings)``.

    Outputs:
        Tensor, the padded ``x``.

    Raises:
        TypeError: ``paddings`` not a tuple, or holding non-ints.
        ValueError: more than 4 pairs, a pair not of length 2, a negative value, or ``mode`` not one of
            'CONSTANT', 'REFLECT', 'SYMMETRIC'; at call time, an input rank other than ``len(paddings)`` or
            paddings too large for the mirror modes.
    """

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        if mode not in _MODES:
            raise ValueError(f"For 'Pad', the 'mode' must be one of {list(_MODES)}, but got {mode!r}.")
        if not isinstance(paddings, tuple):
            raise TypeError(f"For 'Pad', the 'paddings' must be a tuple, but got {type(paddings).__name__}.")
        for pair in paddings:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"For 'Pad', the 'paddings' must have shape (n, 2), but got {paddings!r}.")
            if any(isinstance(p, bool) or not isinstance(p, int) for p in pair):
                raise TypeError(f"For 'Pad', the 'paddings' items must be ints, but got {paddings!r}.")
            if any(p < 0 for p in pair):
                raise ValueError(f"For 'Pad', the 'paddings' must be non-negative, but got {paddings!r}.")
        if len(paddings) > 4:
            raise ValueError(f"For 'Pad', only 'paddings' up to 4 dims is supported, but got {len(paddings)}.")
        self.paddings = tuple(tuple(pair) for pair in paddings)
        self.mode = mode

    def construct(self, x):
        if x.ndim != len(self.paddings):
            raise ValueError(f"For 'Pad', the input rank must equal len(paddings) = {len(self.paddings)}, "
                             f"but got shape {x.shape}.")
        for axis, (size, (before, after)) in enumerate(zip(x.shape, self.paddings)):
            limit = {"REFLECT": size - 1, "SYMMETRIC": size}.get(self.mode)
            if limit is not None and max(before, after) > limit:
                raise ValueError(f"For 'Pad', {self.mode} paddings of dimension {axis} (size {size}) must be at "
                                 f"most {limit}, but got ({before}, {after}).")
        if self.mode == "CONSTANT":
            return ops.Pad(self.paddings)(x)
        return ops.MirrorPad(self.mode)(x, self.paddings)

    def extend_repr(self) -> str:
        return f"paddings={self.paddings}, mode={self.mode}"


class _PadNd(Cell):
    """Pads the last ``_dims`` axes; ``padding`` is an int (every side) or (left, right, top, bottom,
    front, back)-ordered ints, last axis first, as ``ops.pad``."""
    _dims = 1
    _mode = "constant"

    def __init__(self, padding, value=None):
        super().__init__()
        name = type(self).__name__
        count = 2 * self._dims
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding,) * count
        if not isinstance(padding, (tuple, list)) or len(padding) != count or any(
                isinstance(p, bool) or not isinstance(p, int) for p in padding):
            raise TypeError(f"For '{name}', the 'padding' must be an int or a tuple of {count} ints, "
                            f"but got {padding!r}.")
        if any(p < 0 for p in padding):
            raise ValueError(f"For '{name}', the 'padding' must be non-negative, but got {padding!r}.")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"For '{name}', the 'value' must be an int or a float, but got {type(value).__name__}.")
        self.padding, self.value = tuple(padding), value

    def construct(self, x):
        # as MindSpore 2.10: replication pads take (C, *spatial) or (N, C, *spatial); the others any rank
        # that has the padded axes
        ranks = (self._dims + 1, self._dims + 2) if self._mode == "replicate" else None
        if (ranks is not None and x.ndim not in ranks) or x.ndim < self._dims:
            expected = f"{ranks[0]}-D or {ranks[1]}-D" if ranks else f"at least {self._dims}-D"
            raise ValueError(f"For '{type(self).__name__}', the input must be {expected}, but got shape {x.shape}.")
        return ops.pad(x, self.padding, self._mode, self.value)

    def extend_repr(self) -> str:
        return f"padding={self.padding}" + ("" if self.value is None else f", value={self.value}")


def _pad_class(name: str, dims: int, mode: str, doc: str, with_value: bool) -> type:
    if with_value:
        def __init__(self, padding, value):
            _PadNd.__init__(self, padding, value)
    else:
        def __init__(self, padding):
            _PadNd.__init__(self, padding)
    return type(name, (_PadNd,), {"_dims": dims, "_mode": mode, "__init__": __init__, "__doc__": doc,
                                  "__module__": __name__})


_SIDES = {1: "(left, right)", 2: "(left, right, top, bottom)", 3: "(left, right, top, bottom, front, back)"}
for _dims in (1, 2, 3):
    _doc = (f"Pads the last {_dims} axes {{how}}. ``padding``: an int for every side, or {_SIDES[_dims]}.\n\n"
            f"Raises:\n    TypeError: padding not an int or {2 * _dims} ints{{value_error}}.\n"
            f"    ValueError: negative padding; at call time an input of too low a rank (replication: not "
            f"{_dims + 1}-D or {_dims + 2}-D); for reflection, padding not smaller than the axis.\n")
    globals()[f"ConstantPad{_dims}d"] = _pad_class(
        f"ConstantPad{_dims}d", _dims, "constant",
        _doc.format(how="with the constant ``value``", value_error=", value not a number"), True)
    globals()[f"ReflectionPad{_dims}d"] = _pad_class(
        f"ReflectionPad{_dims}d", _dims, "reflect",
        _doc.format(how="by reflection about the edge element (not repeated)", value_error=""), False)
    globals()[f"ReplicationPad{_dims}d"] = _pad_class(
        f"ReplicationPad{_dims}d", _dims, "replicate",
        _doc.format(how="by repeating the edge element", value_error=""), False)


class ZeroPad2d(_PadNd):
    """Pads the last 2 axes with zeros. ``padding``: an int for every side, or (left, right, top, bottom).

    Raises:
        TypeError: padding not an int or 4 ints.
        ValueError: negative padding; at call time an input of rank below 2.
    """
    _dims = 2

    def __init__(self, padding):
        super().__init__(padding, 0)
