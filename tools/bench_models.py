"""A corpus of networks nobody tuned aotnn for, each against onnxruntime, with a per-kernel report.

The zoo (``tools/bench.py``) measures the networks the default schedules were written for. This
corpus runs mindcv 0.3.0's classification models (through ``aotnn.compat``'s ``mindspore``
aliases; ``pip install --no-deps mindcv==0.3.0 pyyaml tqdm``), a ResNet-18 written another way
(``resnet18_variant.py``), and a U-Net, audio and text networks (``corpus_models.py``).
onnxruntime runs aotnn's own ONNX export of the same Cell (the text models: PyTorch's export of a
twin with the same weights, see ``corpus_models.torch_twin``), so both engines see the same network
and weights. Engines take turns in blocks with a pause (``bench.time_round``), outputs must agree
within ``--tol``, and for each model a per-kernel report follows: each kernel's share of the time
(every kernel timed alone, repeatedly, on the artifact's own buffers), the default schedule rule
that scheduled it, and ``FALLBACK`` where that was the generic last resort.

Usage:
    python tools/bench_models.py                                # every model
    python tools/bench_models.py --models efficientnet_b0,mobilenet_v3_small_100 --top 10
    python tools/bench_models.py --models resnet18_rewritten --size 224 --json out.json
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench import (Runner, _at_least, host_description, onnx_session_runner, randomize, scaled_error,  # noqa: E402
                   time_round, write_json)
from corpus_models import CORPUS, torch_twin  # noqa: E402

MINDCV_MODELS = ("efficientnet_b0", "mobilenet_v3_small_100", "mobilenet_v3_large_100", "shufflenet_v2_x1_0",
                 "ghostnet_050", "densenet121", "regnet_x_200mf", "mixnet_s", "repvgg_a0", "googlenet",
                 "squeezenet1_0", "vgg11", "convnext_tiny", "mobilenet_v2_100", "resnet18",
                 "vit_b_32_224", "swin_tiny", "mobilevit_xx_small")
OWN_MODELS = ("resnet18_rewritten",) + tuple(CORPUS)
MODELS = MINDCV_MODELS + OWN_MODELS


def make_model(name: str) -> Any:
    """The aotnn Cell called ``name`` (a mindcv model, or one of ``OWN_MODELS``), in inference mode.

    Raises:
        ValueError: ``name`` is neither.
    """
    if name == "resnet18_rewritten":
        from resnet18_variant import resnet18_rewritten
        net = resnet18_rewritten()
    elif name in CORPUS:
        net = CORPUS[name](224)[0]
    elif name in MINDCV_MODELS:
        from aotnn.compat import install_mindspore_aliases
        install_mindspore_aliases()
        import mindcv
        net = mindcv.create_model(name, pretrained=False)
    else:
        raise ValueError(f"--models: expected some of {list(MODELS)}, got {name!r}")
    net.set_train(False)
    return net


def model_and_input(name: str, size: int) -> tuple[Any, np.ndarray]:
    """The Cell called ``name`` (see :func:`make_model`) and its seeded input: ``(1, 3, size, size)``
    for the image classifiers, the entry's own for ``corpus_models.CORPUS`` (U-Net, audio, text)."""
    if name in CORPUS:
        return CORPUS[name](size)
    x = np.random.default_rng(1).standard_normal((1, 3, size, size)).astype(np.float32)
    return make_model(name), x


def onnxruntime_runner(net, x: np.ndarray, workdir: str, threads: int) -> Runner:
    """onnxruntime on aotnn's ONNX export of ``net``, or on PyTorch's export of its twin where
    ``corpus_models.torch_twin`` has one (recurrent text models)."""
    import aotnn
    import onnxruntime as ort

    twin = torch_twin(net)
    if twin is not None:
        import torch
        buffer = io.BytesIO()
        with torch.no_grad():
            torch.onnx.export(twin, (torch.from_numpy(x),), buffer, input_names=["x"], opset_version=17, dynamo=False)
        return onnx_session_runner(buffer.getvalue(), [x], threads)
    path = aotnn.export(net, aotnn.Tensor(x), file_name=os.path.join(workdir, "model"), file_format="ONNX")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: x}
    return Runner("onnxruntime", lambda: session.run(None, feed))


