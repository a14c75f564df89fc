"""The Relax pass pipeline: legalize every op to TIR, fuse element-wise epilogues, fuse TIR."""
from __future__ import annotations

import tvm
from tvm import relax

from . import defaults


def fusing_passes() -> tvm.transform.Pass:
    """Relax passes that leave ``main`` as a sequence of ``call_tir`` kernels."""
    return tvm.transform.Sequential([
        relax.transform.LegalizeOps(),
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FoldConstant(),
        relax.transform.FuseOps(),
        relax.transform.FuseTIR(),
        relax.transform.DeadCodeElimination(),
    ])


def lower_to_kernels(mod: tvm.IRModule, target: tvm.target.Target) -> tvm.IRModule:
    """Run the fusing pipeline for ``target`` (kernel schedules are applied by ``schedules.build``)."""
    with target:
        # adjoints of training steps are private functions: inline them first, so that the
        # default rewrite (which reads ``main`` only) sees their convolutions and products
        mod = relax.transform.InlinePrivateFunctions()(mod)
        return fusing_passes()(defaults.rewrite_relax(mod, target))
