"""ONNX node conformance: ONNX's own node tests (``onnx.backend.test.case.node``), filtered to the
operators PyTorch exports for vision, text and speech models, run on aotnn, plain TVM (Relax ONNX
frontend + ``tvm.compile`` + VM) and onnxruntime, compared with the expected outputs.

Prints a table per op family with totals, then the tests that pass in TVM but fail in aotnn.
Each case runs in a worker process with a timeout; a crash or a hang costs that case only.

Usage:
    python3 tools/onnx_conformance.py [--ops Conv,LSTM] [--backends aotnn,tvm,ort] [--timeout 120]
                                      [--json results.json] [--expanded]

aotnn compiles static shapes: where a case's output shape depends on the value of an integer input
(Reshape's shape, Slice's starts, ...) or of a static input of another dtype (Resize's scales),
aotnn is retried with those inputs baked in as constants (as an exported model holds them) and the
pass is counted as ``pass (const)``.
"""
from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
from collections import defaultdict
from typing import Any

FAMILIES: dict[str, tuple[str, ...]] = {
    "conv": ("Conv", "ConvTranspose"),
    "matmul": ("Gemm", "MatMul", "Einsum"),
    "norm": ("BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
             "LpNormalization", "MeanVarianceNormalization"),
    "activation": ("Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
                   "Tanh", "Softplus", "Softsign", "Gelu", "Mish", "Softmax", "LogSoftmax", "Hardmax",
                   "ThresholdedRelu", "Clip", "Erf"),
    "pool": ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"),
    "elementwise": ("Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Floor",
                    "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Min", "Max", "Sum", "Mean", "Mod", "Where", "Not",
                    "And", "Or", "Xor", "IsNaN", "IsInf"),
    "compare": ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"),
    "shape": ("Reshape", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "Squeeze",
              "Unsqueeze", "Expand", "Tile", "Flatten", "Shape", "Size", "Identity", "DepthToSpace",
              "SpaceToDepth", "ConstantOfShape", "Range", "Trilu", "ScatterElements", "ScatterND", "GatherND",
              "OneHot"),
    "reduce": ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum", "ArgMax", "ArgMin"),
    "resize": ("Resize", "Upsample"),
    "pad": ("Pad",),
    "cast": ("Cast", "CastLike"),
    "scan": ("CumSum", "TopK"),
    "recurrent": ("LSTM", "GRU", "RNN"),
    "dropout": ("Dropout",),
    "quant": ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
              "MatMulInteger", "ConvInteger"),
}
OP_FAMILY = {op: family for family, ops in FAMILIES.items() for op in ops}
# ops allowed besides the one under test (helpers inside a test graph)
HELPERS = {"Constant"}
# dtypes the compared backends are expected to handle; cases on others (strings, float8, int4...) are left out
DTYPES = {"float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool"}


def select_cases(expanded: bool = False, ops: set[str] | None = None) -> list[tuple[str, str, Any]]:
    """(name, family, case) for the node tests whose ops are all selected."""
    import warnings

    import numpy as np
    from onnx.backend.test.case import node

    chosen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own overflow warnings
        cases = node.collect_testcases(None)
    for case in cases:
        if case.kind != "node" or (case.name.endswith("_expanded") and not expanded):
            continue
        if "_expanded_ver" in case.name and not expanded:
            continue
        op_types = [n.op_type for n in case.model.graph.node if n.domain in ("", "ai.onnx")]
        if len(op_types) != len(case.model.graph.node):
            continue
        main_ops = [op for op in op_types if op not in HELPERS]
        if not main_ops:
            continue
        if any(op not in OP_FAMILY and op not in HELPERS for op in op_types):
            continue
        if ops and not set(main_ops) & ops:
            continue
        if len(case.data_sets) < 1:
            continue
        inputs, outputs = case.data_sets[0]
        arrays = list(inputs) + list(outputs)
        # numpy scalars (CumSum's axis, Clip's bounds, ...) count as 0-d arrays
        if not all(isinstance(a, (np.ndarray, np.generic)) and str(np.asarray(a).dtype) in DTYPES for a in arrays):
            continue
        chosen.append((case.name, OP_FAMILY[main_ops[-1]], case))
    return sorted(chosen, key=lambda entry: (entry[1], entry[0]))


# -- backends (worker side) -------------------------------------------------------------------------
def _flatten(value: Any) -> list:
    import numpy as np
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _flatten(v)]
    if hasattr(value, "asnumpy"):
        return [np.asarray(value.asnumpy())]
    if hasattr(value, "numpy"):
        return [np.asarray(value.numpy())]
    return [np.asarray(value)]


