"""Convolution inputs read a vector at a time and broadcast from its lanes (AArch64 ``fmla`` by element).

A register-blocked convolution (``conv2d.py``) broadcasts one input value per pixel of its tile and
reduction step: on x86 a ``vbroadcastss`` from memory that feeds the FMAs. AArch64's FMA can take its
multiplier from one lane of a register (``fmla v0.4s, v1.4s, v2.s[k]``), so a tile can instead load
the input channels ``ic .. ic + lanes - 1`` of each pixel as one vector and run the ``lanes`` reduction
steps from its lanes: per pixel one load for ``lanes`` steps instead of one per step. Here the
reduction's channel loop is split by the vector width and the tile's input is staged per outer step
in a small buffer (a vector copy per pixel), which LLVM keeps in registers and reads by lane.
"""
from __future__ import annotations

from tvm import tirx
from tvm.s_tir import Schedule
from tvm.s_tir.schedule import ScheduleError

from . import common


def stage_input(sch: Schedule, block, lanes: int):
    """Give ``block``'s 4-D NHWC data read a copy block of its own, indexed by ``block``'s iterators
    (``reindex``: a flat convolution's ``pixel // OW, pixel % OW`` becomes the pixel itself, so that the
    region one tile reads has a constant size); call before any loop of ``block`` is split.

    Args:
        sch: the schedule holding ``block``.
        block: a convolution compute whose innermost reduction iterator runs over input channels.
        lanes: elements of the accumulators' type in one SIMD register.

    Returns:
        The copy block, or None where staging does not apply (channels not a multiple of ``lanes``,
        not exactly one 4-D read, its channel index not the channel iterator alone, or bindings
        ``reindex`` refuses).
    """
    stmt = sch.get(block)
    channels = stmt.iter_vars[-1].dom.extent if stmt.iter_vars else None
    if lanes < 2 or channels is None or not isinstance(channels, tirx.IntImm) or int(channels) % lanes:
        return None
    reads = [k for k, region in enumerate(stmt.reads) if len(region.source.shape) == 4]
    if len(reads) != 1 or not _indexed_by_only(stmt.reads[reads[0]].region[-1].min, stmt.iter_vars[-1].var):
        return None  # e.g. a grouped convolution's channel g * C + c: its staged copy would be per output channel
    try:
        return sch.reindex(block, ("read", reads[0]))
    except ScheduleError:  # e.g. bindings no longer trivial: the schedule is unchanged
        return None


def broadcast_from_lanes(sch: Schedule, staged, channel_loop, lanes: int) -> None:
    """Split ``channel_loop`` (the convolution's innermost reduction loop, over input channels, with the
    tile's pixel and output-channel loops inside it) by ``lanes`` and copy the tile's input
    (``staged``, from :func:`stage_input`) at its outer part: a vector per pixel, read by lane.

    Args:
        sch: the schedule holding the convolution.
        staged: the copy block :func:`stage_input` returned.
        channel_loop: the convolution's reduction loop over input channels.
        lanes: elements of the accumulators' type in one SIMD register.
    """
    outer, inner = sch.split(channel_loop, [None, lanes])
    sch.set_scope(staged, 0, "global")  # a stack buffer LLVM promotes to registers (see accumulate_in_registers)
    sch.compute_at(staged, outer, preserve_unit_loops=True)
    loops = sch.get_loops(staged)
    at = next(k for k, loop in enumerate(loops) if sch.get(loop).same_as(sch.get(outer)))
    copy = loops[at + 1:]
    sch.vectorize(copy[-1])
    for loop in copy[:-1]:
        sch.unroll(loop)
    sch.unroll(inner)


def _indexed_by_only(index, var) -> bool:
    """Whether ``index`` uses no variable other than ``var``."""
    return all(v.same_as(var) for v in tirx.analysis.undefined_vars(index))
