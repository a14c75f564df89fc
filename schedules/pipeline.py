"""The Relax pass pipeline: legalize every op to TIR, fuse element-wise epilogues (and, on CPUs,
depthwise convolutions into the 1x1 convolutions after them), fuse TIR."""
from __future__ import annotations

import tvm
from tvm import relax

from . import defaults, merge_pooling, round_half_even
from .defaults import block_fusion, merge_into_pool, merge_pad


def fusing_passes(merge_blocks: bool = False, merge_pools: bool = False,
                  legalize: dict | None = None) -> tvm.transform.Pass:
    """Relax passes that leave ``main`` as a sequence of ``call_tir`` kernels.

    Args:
        merge_blocks: also merge depthwise convolutions into the 1x1 convolutions that consume
            them, and 1x1 expansions into the depthwise kernels after them (CPU default
            schedules, see ``defaults/block_fusion.py``).
        merge_pools: also merge poolings into the kernels that compute their inputs (RAM on a
            microcontroller, see ``merge_pooling.py``).
        legalize: ops legalized by these functions instead of TVM's (``LegalizeOps``' customize map).
    """
    merging = [block_fusion.merge_depthwise_pointwise_pass, block_fusion.merge_expand_pass,
               block_fusion.merge_expand_depthwise_pass, merge_pad.merge_pad_pass,
               merge_into_pool.merge_into_pool_pass] if merge_blocks else []
    if merge_pools:
        merging.append(merge_pooling.merge_pooling_pass)
    return tvm.transform.Sequential([
        relax.transform.LegalizeOps(legalize),
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FoldConstant(),
        relax.transform.FuseOps(),
        *merging,
        relax.transform.FuseTIR(),
        relax.transform.DeadCodeElimination(),
    ])


def lower_to_kernels(mod: tvm.IRModule, target: tvm.target.Target, merge_pools: bool = False) -> tvm.IRModule:
    """Run the fusing pipeline for ``target`` (kernel schedules are applied by ``schedules.build``);
    ``merge_pools``: see :func:`fusing_passes`."""
    with target:
        # adjoints of training steps are private functions: inline them first, so that the
        # default rewrite (which reads ``main`` only) sees their convolutions and products
        mod = relax.transform.InlinePrivateFunctions()(mod)
        cpu = defaults.cpu_info(target)
        # microcontrollers: rounding without a C library call (round_half_even.py)
        legalize = round_half_even.LEGALIZE if cpu is not None and cpu.small_memory else None
        return fusing_passes(cpu is not None, merge_pools, legalize)(defaults.rewrite_relax(mod, target))
