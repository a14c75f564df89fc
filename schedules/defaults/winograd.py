"""Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions on CPUs (NHWC).

A 3x3 convolution over 2x2 output tiles needs 16 multiplies per tile and channel pair instead of 36:

- input transform ``V = B^T d B`` of every 4x4 input tile (``aotnn_wino_input``), laid out as an
  NHWC image of tiles with ``16 x IC`` channels (transform position major);
- 16 independent products ``M[k] = V[k] U[k]`` over the input channels: a grouped 1x1
  convolution with 16 groups, so the register-blocked convolution kernel (``conv2d``) runs them;
- output transform ``Y = A^T M A`` (``aotnn_wino_output``), where the element-wise epilogue
  (batch norm, residual, activation) is fused.

The weight transform ``U = G w G^T`` reads parameters only: the build runs it once per parameter
change, as it does the convolution's weight packing.
"""
from __future__ import annotations

from tvm import te, tirx
from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo

INPUT = "aotnn_wino_input"
OUTPUT = "aotnn_wino_output"
TILES = 16  # (m + r - 1)^2 transform positions of F(2x2, 3x3)

B_T = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
G = ((1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0.0, 0.0, 1.0))
A_T = ((1, 1, 1, 0), (0, 1, -1, -1))
MIN_TILES = 30


