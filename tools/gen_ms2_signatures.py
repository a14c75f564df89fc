"""Regenerate tests/fixtures/ms2_signatures.json: MindSpore 2.x's parameter names and defaults for the
MindSpore 2.x names aotnn added (tests/test_ms2_signatures.py checks aotnn's against them).

Run with a Python that has MindSpore installed::

    DNNL_MAX_CPU_ISA=AVX2 python tools/gen_ms2_signatures.py
"""
from __future__ import annotations

import inspect
import json
import os
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ms2_signatures.json"

NAMES = """
ops.split ops.chunk ops.unstack ops.unbind ops.gather_elements ops.tensor_scatter_elements ops.gather_nd
ops.repeat_elements ops.repeat_interleave ops.cumsum ops.sort ops.topk ops.top_k ops.swapaxes ops.movedim
ops.moveaxis ops.permute ops.flip ops.narrow ops.linspace ops.eye ops.meshgrid ops.identity ops.tuple_to_array
ops.scalar_to_tensor ops.masked_fill ops.full_like ops.reciprocal ops.interpolate ops.selu ops.glu
ops.pixel_shuffle ops.pixel_unshuffle ops.channel_shuffle ops.cross_entropy ops.nll_loss ops.binary_cross_entropy
ops.binary_cross_entropy_with_logits ops.kl_div ops.clip_by_global_norm ops.stop_gradient ops.assign_add ops.atan
ops.tan ops.argmax ops.depend ops.mixed_precision_cast ops.is_tensor
ops.eq ops.ne ops.gt ops.ge ops.le ops.logical_xor ops.true_divide ops.floor_divide ops.remainder ops.fmod
ops.float_power ops.sinh ops.cosh ops.asin ops.acos ops.asinh ops.acosh ops.atanh ops.trunc ops.frac ops.log2
ops.log10 ops.log1p ops.expm1 ops.erfc ops.deg2rad ops.xlogy ops.lerp ops.addcmul ops.addcdiv ops.isnan ops.isinf
ops.isfinite ops.isclose ops.nan_to_num ops.bmm ops.addmm ops.baddbmm ops.outer ops.dot ops.t ops.ravel ops.std
ops.var ops.nansum ops.count_nonzero ops.all ops.any ops.index_select ops.take ops.tensor_split ops.argsort
ops.diagonal ops.inv
ops.Unstack ops.L2Normalize ops.LpNorm ops.ResizeNearestNeighbor ops.Sort ops.TopK ops.KLDivLoss
ops.Conv2DTranspose ops.AllReduce ops.Broadcast ops.MultitypeFuncGraph ops.HyperMap ops.Map
nn.Identity nn.Linear nn.Flatten nn.GLU nn.Upsample nn.ZeroPad2d nn.ConstantPad1d nn.ConstantPad2d
nn.ConstantPad3d nn.ReflectionPad1d nn.ReflectionPad2d nn.ReflectionPad3d nn.ReplicationPad1d nn.ReplicationPad2d
nn.ReplicationPad3d nn.PixelShuffle nn.PixelUnshuffle nn.ChannelShuffle nn.Unflatten nn.Dropout1d nn.Dropout2d
nn.Dropout3d nn.CrossEntropyLoss nn.NLLLoss nn.HuberLoss nn.MarginRankingLoss nn.KLDivLoss nn.PoissonNLLLoss
nn.GaussianNLLLoss nn.MAELoss nn.HingeEmbeddingLoss nn.MultiLabelSoftMarginLoss RowTensor
numpy.ones numpy.zeros numpy.full numpy.arange numpy.linspace numpy.eye numpy.ones_like numpy.zeros_like
numpy.empty numpy.array numpy.asarray numpy.add numpy.subtract numpy.multiply numpy.divide numpy.power numpy.exp
numpy.log numpy.sqrt numpy.abs numpy.maximum numpy.minimum numpy.clip numpy.where numpy.matmul numpy.dot
numpy.tanh numpy.sin numpy.cos numpy.reshape numpy.transpose numpy.expand_dims numpy.squeeze numpy.concatenate
numpy.stack numpy.split numpy.tile numpy.broadcast_to numpy.ravel numpy.swapaxes numpy.moveaxis numpy.take
numpy.take_along_axis numpy.sum numpy.mean numpy.amax numpy.amin numpy.var numpy.std numpy.argmax numpy.argmin
numpy.cumsum numpy.roll numpy.tensordot numpy.flip numpy.repeat numpy.full_like numpy.array_split numpy.isclose
numpy.round numpy.trunc numpy.fmod numpy.hypot numpy.logaddexp numpy.logaddexp2 numpy.diag numpy.diagonal
numpy.diagflat numpy.tril_indices numpy.triu_indices numpy.unravel_index numpy.searchsorted numpy.corrcoef
""".split()


def parameters(obj) -> list[list] | None:
    """[name, kind, default repr or None] per parameter (``self`` left out), of a function or a class's
    ``__init__``."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    return [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default)]
            for p in inspect.signature(target).parameters.values() if p.name != "self"]


def main() -> None:
    import mindspore

    table = {}
    for name in NAMES:
        obj = mindspore
        for part in name.split("."):
            obj = getattr(obj, part)
        table[name] = parameters(obj)
    with tempfile.NamedTemporaryFile("w", dir=OUT.parent, suffix=".json", delete=False) as handle:
        json.dump({"mindspore": mindspore.__version__, "signatures": table}, handle, indent=1)
    os.chmod(handle.name, 0o644)
    os.replace(handle.name, OUT)
    print(f"wrote {len(table)} signatures to {OUT}")


if __name__ == "__main__":
    main()
