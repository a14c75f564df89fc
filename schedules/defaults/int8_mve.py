"""int8 convolutions on Cortex-M55 with Helium (MVE): eight products summed into a scalar per instruction.

``vmladava.s16 acc, q_a, q_w`` adds the eight 16x16-bit products of two vectors to a 32-bit scalar. The
activations are uint8 (or int8) and the weights int8, and the 8-bit form of the instruction multiplies two
operands of the same signedness only, so both are widened to 16-bit lanes as they are loaded (``vldrb.u16`` /
``vldrb.s16``: one instruction for eight bytes): a step of ``DEPTH`` = 8 input channels and ``LANES`` = 4
output channels is one activation load, four weight loads and four ``vmladava`` (32 multiply-accumulates in
nine instructions, against about 46 with ``smlad``). Exact for any operands: a product fits 16x16 bits, and
int32 sums wrap as plain adds do.

Convolutions with input channels a multiple of 8 (DS-CNN's 1x1 layers) are rewritten to ``int8_conv``'s NHWC
kernel with weights packed at build time as ``(OC / 4, KH, KW, IC / 8, 4, 8)`` int8 (as much flash as the
original weights) and scheduled as ``int8_dsp``'s are (register tiles, the requantization per tile, a merged
pooling summed tile by tile); everything else (depthwise, a one-channel first layer) is left to ``int8_dsp``'s
rewrite. ``int8_dsp``'s steps of 4 (a one-channel layer's 4 adjacent taps of a kernel row) are scheduled here
on Helium, one ``vmlava.s32`` over 32-bit lanes per output channel (``vldrb.u32``/``vldrb.s32``): 16
multiply-accumulates in nine instructions, against about 23 with ``smlad``.

Only targets with ``small_memory`` (Cortex-M) and the ``mve`` feature are rewritten.
"""
from __future__ import annotations

import tvm
from tvm import relax
from tvm.s_tir import Schedule, TensorIntrin
from tvm.script import tirx as T

from . import common, int8_conv, int8_dsp
from .cpu import CpuInfo, _has
from .int8_dot import dot_desc
from .layout import Rewriter, static_shape

LANES, DEPTH = int8_dsp.LANES, 8  # output channels per step, input channels per step (one 16-bit-lane vector)
# steps of DEPTH channels (16-bit lanes), and int8_dsp's steps of 4 (a one-channel layer's 4 taps of a kernel
# row: 32-bit lanes, ``vmlava.s32``)
INTRINS = {DEPTH: {"uint8": "aotnn_dot_4x8_u8i8i32_mve", "int8": "aotnn_dot_4x8_i8i8i32_mve"},
           int8_dsp.DEPTH: {"uint8": "aotnn_dot_4x4_u8i8i32_mve", "int8": "aotnn_dot_4x4_i8i8i32_mve"}}
_VMLADAVA = "llvm.arm.mve.vmldava"  # (unsigned, subtract, exchange, accumulator, a, b) -> i32


def _impl(act_dtype: str, depth: int):
    wide = f"int{128 // depth}x{depth}"  # the lanes of one 128-bit vector, each operand widened on load

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (depth,), act_dtype, offset_factor=1, align=1)
        B = T.match_buffer(b, (LANES, depth), "int8", offset_factor=1, align=1)
        C = T.match_buffer(c, (LANES,), "int32", offset_factor=1, align=1)
        with T.sblock("root"):
            T.reads(C[0:LANES], A[0:depth], B[0:LANES, 0:depth])
            T.writes(C[0:LANES])
            activations = T.Cast(wide, A.vload([0], f"{act_dtype}x{depth}"))
            for i in T.unroll(LANES):
                C[i] = T.call_llvm_pure_intrin(
                    T.llvm_lookup_intrinsic_id(_VMLADAVA), T.int32(0), T.int32(0), T.int32(0), C[i], activations,
                    T.Cast(wide, B.vload([i, 0], f"int8x{depth}")), dtype="int32")
    return impl


for _depth, _names in INTRINS.items():
    for _dtype, _name in _names.items():
        TensorIntrin.register(_name, dot_desc(_dtype, "int8", LANES, _depth), _impl(_dtype, _depth), override=True)


def helium(cpu: CpuInfo) -> bool:
    """Whether ``cpu`` is a microcontroller with Helium vectors (what the schedules see of a Cortex-M55)."""
    return cpu.small_memory and cpu.vector_bits >= 128


def has_mve(cpu: CpuInfo) -> bool:
    """Whether the target in scope is a microcontroller with Helium's integer vectors (``mve``)."""
    target = tvm.target.Target.current(allow_none=True)
    return helium(cpu) and target is not None and _has("mve", target)


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``conv2d(uint8/int8 x, int8 W)`` -> int32, W from parameters, not grouped, input channels a multiple of
    8, on a Helium Cortex-M: the packed NHWC kernel; anything else is left to the next rules (``int8_dsp``)."""
    if not int8_dsp._applies(rw, var, call) or not has_mve(rw.cpu):
        return False
    x, w = call.args
    groups, strides, dilation, conv_padding = int8_dsp.conv2d._geometry(call.attrs)
    oc, ic_per_group, _, _ = static_shape(w)
    if groups != 1 or ic_per_group % DEPTH != 0:
        return False
    source, padding, pad_value = int8_conv._unpadded(rw, x)
    padding = tuple(a + b for a, b in zip(padding, conv_padding))
    bb = rw.bb
    packed = rw.emit_once(("int8_mve_conv2d", w), lambda: bb.call_te(
        int8_conv.pack_weight, rw.nchw(w), LANES, DEPTH, "int8", primfunc_name_hint=int8_conv.PACK))
    nchw_input = not rw.has_twin(source)
    data = rw.nchw(source) if nchw_input else rw.nhwc(source)
    out = bb.call_te(int8_conv.conv2d_int8, data, packed, strides=strides, padding=padding, dilation=dilation,
                     pad_value=pad_value, out_channels=oc, ow_block=int8_dsp.PIXELS, nchw_input=nchw_input,
                     primfunc_name_hint=int8_conv.ACC)
    rw.set_nhwc(var, bb.emit(out))
    return True


def _weight_tile(sch: Schedule) -> list[int] | None:
    acc = common.find_block(sch, int8_conv.ACC)
    if acc is None:
        return None
    weight = next((r.source for r in sch.get(acc).reads if len(r.source.shape) == 6), None)
    return None if weight is None or str(weight.dtype) != "int8" else [int(d) for d in weight.shape[-2:]]


def matches(sch: Schedule) -> bool:
    """The packed convolution of :func:`rewrite_rule` (a ``LANES x DEPTH`` int8 weight tile) or of ``int8_dsp``
    (``LANES x 4``: scheduled here on Helium only)."""
    return _weight_tile(sch) in ([LANES, depth] for depth in INTRINS)


def schedule(sch: Schedule, cpu: CpuInfo) -> Schedule:
    """``int8_dsp``'s register tiles and per-tile requantization, each step four ``vmlava``."""
    if not helium(cpu):  # another CPU's packing may have the same tile shape
        raise common.NotScheduled("not a microcontroller with Helium vectors")
    return int8_dsp.schedule_steps(sch, cpu, INTRINS[_weight_tile(sch)[1]])
