"""Default CPU schedules: fast kernels without tuning.

Two entry points, called by the build:

- :func:`rewrite_relax` (Relax, before legalization): convolutions become NHWC kernels over
  packed weights (``conv2d``; 3x3 stride-1 ones Winograd F(2x2, 3x3), ``winograd``), products
  with a parameter GEMMs over packed weights (``dense``), unrolled LSTM steps one fused kernel
  each (``recurrent``), GRU steps likewise (``gru``), float32 transcendentals their vectorizable forms (``fastmath``);
  ``layout`` carries the NHWC form through element-wise ops, pooling and means. Weight packing
  and transforms read parameters only: the build runs them once per parameter change.
- :func:`apply_default_schedules` (TIR, the kernel module before ``tvm.compile``): each kernel
  gets the first op-class schedule that applies (``winograd``, ``inverted_residual``,
  ``dw_pointwise``, ``conv2d``, ``dense``,
  ``recurrent``, ``gru``, ``matmul``, ``reduction``, ``inner_reduction``, ``concat``, ``elementwise``, ``fallback``) and lowers; a kernel
  no rule can schedule is kept as it was, so a schedule can cost speed but never correctness.

Tile sizes come from the target (``cpu``): vector width and register count (AVX-512, AVX2,
NEON, SSE), and loops are spread over its cores when the work pays for a launch.
"""
from __future__ import annotations

import logging

import tvm
from tvm import tirx
from tvm.s_tir import Schedule

from . import channel_gather, collapse_sum, common, concat, conv2d, coverage, dense, dw_pointwise, elementwise, expand_depthwise, fallback, fastmath, gru, inner_reduction, int8, int8_conv, int8_dsp, int8_neon, int8_vnni, inverted_residual, layout, matmul, mcu_requantize, phase_interleave, pool_grad, recurrent, reduction, unit_axis, weight_grad, winograd, winograd_pack
from .cpu import CpuInfo, cpu_info

__all__ = ["apply_default_schedules", "rewrite_relax", "schedule_func", "schedule_with_rule", "CpuInfo", "cpu_info"]

_LOG = logging.getLogger(__name__)

# Most specific first.
SCHEDULE_RULES = (weight_grad, winograd_pack, int8_dsp, int8_conv, int8_neon, winograd, inverted_residual, expand_depthwise, dw_pointwise, mcu_requantize.on_mcu(conv2d), conv2d, dense, int8_vnni, mcu_requantize.on_mcu(int8), int8, recurrent, gru, matmul, reduction, reduction.rows, inner_reduction, concat, elementwise, fallback)
RELAX_RULES = (channel_gather.rewrite_rule, recurrent.rewrite_rule, gru.rewrite_rule, int8_dsp.rewrite_rule, int8_conv.rewrite_rule, int8_neon.rewrite_rule, conv2d.rewrite_rule, dense.rewrite_rule, int8_vnni.rewrite_rule,
               fastmath.rewrite_rule, pool_grad.rewrite_rule, pool_grad.tiling_rewrite_rule, collapse_sum.rewrite_rule,
               weight_grad.rewrite_rule, phase_interleave.rewrite_rule)


def rewrite_relax(mod: tvm.IRModule, target: tvm.target.Target) -> tvm.IRModule:
    """Relax-level rewrites for ``target`` (the module unchanged for targets without CPU defaults)."""
    cpu = cpu_info(target)
    if cpu is None:
        return mod
    # 1-D convolutions' element-wise chains in their 4-D form first: the rules below then see them
    mod = layout.rewrite(mod, cpu, [unit_axis.rewrite_rule], carry_twins=False)
    return layout.rewrite(mod, cpu, list(RELAX_RULES))


def _lowers(func: tirx.PrimFunc, target: tvm.target.Target | None) -> bool:
    """Whether ``func`` passes TIR lowering (a schedule can be valid yet produce IR that does not)."""
    if target is None:
        return True
    try:
        mod = tvm.tirx.transform.BindTarget(target.with_host(target))(tvm.IRModule({"main": func}))
        pipeline, _, _ = tvm.tirx.get_default_tir_pipeline(target)
        pipeline(mod)
        return True
    except Exception as err:  # noqa: BLE001
        _LOG.debug("scheduled kernel does not lower: %s", err)
        return False


def schedule_with_rule(func: tirx.PrimFunc, cpu: CpuInfo,
                       target: tvm.target.Target | None = None) -> tuple[tirx.PrimFunc, str | None]:
    """``func`` scheduled by the first rule that applies and that rule's name; (func, None) if none does.

    With ``target``, a schedule is kept only if the result lowers for it.
    """
    for rule in SCHEDULE_RULES:
        sch = Schedule(func)
        try:
            if not rule.matches(sch):
                continue
            sch = rule.schedule(sch, cpu) or sch
        except common.NotScheduled as err:  # the rule declines: the next one applies
            _LOG.debug("%s does not schedule this kernel: %s", rule.__name__, err)
            continue
        except Exception as err:  # noqa: BLE001 - a rule that breaks falls through to the next
            # which is correct but may be many times slower (a merged block under a generic
            # schedule ran MobileNetV2 6x slower): say so
            name = func.attrs["global_symbol"] if func.attrs is not None and "global_symbol" in func.attrs else "a kernel"
            _LOG.warning("schedule rule %s failed on %s (%s: %s); a more generic rule schedules it, possibly "
                         "much slower", rule.__name__.rsplit(".", 1)[-1], name, type(err).__name__,
                         str(err).splitlines()[0] if str(err) else "")
            continue
        scheduled = sch.mod["main"]
        if _lowers(scheduled, target):
            return scheduled, rule.__name__.rsplit(".", 1)[-1]
    return func, None


def schedule_func(func: tirx.PrimFunc, cpu: CpuInfo, target: tvm.target.Target | None = None) -> tirx.PrimFunc:
    """``func`` scheduled by the first rule that applies, or unchanged."""
    return schedule_with_rule(func, cpu, target)[0]


def apply_default_schedules(mod: tvm.IRModule, target: tvm.target.Target,
                            rules: dict[str, str | None] | None = None) -> tvm.IRModule:
    """Schedule every PrimFunc of ``mod`` for ``target``; functions no rule handles stay as they are.

    Args:
        mod: the kernel module.
        target: the TVM target.
        rules: filled, when given, with kernel name -> the name of the rule that scheduled it
            (None for a kernel no rule scheduled).

    Kernels left on the generic fallback are named in one logged warning, with their shapes.
    """
    cpu = cpu_info(target)
    if cpu is None:
        return mod
    funcs, chosen, originals = {}, {}, {}
    for gvar, func in mod.functions.items():
        if isinstance(func, tirx.PrimFunc):
            originals[gvar.name_hint] = func
            func, chosen[gvar.name_hint] = schedule_with_rule(func, cpu, target)
        funcs[gvar] = func
    coverage.warn_fallbacks(chosen, originals)
    if rules is not None:
        rules.update(chosen)
    return tvm.IRModule(funcs, attrs=mod.attrs)