def kernel_rules(artifact: str) -> dict[str, str | None]:
    """kernel -> the default rule that scheduled it, as the build recorded it in the manifest."""
    from aotnn_runtime.manifest import MANIFEST_FILE
    from schedules.build import KERNEL_RULES_KEY

    with open(os.path.join(artifact, MANIFEST_FILE), encoding="utf-8") as stream:
        return dict(json.load(stream).get("metadata", {}).get(KERNEL_RULES_KEY) or {})


def kernel_times(artifact: str, threads: int, x: np.ndarray, calls: int) -> list[tuple[str, float]]:
    """(kernel, median seconds) per step of the artifact's entry, each kernel timed alone ``calls``
    times over on the buffers of a real run (a simple timer, not the runtime's profiler)."""
    import aotnn_runtime
    import tvm_ffi
    from aotnn_runtime.buffers import aligned_empty
    from aotnn_runtime.manifest import MANIFEST_FILE

    with open(os.path.join(artifact, MANIFEST_FILE), encoding="utf-8") as stream:
        record = next(iter(json.load(stream)["entries"].values()))
    module = aotnn_runtime.load(artifact)
    module.set_num_threads(threads)
    entry = module[module.entry_points[0]]
    module.run(x)  # runs the parameter-only steps and fills the buffers
    data = aligned_empty(x.shape, x.dtype)
    data[...] = x
    outputs = [aligned_empty(spec.shape, spec.dtype) for spec in entry._output_specs]
    key, weights = entry._stored_params()
    handles = {"input": [tvm_ffi.from_dlpack(data)], "param": entry._param_handles(weights, key),
               "buffer": entry._buffers, "output": [tvm_ffi.from_dlpack(o) for o in outputs],
               "prepared": entry._prepared}
    result = []
    for step, (kernel, static, dynamic) in zip(record["steps"], entry._bound_steps(handles)):
        args = list(static)
        for position, kind, slot in dynamic:
            args[position] = handles[kind][slot]
        kernel(*args)
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            kernel(*args)
            times.append(time.perf_counter() - start)
        result.append((step["kernel"], float(np.median(times))))
    return result


def aotnn_runner(net, x: np.ndarray, workdir: str, threads: int) -> tuple[Runner, str, float]:
    """(the runner, the artifact's path, compile seconds) of ``net`` built for the host."""
    import aotnn
    import aotnn_runtime

    start = time.perf_counter()
    path = aotnn.export(net, aotnn.Tensor(x), file_name=os.path.join(workdir, "aotnn"), file_format="AOT")
    compile_s = time.perf_counter() - start
    module = aotnn_runtime.load(path)
    module.set_num_threads(threads)
    return Runner("aotnn", lambda: module.run(x)), path, compile_s


def bench_one(name: str, *, size: int, repeat: int, threads: int, kernel_calls: int, pause: float) -> dict[str, Any]:
    """Compile, check and time one model; returns its row (times, error, rules, kernel times)."""
    net, x = model_and_input(name, size)
    randomize(net)
    with tempfile.TemporaryDirectory(prefix="aotnn-corpus-") as workdir:
        ours, artifact, compile_s = aotnn_runner(net, x, workdir, threads)
        rules = kernel_rules(artifact)
        theirs = onnxruntime_runner(net, x, workdir, threads)
        error = max(scaled_error(a, b) for a, b in zip(ours.call(), theirs.call()))
        for runner in (ours, theirs):
            runner.call()
        ms = time_round([ours, theirs], repeat, pause)
        kernels = kernel_times(artifact, threads, x, kernel_calls) if kernel_calls else []
    return {"model": name, "ms": ms, "error": error, "compile_s": compile_s, "rules": rules,
            "kernels": [{"kernel": k, "ms": s * 1e3, "rule": _rule_of(k, rules)} for k, s in kernels]}


