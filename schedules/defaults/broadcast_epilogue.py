"""A convolution whose epilogue broadcasts its result over a larger tensor: squeeze-and-excitation.

The SE block's last kernel is a 1x1 convolution over a 1x1 map, a bias, a gate (sigmoid, hard
sigmoid) and the multiply of the gate with the whole feature map ``x * gate[c]``. Inlined forward
as any element-wise epilogue, the gate is recomputed for every element of the map (an exp per
element) in a serial, scalar loop: EfficientNet-B0's 56x56x144 one ran at a quarter of the
memory bandwidth. Here the same-shape chain (bias, gate) is folded backward into the
convolution's write-back, so the gate is computed once per channel, and the broadcast multiply
is scheduled as the memory-bound pass it is: vectorized over channels, spread over the cores.
"""
from __future__ import annotations

from tvm.s_tir import Schedule
from tvm.tirx import ForKind

from . import common
from .cpu import CpuInfo


def _shape(sch: Schedule, block) -> tuple[int, ...] | None:
    writes = sch.get(block).writes
    if not writes or not all(hasattr(s, "value") for s in writes[0].source.shape):
        return None
    return tuple(int(s) for s in writes[0].source.shape)


def broadcast_consumers(sch: Schedule, out) -> list[str]:
    """Names of the blocks downstream of ``out`` (an NHWC result over a 1x1 map) that write an
    NHWC map of the same images and channels over more pixels: the gate's broadcast multiply.
    (A concatenation or any other change of channels is not one.)"""
    small = _shape(sch, out)
    if small is None or len(small) != 4 or small[1:3] != (1, 1):
        return []
    found, seen, frontier = [], set(), list(sch.get_consumers(out))
    while frontier:
        block = frontier.pop(0)
        name = common.block_name(sch, block)
        if name in seen:
            continue
        seen.add(name)
        shape = _shape(sch, block)
        if (shape is not None and len(shape) == 4 and (shape[0], shape[3]) == (small[0], small[3])
                and shape[1] * shape[2] > 1):
            found.append(name)
        frontier.extend(sch.get_consumers(block))
    return found


def fold_gate(sch: Schedule, out, broadcast: list[str]) -> None:
    """Fold into ``out`` the same-shape chain before the blocks named in ``broadcast`` (the bias and
    the gate, a DAG such as ``1 / (1 + exp(-x))`` collapsed first), so that they read the finished
    gate. A gate node named like a broadcast block stops the fold early: it is inlined forward then."""
    from .dw_pointwise import fold_epilogue  # it imports conv2d, which imports this module

    fold_epilogue(sch, out, stop=tuple({name.rstrip("0123456789") for name in broadcast}))


def schedule_broadcast(sch: Schedule, broadcast: list[str], cpu: CpuInfo) -> None:
    """Vectorize and parallelize each broadcast block still standing (others were inlined)."""
    for name in broadcast:
        block = common.find_block(sch, name)
        if block is None:
            continue
        loops = sch.get_loops(block)
        if loops and all(sch.get(loop).kind == ForKind.SERIAL for loop in loops):
            common.schedule_injective_block(sch, block, cpu)