def applies(x_shape, w_shape, strides, padding, dilation, groups: int) -> bool:
    """Whether a convolution (NCHW shapes) is one this kernel serves: 3x3, stride 1, 'same' padding."""
    n, ic, h, w = x_shape
    oc, _, kh, kw = w_shape
    # the 16 products read 16/9 as many weights as the direct kernel: with few tiles to share them
    # (a 7x7 map has 16) they stream from memory and Winograd saves nothing
    tiles = n * ((h + 1) // 2) * ((w + 1) // 2)
    return (groups == 1 and (kh, kw) == (3, 3) and tuple(strides) == (1, 1) and tuple(dilation) == (1, 1)
            and tuple(padding) == (1, 1, 1, 1) and tiles >= MIN_TILES and ic >= 8 and oc % 8 == 0)


def _select(index, values):
    """``values[index]`` for a symbolic ``index`` (folds to one value once ``index`` is a constant)."""
    result = values[-1]
    for k in range(len(values) - 2, -1, -1):
        result = tirx.Select(index == k, values[k], result)
    return result


def pack_weight(w: te.Tensor, oc_block: int) -> te.Tensor:
    """OIHW 3x3 weights -> ``U = G w G^T`` packed ``[16 * OC / oc_block, 1, 1, IC, oc_block]`` (group k = 4 eps + nu)."""
    oc, ic, _, _ = (int(d) for d in w.shape)

    def element(ob, _h, _w, i, b):
        channel = ob * oc_block + b
        k, o = channel // oc, channel % oc
        eps, nu = k // 4, k % 4
        total = tirx.const(0.0, w.dtype)
        for r in range(3):
            for s in range(3):
                coef = _select(eps, [tirx.const(G[e][r], w.dtype) for e in range(4)]) * \
                    _select(nu, [tirx.const(G[n][s], w.dtype) for n in range(4)])
                total = total + coef * w[o, i, r, s]
        return total

    return te.compute((TILES * oc // oc_block, 1, 1, ic, oc_block), element, name="aotnn_pack_wino_weight")


def input_transform(x: te.Tensor) -> te.Tensor:
    """NHWC ``x`` (padding 1) -> ``V`` of shape ``(N, ceil(H / 2), ceil(W / 2), 16 * C)``."""
    n, h, w, c = (int(d) for d in x.shape)
    zero = tirx.const(0, x.dtype)

    def element(b, th, tw, ch):
        k, ci = ch // c, ch % c

        def d(r, s):
            i, j = th * 2 + (r - 1), tw * 2 + (s - 1)
            inside = tirx.all(i >= 0, i < h, j >= 0, j < w)
            return tirx.if_then_else(inside, x[b, tirx.max(tirx.min(i, h - 1), 0),
                                               tirx.max(tirx.min(j, w - 1), 0), ci], zero)

        values = []
        for eps in range(4):
            for nu in range(4):
                total = None
                for r in range(4):
                    for s in range(4):
                        coef = B_T[eps][r] * B_T[nu][s]
                        if coef == 0:
                            continue
                        term = d(r, s) if coef == 1 else -d(r, s)
                        total = term if total is None else total + term
                values.append(total)
        return _select(k, values)

    return te.compute((n, (h + 1) // 2, (w + 1) // 2, TILES * c), element, name=INPUT)


def output_transform(m: te.Tensor, out_channels: int, height: int, width: int) -> te.Tensor:
    """The products ``(N, ceil(H / 2), ceil(W / 2), 16 * OC)`` -> NHWC ``(N, H, W, OC)``."""
    n = int(m.shape[0])

    def element(b, i, j, o):
        ti, tj = i // 2, j // 2
        values = []
        for a in range(2):
            for e in range(2):
                total = None
                for eps in range(4):
                    for nu in range(4):
                        coef = A_T[a][eps] * A_T[e][nu]
                        if coef == 0:
                            continue
                        term = m[b, ti, tj, (eps * 4 + nu) * out_channels + o]
                        term = term if coef == 1 else -term
                        total = term if total is None else total + term
                values.append(total)
        return _select((i % 2) * 2 + j % 2, values)

    return te.compute((n, height, width, out_channels), element, name=OUTPUT)


# ---------------------------------------------------------------- schedules

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, INPUT) is not None or common.find_block(sch, OUTPUT) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    block = common.find_block(sch, INPUT)
    if block is not None:
        _schedule_input(sch, block, cpu)
    else:
        _schedule_output(sch, common.find_block(sch, OUTPUT), cpu)


def _lane_split(sch: Schedule, loop, lanes: int):
    size = common.extent(sch, loop) or 1
    factor = next((f for f in (lanes, lanes // 2, lanes // 4) if f >= 1 and size % f == 0), 1)
    return sch.split(loop, [None, factor])


def _schedule_input(sch: Schedule, block, cpu: CpuInfo) -> None:
    common.inline_producers(sch, block)
    common.inline_consumers(sch, block)
    stmt = sch.get(block)
    channels = int(stmt.writes[0].source.shape[3]) // TILES
    b, th, tw, ch = sch.get_loops(block)
    k, c = sch.split(ch, [TILES, channels])
    c_outer, c_inner = _lane_split(sch, c, cpu.lanes())
    sch.reorder(b, th, tw, c_outer, k, c_inner)
    sch.unroll(k)
    sch.vectorize(c_inner)
    task = sch.fuse(b, th)
    common.parallel_if_worth(sch, task, common.block_work(sch, block) * 4, cpu, common.PARALLEL_MIN_ELEMENTS * 4)


def _schedule_output(sch: Schedule, block, cpu: CpuInfo) -> None:
    common.inline_producers(sch, block)
    common.inline_consumers(sch, block)
    if common.find_block(sch, OUTPUT) is not None and len(common.root_blocks(sch)) > 1:
        sch.compute_inline(common.find_block(sch, OUTPUT))
    blocks = common.output_blocks(sch)
    if len(blocks) != 1 or len(common.root_blocks(sch)) != 1:
        raise common.NotScheduled("Winograd output transform with an epilogue that does not inline")
    block = blocks[0]
    b, i, j, o = sch.get_loops(block)
    i_outer, i_inner = sch.split(i, [None, 2])
    j_outer, j_inner = sch.split(j, [None, 2])
    o_outer, o_inner = _lane_split(sch, o, cpu.lanes())
    sch.reorder(b, i_outer, j_outer, o_outer, i_inner, j_inner, o_inner)
    sch.unroll(i_inner)
    sch.unroll(j_inner)
    sch.vectorize(o_inner)
    task = sch.fuse(b, i_outer)
    common.parallel_if_worth(sch, task, common.block_work(sch, block) * 4, cpu, common.PARALLEL_MIN_ELEMENTS * 4)