def _feeds(case) -> dict:
    import numpy as np
    inputs, _ = case.data_sets[0]
    names = [i.name for i in case.model.graph.input if i.name not in {t.name for t in case.model.graph.initializer}]
    return {name: np.asarray(value) for name, value in zip(names, inputs)}


def run_ort(case) -> list:
    import onnxruntime as ort
    session = ort.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, _feeds(case))


def run_tvm(case) -> list:
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    feeds = _feeds(case)
    shapes = {k: list(v.shape) for k, v in feeds.items()}
    dtypes = {k: str(v.dtype) for k, v in feeds.items()}
    mod = from_onnx(case.model, shape_dict=shapes, dtype_dict=dtypes)
    executable = tvm.compile(mod, target="llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    args = [tvm.runtime.tensor(v) if hasattr(tvm.runtime, "tensor") else tvm.nd.array(v) for v in feeds.values()]
    return _flatten(vm["main"](*args))


def bake_integer_inputs(model, feeds: dict):
    """``model`` with its non-floating-point inputs, and those at static positions (Resize's scales,
    ``relay_frontend.onnx_import.STATIC_INPUTS``), turned into initializers holding ``feeds``."""
    import copy

    import numpy as np
    from onnx import numpy_helper

    from relay_frontend.onnx_import import static_input_names
    model = copy.deepcopy(model)
    static = static_input_names(model.graph)
    baked = {k: v for k, v in feeds.items() if np.asarray(v).dtype.kind in "iub" or k in static}
    kept = [i for i in model.graph.input if i.name not in baked]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    model.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), k) for k, v in baked.items())
    return model, {k: v for k, v in feeds.items() if k not in baked}


def run_aotnn(case) -> tuple[list, str]:
    """(outputs, how): how is "" or "const" when the integer inputs had to be baked in."""
    import aotnn
    import numpy as np
    from relay_frontend.onnx_import import OnnxImportError

    def run(model, feeds):
        shapes = {k: list(np.shape(v)) for k, v in feeds.items()}
        net = aotnn.load_onnx(model.SerializeToString(), shape_dict=shapes)
        return _flatten(net(*[aotnn.Tensor(np.asarray(v)) for v in feeds.values()]))

    feeds = _feeds(case)
    try:
        return run(case.model, feeds), ""
    except OnnxImportError as err:
        if "constant" not in str(err):
            raise
        model, rest = bake_integer_inputs(case.model, feeds)
        return run(model, rest), "const"


def compare(got: list, expected: list, rtol: float, atol: float) -> str:
    """'' when ``got`` matches ``expected`` (values, shapes and dtypes), else what differs."""
    import numpy as np
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for index, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        if g.dtype != e.dtype:
            return f"output {index}: dtype {g.dtype}, expected {e.dtype}"
        if g.shape != e.shape:
            return f"output {index}: shape {g.shape}, expected {e.shape}"
        try:
            if e.dtype.kind in "fc":
                np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
            else:
                np.testing.assert_array_equal(g, e)
        except AssertionError as err:
            lines = [line for line in str(err).splitlines() if "Max" in line or "Mismatched" in line]
            return f"output {index}: values differ ({'; '.join(lines)[:200]})"
    return ""


BACKENDS = {"aotnn": run_aotnn, "tvm": run_tvm, "ort": run_ort}


def worker(backends: list[str]) -> None:
    """Read case names on stdin, write one JSON line of results by backend per case on stdout."""
    import contextlib
    import io
    import warnings
    warnings.simplefilter("ignore")
    cases = {name: case for name, _, case in select_cases(expanded=True)}
    # results go to the real stdout; anything native code prints goes to stderr
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        name = line.strip()
        case = cases[name]
        _, expected = case.data_sets[0]
        results = {}
        for backend in backends:
            how = ""
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    result = BACKENDS[backend](case)
                if backend == "aotnn":
                    result, how = result
                problem = compare(result, list(expected), case.rtol, case.atol)
                status = "pass" if not problem else "fail"
            except Exception as err:  # noqa: BLE001 - every failure is a result here
                text = " ".join(str(err).split()) or type(err).__name__
                problem, status = f"{type(err).__name__}: {text[-300:]}", "error"
            results[backend] = {"status": status, "how": how, "detail": problem}
        # one line per case: the parent waits on the pipe with select, which cannot see lines it has
        # already buffered
        out.write(json.dumps(results) + "\n")
        out.flush()


class Worker:
    """A worker process fed one case at a time; restarted after a crash or a timeout."""

    def __init__(self, backends: list[str]):
        self.backends = backends
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(root, "runtime"), root] +
                                            [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                         "--backends", ",".join(self.backends)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, bufsize=1, env=env)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def run(self, name: str, timeout: float) -> dict[str, dict]:
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        ready = select.select([self.process.stdout], [], [], timeout)[0]
        line = self.process.stdout.readline() if ready else ""
        if not line:
            why = "timeout" if not ready else f"crash (exit {self.process.poll()})"
            self.stop()
            return {backend: {"status": "error", "how": "", "detail": why} for backend in self.backends}
        return json.loads(line)


