"""Loss: the average of the losses seen."""
from __future__ import annotations

from .metric import Metric, check_input_count, check_samples, rearrange_inputs

__all__ = ['Loss']


class Loss(Metric):
    r"""Average of the losses given to ``update``: :math:`\frac{\sum_{k=1}^{n} loss_k}{n}` (a 1-D loss
    counts as its mean).

    Examples:
        >>> x = Tensor(np.array(0.2), mindspore.float32)
        >>> loss = nn.Loss()
        >>> loss.update(x)
        >>> loss.eval()
        0.20000000298023224
    """

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self) -> None:
        """Reset the sum."""
        self._sum_loss = 0.0
        self._total_num = 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add one loss value: ``update(loss)`` with a 0-D or 1-D loss.

        Raises:
            ValueError: not exactly 1 input, or a loss of 2 or more dimensions.
        """
        check_input_count(inputs, 1, 'Loss', 'loss')
        loss = self._convert_data(inputs[0])
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise ValueError(f"For 'Loss.update', the dimension of your input (loss) must be 1, but got {loss.ndim}.")
        self._sum_loss += float(loss.mean(-1))
        self._total_num += 1

    def eval(self) -> float:
        """The average loss.

        Raises:
            RuntimeError: ``update`` was never called.
        """
        check_samples(self._total_num, 'Loss')
        return self._sum_loss / self._total_num
