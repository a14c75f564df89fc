"""Run mindcv models unmodified on aotnn and compare their outputs with MindSpore's, weights shared.

Two steps, each under its own interpreter:

1. With MindSpore and mindcv installed, record a model's weights, an input and MindSpore's output::

       DNNL_MAX_CPU_ISA=AVX2 python tools/compare_mindcv_models.py record convit_tiny --size 224 --out ref/

2. With aotnn, load mindcv's model code through ``install_mindspore_aliases`` (mindcv's sources found in
   ``--mindcv``: the directory holding the ``mindcv`` package), copy the recorded weights in by name and
   compare::

       python tools/compare_mindcv_models.py compare convit_tiny --out ref/ --mindcv <site-packages dir>

   Only ``mindcv.models`` is loaded (mindcv's top-level package also imports its data, optim and training
   modules). It reports parameter names missing on either side and the largest absolute output difference.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import types
from pathlib import Path

import numpy as np


def record(name: str, size: int, out: Path) -> None:
    """Build ``name`` under MindSpore (seed 0), run one random image and save weights, input and output."""
    import mindspore as ms
    from mindcv.models import create_model

    ms.set_seed(0)
    net = create_model(name, num_classes=10)
    net.set_train(False)
    x = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)
    result = net(ms.Tensor(x)).asnumpy()
    arrays = {f"param:{p.name}": p.asnumpy() for p in net.get_parameters()}
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.npz"
    with tempfile.NamedTemporaryFile(dir=out, suffix=".npz", delete=False) as handle:
        np.savez(handle, input=x, output=result, **arrays)
    os.replace(handle.name, target)
    print(f"{name}: {len(arrays)} parameters, output {result.shape} -> {target}")


def _load_mindcv_models(mindcv_root: Path):
    from aotnn.compat import install_mindspore_aliases

    install_mindspore_aliases()
    package = types.ModuleType("mindcv")
    package.__path__ = [str(mindcv_root / "mindcv")]
    sys.modules["mindcv"] = package
    import importlib

    return importlib.import_module("mindcv.models")


def compare(name: str, out: Path, mindcv_root: Path) -> float:
    """Largest absolute difference between aotnn's and the recorded MindSpore output of ``name``."""
    models = _load_mindcv_models(mindcv_root)
    import mindspore as ms  # aotnn, through the aliases

    reference = np.load(out / f"{name}.npz")
    weights = {key[len("param:"):]: reference[key] for key in reference.files if key.startswith("param:")}
    net = models.create_model(name, num_classes=10)
    net.set_train(False)
    ours = {p.name: p for p in net.get_parameters()}
    missing, extra = sorted(set(weights) - set(ours)), sorted(set(ours) - set(weights))
    if missing or extra:
        print(f"{name}: parameter names differ: {len(missing)} only in MindSpore (e.g. {missing[:3]}), "
              f"{len(extra)} only in aotnn (e.g. {extra[:3]})")
    for key, parameter in ours.items():
        if key in weights:
            parameter.set_data(ms.Tensor(weights[key]))
    result = net(ms.Tensor(reference["input"])).asnumpy()
    difference = float(np.abs(result - reference["output"]).max())
    print(f"{name}: max |aotnn - MindSpore| = {difference:.3g} (output scale "
          f"{float(np.abs(reference['output']).max()):.3g})")
    return difference


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("record", "compare"))
    parser.add_argument("models", nargs="+", help="mindcv model names, e.g. convit_tiny xcit_tiny_12_p16_224")
    parser.add_argument("--size", type=int, default=224, help="input height and width (record). Default: 224")
    parser.add_argument("--out", type=Path, required=True, help="directory of the recorded .npz files")
    parser.add_argument("--mindcv", type=Path, help="directory holding the mindcv package (compare)")
    args = parser.parse_args(argv)
    if args.step == "record":
        for name in args.models:
            record(name, args.size, args.out)
        return 0
    if args.mindcv is None or not (args.mindcv / "mindcv" / "models").is_dir():
        parser.error(f"--mindcv: expected a directory holding mindcv/models, got {args.mindcv}")
    for name in args.models:
        compare(name, args.out, args.mindcv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
