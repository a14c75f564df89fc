"""Post-training int8 of the zoo models beside onnxruntime's int8 (``bench_quant.py --models``).

For each model (random weights, random BatchNorm gammas and betas as tools/bench.py sets them, the
BatchNorms' moving statistics re-estimated on inputs of their own as training leaves them:
``trained_like.reestimate_batchnorms``, so that every layer's output is normalized and the float
model does not answer one class with tiny margins):
our float32 artifact, our PTQ int8 artifact (``PostTrainingQuantization`` on the calibration
inputs, exported with ``export_int8``), onnxruntime on aotnn's ONNX export of the float model, and
onnxruntime on that ONNX quantized by ``onnxruntime.quantization.quantize_static`` (QDQ, per-channel
int8 weights, uint8 activations, min/max calibration, the same calibration inputs). Latency at
batch 1 with engines taking turns in blocks (tools/bench.py's ``time_round``); top-1 agreement of
each int8 model with our float32 on held-out inputs ("float classes": how many distinct classes
float32 predicts on them: random weights may favour a few).
"""
from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import numpy as np

import aotnn
from aotnn import Tensor
from aotnn.compression.quant import PostTrainingQuantization, export_int8

from bench import Runner, onnx_session_runner, randomize, time_round
from trained_like import reestimate_batchnorms

SHAPES = {"resnet18": (3, 224, 224), "mobilenetv2": (3, 224, 224), "lenet5": (1, 32, 32)}
STATISTICS_INPUTS = 16  # inputs of the BatchNorm re-estimation (neither calibration nor held out)


def _model(name: str):
    from aotnn import models

    aotnn.set_seed(0)  # the same random weights on every run
    net = {"resnet18": models.resnet18, "mobilenetv2": models.mobilenetv2, "lenet5": models.lenet5}[name]()
    net.set_train(False)
    randomize(net)
    rng = np.random.default_rng(2)  # the calibration and held-out inputs come from seed 0
    reestimate_batchnorms(net, rng.standard_normal((STATISTICS_INPUTS, *SHAPES[name])).astype(np.float32))
    return net


def _ort_int8(float_onnx: str, int8_onnx: str, calibration: np.ndarray) -> None:
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            import onnx

            self.name = onnx.load(float_onnx).graph.input[0].name
            self.items = iter(calibration[i:i + 1] for i in range(len(calibration)))

        def get_next(self):
            item = next(self.items, None)
            return None if item is None else {self.name: item}

    quantize_static(float_onnx, int8_onnx, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax)


def _top1(runner_call, inputs: np.ndarray) -> np.ndarray:
    return np.array([int(np.argmax(np.asarray(runner_call(inputs[i:i + 1])[0]).reshape(-1)))
                     for i in range(len(inputs))])