def _rule_of(kernel: str, rules: dict[str, str | None]) -> str | None:
    return rules.get(kernel, "?")


def fallback_count(row: dict[str, Any]) -> int:
    from schedules.defaults.coverage import fallback_kernels
    return len(fallback_kernels(row["rules"]))


def format_table(rows: list[dict[str, Any]], tol: float) -> str:
    heads = ["model", "aotnn ms", "onnxruntime ms", "aotnn/ort", "fallback kernels", "max err", "compile s"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    for row in rows:
        if "failed" in row:
            lines.append(f"| {row['model']} | failed: {row['failed']} |")
            continue
        ms = row["ms"]
        lines.append(f"| {row['model']} | {ms['aotnn']:.2f} | {ms['onnxruntime']:.2f} | "
                     f"{ms['aotnn'] / ms['onnxruntime']:.2f}x | {fallback_count(row)} of {len(row['rules'])} | "
                     f"{row['error']:.1e}{'' if row['error'] <= tol else ' FAIL'} | {row['compile_s']:.1f} |")
    return "\n".join(lines)


def format_kernels(row: dict[str, Any], top: int) -> str:
    """The model's kernels by time, largest first: time, share, rule (generic ones flagged)."""
    from schedules.defaults.coverage import is_generic

    kernels = sorted(row.get("kernels", []), key=lambda k: -k["ms"])
    total = sum(k["ms"] for k in kernels) or 1.0
    lines = [f"{row['model']}: {len(kernels)} kernels, {total:.2f} ms timed alone"]
    for k in kernels[:top]:
        flag = "  FALLBACK" if is_generic(k["rule"], k["kernel"]) else ""
        lines.append(f"  {k['ms']:8.3f} ms {100 * k['ms'] / total:5.1f}%  {str(k['rule']):18s} {k['kernel']}{flag}")
    generic = [k for k in kernels[top:] if is_generic(k["rule"], k["kernel"])]
    lines += [f"  {k['ms']:8.3f} ms {100 * k['ms'] / total:5.1f}%  {str(k['rule']):18s} {k['kernel']}  FALLBACK"
              for k in generic]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_models", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated (default: all)")
    parser.add_argument("--size", type=_at_least(int, 32), default=224, help="input height and width (default 224)")
    parser.add_argument("--repeat", type=_at_least(int, 1), default=20, help="timed calls per engine (default 20)")
    parser.add_argument("--threads", type=_at_least(int, 0), default=0, help="threads per engine (default: all cores)")
    parser.add_argument("--kernel-calls", type=_at_least(int, 0), default=10,
                        help="timed calls per kernel for the report (0: no report; default 10)")
    parser.add_argument("--top", type=_at_least(int, 0), default=8, help="kernels listed per model (default 8)")
    parser.add_argument("--pause", type=_at_least(float, 0.0), default=0.05,
                        help="seconds before each engine's block of calls (default 0.05)")
    parser.add_argument("--tol", type=float, default=1e-3, help="largest scaled output difference (default 1e-3)")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args(argv)

    from schedules.target import host_cores

    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"--models: expected some of {list(MODELS)}, got {unknown}")
    threads = args.threads or host_cores()
    load_before = os.getloadavg()[0]
    rows = []
    for name in names:
        print(f"{name}: compiling and timing ...", file=sys.stderr, flush=True)
        try:
            row = bench_one(name, size=args.size, repeat=args.repeat, threads=threads,
                            kernel_calls=args.kernel_calls, pause=args.pause)
        except Exception as err:  # noqa: BLE001 - one model's failure is a row, not the end of the run
            row = {"model": name, "failed": f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"}
        rows.append(row)
        if "failed" not in row and row["kernels"]:
            print(format_kernels(row, args.top), flush=True)
    print(f"{host_description()}; {threads} thread(s) per engine; median of {args.repeat} calls, engines taking "
          f"turns; load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(format_table(rows, args.tol))
    if args.json:
        write_json(args.json, rows)
    return 1 if any("failed" in r or r["error"] > args.tol for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
