"""``aotnn.amp``: mixed-precision helpers (MindSpore's ``mindspore.amp``): the loss-scale managers."""
from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]
