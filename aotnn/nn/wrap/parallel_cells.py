"""Pipeline and data-layout wrappers, with their single-device semantics.

MindSpore uses these cells to place micro batches on the stages of a multi-device pipeline
(``pipeline_stages`` > 1) or to interleave communication with computation. Stages across devices are out
of reach here: every micro batch runs in sequence on one device, which gives the numbers a pipeline
computes (the sum of the micro batches' outputs).
"""
from __future__ import annotations

from ..cell import Cell
from ..container import _check_cell

__all__ = ["PipelineCell", "MicroBatchInterleaved", "VirtualDatasetCellTriple"]


def _micro_batch(inputs: tuple, index: int, count: int) -> tuple:
    """Micro batch ``index`` of ``count``: rows [index*n//count, (index+1)*n//count) of every tensor input."""
    sliced = []
    for value in inputs:
        if hasattr(value, "shape") and len(value.shape) > 0:
            rows = value.shape[0]
            value = value[index * rows // count:(index + 1) * rows // count]
        sliced.append(value)
    return tuple(sliced)


def _add(total, output):
    if total is None:
        return output
    if isinstance(output, (tuple, list)):
        return type(output)(a + b for a, b in zip(total, output))
    return total + output


def _check_count(value, name: str, cls_name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{name}' must be int, but got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"For '{cls_name}', the argument '{name}' must be greater than 0, but got {value}")
    return value


def _sum_over_parts(network: Cell, inputs: tuple, parts: int):
    """The sum of ``network``'s outputs over ``parts`` slices of the batch, run one after another."""
    total = None
    for i in range(parts):
        total = _add(total, network(*_micro_batch(inputs, i, parts)))
    return total


class PipelineCell(Cell):
    """Splits the batch (axis 0 of every input) into `micro_size` micro batches, runs `network` on each in
    turn and returns the sum of the outputs.

    On several devices MindSpore runs the micro batches through the pipeline's stages; here they run in
    sequence on one device (a multi-stage pipeline is not supported), with the same result.

    Args:
        network (Cell): the network, usually returning a loss.
        micro_size (int): the number of micro batches.

    Inputs:
        - **inputs** (Tensor) - the network's inputs; their first dimension is split.

    Outputs:
        the sum of the network's outputs over the micro batches.

    Raises:
        TypeError: `network` is not a Cell or `micro_size` not an int.
        ValueError: `micro_size` is not positive.
    """

    def __init__(self, network: Cell, micro_size: int):
        super().__init__(auto_prefix=False)
        self.network = _check_cell(network, "network")
        self.micro_size = _check_count(micro_size, "micro_size", "PipelineCell")

    def construct(self, *inputs):
        return _sum_over_parts(self.network, inputs, self.micro_size)

    def extend_repr(self) -> str:
        return f"micro_size={self.micro_size}"


class MicroBatchInterleaved(Cell):
    """Splits the batch into `interleave_num` parts, runs `network` on each and returns the sum of the
    outputs (MindSpore overlaps the parts' communication and computation; here they run in sequence).

    Args:
        network (Cell): the network.
        interleave_num (int): the number of parts. Default: 2.

    Inputs:
        - **inputs** (Tensor) - the network's inputs; their first dimension is split.

    Outputs:
        the sum of the network's outputs over the parts.

    Raises:
        TypeError: `network` is not a Cell or `interleave_num` not an int.
        ValueError: `interleave_num` is not positive.
    """

    def __init__(self, network: Cell, interleave_num: int = 2):
        super().__init__(auto_prefix=False)
        self.network = _check_cell(network, "network")
        self.interleave_num = _check_count(interleave_num, "interleave_num", "MicroBatchInterleaved")

    def construct(self, *inputs):
        return _sum_over_parts(self.network, inputs, self.interleave_num)

    def extend_repr(self) -> str:
        return f"interleave_num={self.interleave_num}"


class VirtualDatasetCellTriple(Cell):
    """Feeds three inputs to `backbone`. MindSpore re-lays the data-parallel batch out for model-parallel
    layers; on one device that layout is the batch itself, so this is the identity around `backbone`.

    Args:
        backbone (Cell): the network taking three inputs.

    Inputs:
        - **a**, **b**, **c** (Tensor) - the backbone's inputs.

    Outputs:
        the backbone's output.

    Raises:
        TypeError: `backbone` is not a Cell.
    """

    def __init__(self, backbone: Cell):
        super().__init__(auto_prefix=False)
        self._backbone = _check_cell(backbone, "backbone")

    def construct(self, a, b, c):
        return self._backbone(a, b, c)
