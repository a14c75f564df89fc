"""Loss-scale managers: how :class:`Model` scales the loss for mixed-precision training
(MindSpore's ``mindspore.FixedLossScaleManager`` / ``mindspore.DynamicLossScaleManager``)."""
from __future__ import annotations

from typing import Any

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]

# MindSpore stops training after this many overflowing steps in a row.
_MAX_BAD_STEPS = 1000


def _check_number(value: Any, name: str, cls_name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{cls_name}', the '{name}' must be a float or an int, but got "
                        f"{type(value).__name__}.")


class LossScaleManager:
    """Base class of the loss-scale managers.

    A subclass implements :meth:`get_loss_scale` (the current scale), :meth:`update_loss_scale` (host-side
    update from an overflow flag) and :meth:`get_update_cell` (the Cell that updates the scale inside the
    compiled training step; what :class:`Model` uses).
    """

    def get_loss_scale(self) -> Any:
        """The current loss scale: the factor the loss (and so the gradients) are multiplied by."""

    def update_loss_scale(self, overflow: bool) -> None:
        """Update the loss scale from ``overflow``.

        Args:
            overflow (bool): Whether the gradients overflowed in this step.
        """

    def get_update_cell(self) -> Any:
        """The :class:`aotnn.nn.Cell` that updates the loss scale during training, or None."""


class FixedLossScaleManager(LossScaleManager):
    """A loss scale that never changes.

    Args:
        loss_scale (float): The scale of the loss (>= 1). With ``drop_overflow_update=False`` the optimizer's
            ``loss_scale`` must be set to the same value, since it is what divides the gradients back.
            Default: 128.0.
        drop_overflow_update (bool): Skip the optimizer's update in a step whose gradients overflow.
            Default: True.

    Raises:
        TypeError: `loss_scale` is not a float or an int, or `drop_overflow_update` is not a bool.
        ValueError: `loss_scale` < 1.

    Examples:
        >>> loss_scale_manager = FixedLossScaleManager(1024.0, False)
        >>> optim = nn.Momentum(net.trainable_params(), 0.1, 0.9, loss_scale=1024.0)
        >>> model = Model(net, loss_fn, optim, loss_scale_manager=loss_scale_manager)
    """

    def __init__(self, loss_scale: float = 128.0, drop_overflow_update: bool = True):
        _check_number(loss_scale, "loss_scale", "FixedLossScaleManager")
        if loss_scale < 1:
            raise ValueError(f"For 'FixedLossScaleManager', the 'loss_scale' must be >= 1, but got {loss_scale}.")
        if not isinstance(drop_overflow_update, bool):
            raise TypeError(f"For 'FixedLossScaleManager', the 'drop_overflow_update' must be a bool, but got "
                            f"{type(drop_overflow_update).__name__}.")
        self._loss_scale = loss_scale
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self) -> float:
        """Returns:
            float, `loss_scale`.
        """
        return self._loss_scale

    def get_drop_overflow_update(self) -> bool:
        """Returns:
            bool, whether a step that overflows skips the optimizer's update.
        """
        return self._drop_overflow_update

    def update_loss_scale(self, overflow: bool) -> None:
        """Does nothing: the scale is fixed.

        Args:
            overflow (bool): Whether the gradients overflowed.
        """

    def get_update_cell(self):
        """Returns:
            :class:`aotnn.nn.FixedLossScaleUpdateCell` when `drop_overflow_update` is True, else None.
        """
        if not self._drop_overflow_update:
            return None
        from .. import nn
        return nn.FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """A loss scale divided by ``scale_factor`` on each overflow (not below 1) and multiplied by it after
    ``scale_window`` steps in a row without overflow. A step that overflows skips the optimizer's update.

    Args:
        init_loss_scale (float): The initial scale (>= 1). Default: 2**24.
        scale_factor (int): The factor of decrease and increase (> 0). Default: 2.
        scale_window (int): Steps without overflow before the scale grows (positive int). Default: 2000.

    Raises:
        TypeError: `init_loss_scale` or `scale_factor` is not a number, or `scale_window` is not an int.
        ValueError: `init_loss_scale` < 1, `scale_factor` <= 0 or `scale_window` <= 0.

    Examples:
        >>> loss_scale_manager = DynamicLossScaleManager()
        >>> model = Model(net, loss_fn, optim, loss_scale_manager=loss_scale_manager)
    """

    def __init__(self, init_loss_scale: float = 2 ** 24, scale_factor: int = 2, scale_window: int = 2000):
        _check_number(init_loss_scale, "init_loss_scale", "DynamicLossScaleManager")
        if init_loss_scale < 1.0:
            raise ValueError(f"For 'DynamicLossScaleManager', the 'init_loss_scale' must be >= 1, but got "
                             f"{init_loss_scale}.")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int):
            raise TypeError(f"For 'DynamicLossScaleManager', the 'scale_window' must be an int, but got "
                            f"{type(scale_window).__name__}.")
        if scale_window <= 0:
            raise ValueError(f"For 'DynamicLossScaleManager', the 'scale_window' must be > 0, but got "
                             f"{scale_window}.")
        _check_number(scale_factor, "scale_factor", "DynamicLossScaleManager")
        if scale_factor <= 0:
            raise ValueError(f"For 'DynamicLossScaleManager', the 'scale_factor' must be > 0, but got "
                             f"{scale_factor}.")
        self.loss_scale = init_loss_scale
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.increase_ratio = scale_factor
        self.decrease_ratio = 1 / scale_factor
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = _MAX_BAD_STEPS
        self.bad_step = 0

    def get_loss_scale(self) -> float:
        """Returns:
            float, the current loss scale.
        """
        return self.loss_scale

    def update_loss_scale(self, overflow: bool) -> None:
        """Divide the scale by `scale_factor` (not below 1) on overflow; multiply it by `scale_factor` when
        this step ends `scale_window` steps without overflow.

        Args:
            overflow (bool): Whether the gradients overflowed.

        Raises:
            RuntimeError: more than 1000 steps in a row overflowed.
        """
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError(f"Dynamic loss scale: {self.bad_step} overflowing steps in a row exceed the "
                               f"maximum of {self.bad_step_max}.")
        self.cur_iter += 1

    def get_drop_overflow_update(self) -> bool:
        """Returns:
            bool, always True: a step that overflows skips the optimizer's update.
        """
        return True

    def get_update_cell(self):
        """Returns:
            :class:`aotnn.nn.DynamicLossScaleUpdateCell` starting from the current loss scale.
        """
        from .. import nn
        return nn.DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