def interleaved(selected: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
    """The cases in turns over the families, so that an interrupted run still covers every family."""
    by_family: dict[str, list] = defaultdict(list)
    for entry in selected:
        by_family[entry[1]].append(entry)
    queues = [by_family[f] for f in sorted(by_family)]
    order = []
    for turn in range(max((len(q) for q in queues), default=0)):
        order.extend(q[turn] for q in queues if turn < len(q))
    return order


def report(selected: list[tuple[str, str, Any]], results: dict[str, dict[str, dict]], backends: list[str]) -> str:
    lines = []
    header = f"{'family':<12}{'cases':>7}" + "".join(f"{b:>9}" for b in backends)
    lines.append(header)
    lines.append("-" * len(header))
    totals: dict[str, int] = defaultdict(int)
    by_family: dict[str, list[str]] = defaultdict(list)
    for name, family, _ in selected:
        by_family[family].append(name)
    for family in sorted(by_family):
        names = by_family[family]
        counts = {b: sum(results[n][b]["status"] == "pass" for n in names) for b in backends}
        for b in backends:
            totals[b] += counts[b]
        lines.append(f"{family:<12}{len(names):>7}" + "".join(f"{counts[b]:>9}" for b in backends))
    lines.append("-" * len(header))
    total = len(selected)
    lines.append(f"{'total':<12}{total:>7}" + "".join(f"{totals[b]:>9}" for b in backends))
    lines.append(f"{'share':<12}{'':>7}" + "".join(f"{100 * totals[b] / max(total, 1):>8.1f}%" for b in backends))
    if "aotnn" in backends:
        const = sum(results[n]["aotnn"]["status"] == "pass" and results[n]["aotnn"]["how"] == "const"
                    for n, _, _ in selected)
        lines.append(f"aotnn passes with integer (and static) inputs baked in as constants: {const}")
    if "aotnn" in backends and "tvm" in backends:
        lost = [n for n, _, _ in selected
                if results[n]["tvm"]["status"] == "pass" and results[n]["aotnn"]["status"] != "pass"]
        lines.append(f"\npass in TVM, fail in aotnn: {len(lost)}")
        lines.extend(f"  {n}: {results[n]['aotnn']['detail'][:240]}" for n in lost)
    if "aotnn" in backends:
        failing = [n for n, _, _ in selected if results[n]["aotnn"]["status"] != "pass"]
        lines.append(f"\nall aotnn failures: {len(failing)}")
        lines.extend(f"  {n}: {results[n]['aotnn']['detail'][:240]}" for n in failing)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="", help="only cases of these ops (comma-separated)")
    parser.add_argument("--cases", default="", help="only these case names (comma-separated)")
    parser.add_argument("--backends", default="aotnn,tvm,ort")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per case, all backends")
    parser.add_argument("--expanded", action="store_true", help="also the *_expanded function-body cases")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b]
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        parser.error(f"--backends: unknown {sorted(unknown)}; choose from {sorted(BACKENDS)}")
    if args.worker:
        worker(backends)
        return 0
    ops = {o for o in args.ops.split(",") if o} or None
    selected = select_cases(args.expanded, ops)
    if args.cases:
        wanted = set(args.cases.split(","))
        selected = [entry for entry in selected if entry[0] in wanted]
    print(f"{len(selected)} node tests selected", flush=True)
    os.environ.setdefault("AOTNN_CACHE_DIR", tempfile.mkdtemp(prefix="aotnn-conformance-"))
    runner = Worker(backends)
    results: dict[str, dict[str, dict]] = {}
    try:
        for index, (name, family, _) in enumerate(interleaved(selected)):
            results[name] = runner.run(name, args.timeout)
            marks = " ".join(f"{b}={results[name][b]['status']}" for b in backends)
            print(f"[{index + 1}/{len(selected)}] {family:<11} {name}: {marks}", flush=True)
    except KeyboardInterrupt:  # report what ran
        print(f"\ninterrupted: {len(results)} of {len(selected)} cases ran; the table covers those", flush=True)
        selected = [entry for entry in selected if entry[0] in results]
    finally:
        runner.stop()
    print()
    print(report(selected, results, backends))
    if args.json:
        directory = os.path.dirname(os.path.abspath(args.json))
        with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, suffix=".tmp") as stream:
            json.dump(results, stream, indent=1)
        os.replace(stream.name, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