def bench_one(name: str, args: Any, workdir: str) -> dict[str, Any]:
    """Quantize, check and time one model; its row of results."""
    import aotnn_runtime
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    shape = SHAPES[name]
    calibration = rng.standard_normal((args.calibration, *shape)).astype(np.float32)
    held_out = rng.standard_normal((args.held_out, *shape)).astype(np.float32)
    net = _model(name)
    example = Tensor(held_out[:1])
    start = time.perf_counter()
    ptq = PostTrainingQuantization(args.observer, args.percentile,
                                   cross_layer_equalization=getattr(args, "cle", False),
                                   bias_correction=getattr(args, "bias_correction", False))
    fake_quant_net = ptq.apply(net, [calibration[i:i + 25] for i in range(0, len(calibration), 25)])
    ptq_s = time.perf_counter() - start
    modules = {"float": aotnn.export(net, example, file_name=os.path.join(workdir, f"{name}_float")),
               "int8": export_int8(fake_quant_net, example, file_name=os.path.join(workdir, f"{name}_int8"))}
    modules = {key: aotnn_runtime.load(path) for key, path in modules.items()}
    for module in modules.values():
        module.set_num_threads(args.threads)
    float_onnx = aotnn.export(net, example, file_name=os.path.join(workdir, f"{name}.onnx"), file_format="ONNX")
    int8_onnx = os.path.join(workdir, f"{name}_int8.onnx")
    _ort_int8(float_onnx, int8_onnx, calibration)
    sessions = {}
    for key, path in (("ort float", float_onnx), ("ort int8", int8_onnx)):
        with open(path, "rb") as stream:
            sessions[key] = onnx_session_runner(stream.read(), [held_out[:1]], args.threads)
            sessions[key].name = key
    input_name = ort.InferenceSession(int8_onnx, providers=["CPUExecutionProvider"]).get_inputs()[0].name
    ort_int8 = ort.InferenceSession(int8_onnx, providers=["CPUExecutionProvider"])
    top1 = {"float": _top1(lambda x: [modules["float"].run(x)], held_out),
            "int8": _top1(lambda x: [modules["int8"].run(x)], held_out),
            "ort int8": _top1(lambda x: ort_int8.run(None, {input_name: x}), held_out)}
    from ptq_methods import clear_inputs

    float_logits = np.concatenate([np.asarray(modules["float"].run(held_out[i:i + 1])).reshape(1, -1)
                                   for i in range(len(held_out))])
    clear = clear_inputs(float_logits, getattr(args, "margin", 0.1))
    x1 = held_out[:1]
    runners = [Runner("float", lambda: modules["float"].run(x1)), Runner("int8", lambda: modules["int8"].run(x1)),
               sessions["ort float"], sessions["ort int8"]]
    ms = time_round(runners, args.repeats, args.pause)
    return {"model": name, "ms": ms, "ptq_s": ptq_s, "classes": len(set(top1["float"].tolist())),
            "agreement": {key: float(np.mean(top1[key] == top1["float"])) for key in ("int8", "ort int8")},
            "clear": int(clear.sum()), "clear agreement": {
                key: float(np.mean(top1[key][clear] == top1["float"][clear])) if clear.any() else float("nan")
                for key in ("int8", "ort int8")}}


def format_rows(rows: list[dict[str, Any]]) -> str:
    heads = ["model", "float ms", "int8 ms", "int8/float", "ort float ms", "ort int8 ms", "ort int8/float",
             "int8/ort int8", "top-1 agree int8", "top-1 agree ort int8", "float classes", "PTQ s",
             "clear-margin inputs", "agree int8 (clear)", "agree ort int8 (clear)"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    for row in rows:
        ms, agree = row["ms"], row["agreement"]
        cells = [row["model"], f"{ms['float']:.3f}", f"{ms['int8']:.3f}", f"{ms['int8'] / ms['float']:.2f}",
                 f"{ms['ort float']:.3f}", f"{ms['ort int8']:.3f}", f"{ms['ort int8'] / ms['ort float']:.2f}",
                 f"{ms['int8'] / ms['ort int8']:.2f}", f"{100 * agree['int8']:.1f}%", f"{100 * agree['ort int8']:.1f}%",
                 str(row["classes"]), f"{row['ptq_s']:.0f}", str(row["clear"]),
                 f"{100 * row['clear agreement']['int8']:.1f}%", f"{100 * row['clear agreement']['ort int8']:.1f}%"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_models(names: list[str], args: Any) -> int:
    """Print the table of ``names``; 1 when an int8 model agrees with float32 on less than 99%."""
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        raise SystemExit(f"--models: expected names among {sorted(SHAPES)}, got {unknown}")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for name in names:
            rows.append(bench_one(name, args, workdir))
            print(f"{name}: done", format_rows(rows[-1:]).splitlines()[-1], flush=True)  # kept if a later model dies
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"batch 1, {args.threads} threads, {args.repeats} timed calls per engine, PTQ observer {args.observer}"
          f"{', cross-layer equalization' if getattr(args, 'cle', False) else ''}"
          f"{', bias correction' if getattr(args, 'bias_correction', False) else ''}, "
          f"clear margin {getattr(args, 'margin', 0.1)} std, "
          f"load average {load:.2f}")
    print(format_rows(rows))
    return 0 if all(row["agreement"]["int8"] >= 0.99 for row in rows) else 1
