"""``aotnn.boost`` (``mindspore.boost``): gradient accumulation only."""
from .grad_accumulation import GradientAccumulation, gradient_accumulation_op, gradient_clear_op

__all__ = ["GradientAccumulation", "gradient_accumulation_op", "gradient_clear_op"]
