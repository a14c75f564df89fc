"""Regenerate tests/numpy/fixtures/mindspore_numpy.npz: MindSpore 2.x's ``mindspore.numpy`` outputs (values
and dtypes) for the cases below, which tests/numpy/test_mindspore_fixtures.py evaluates with ``aotnn.numpy``.

Run with a Python that has MindSpore installed (CPU is enough)::

    DNNL_MAX_CPU_ISA=AVX2 python tools/gen_numpy_fixtures.py

Each case is an expression over ``mnp`` (the numpy module under test) and the inputs ``X`` (float32 3x4),
``Y`` (float32 3x4), ``I`` (int32 2x3), ``V`` (float32 4), ``IDX`` (int32 indices) and ``ALONG`` (int32 3x4 indices); the arrays are stored
in the file too, so both sides see the same data.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "numpy" / "fixtures" / "mindspore_numpy.npz"

CASES = {
    "ones": "mnp.ones((2, 3))", "zeros_int": "mnp.zeros(4, mnp.int32)", "full_int": "mnp.full((2, 2), 3)",
    "full_float": "mnp.full((2,), 1.5)", "arange_int": "mnp.arange(5)", "arange_float": "mnp.arange(0, 1, 0.25)",
    "arange_step": "mnp.arange(2, 11, 3)", "linspace": "mnp.linspace(-1, 2, 7)",
    "linspace_open": "mnp.linspace(0, 1, 4, endpoint=False)", "eye": "mnp.eye(3, 4, 1)",
    "array_int": "mnp.array([1, 2, 3])", "array_float": "mnp.array([[1.0, 2.0]])",
    "ones_like": "mnp.ones_like(I)", "zeros_like_f": "mnp.zeros_like(X, mnp.float16)",
    "add": "mnp.add(X, Y)", "add_scalar": "mnp.add(I, 2)", "subtract": "mnp.subtract(X, 1.5)",
    "multiply": "mnp.multiply(X, Y)", "divide": "mnp.divide(X, Y)", "divide_int": "mnp.divide(I, 2)",
    "power": "mnp.power(mnp.abs(X), 1.5)", "exp": "mnp.exp(X)", "log": "mnp.log(mnp.abs(X) + 1)",
    "sqrt": "mnp.sqrt(mnp.abs(X))", "sqrt_int": "mnp.sqrt(I)", "abs": "mnp.abs(X)", "maximum": "mnp.maximum(X, Y)",
    "minimum": "mnp.minimum(X, 0.0)", "clip": "mnp.clip(X, -0.5, 0.5)", "where": "mnp.where(X > 0, X, Y)",
    "matmul": "mnp.matmul(X, mnp.transpose(Y))", "matmul_vec": "mnp.matmul(X, V)", "dot": "mnp.dot(V, V)",
    "tanh": "mnp.tanh(X)", "sin": "mnp.sin(X)", "cos": "mnp.cos(X)", "square": "mnp.square(X)",
    "reshape": "mnp.reshape(X, (4, 3))", "transpose": "mnp.transpose(X)", "expand_dims": "mnp.expand_dims(X, 1)",
    "squeeze": "mnp.squeeze(mnp.expand_dims(X, 0))", "concatenate": "mnp.concatenate((X, Y), axis=1)",
    "stack": "mnp.stack((X, Y), axis=-1)", "split": "mnp.split(X, 2, axis=1)[1]",
    "split_idx": "mnp.split(X, [1], axis=0)[1]", "tile": "mnp.tile(V, (2, 2))",
    "broadcast_to": "mnp.broadcast_to(V, (3, 4))", "ravel": "mnp.ravel(X)", "swapaxes": "mnp.swapaxes(X, 0, 1)",
    "moveaxis": "mnp.moveaxis(mnp.expand_dims(X, 0), 0, -1)", "take": "mnp.take(X, IDX, axis=1)",
    "take_flat": "mnp.take(X, IDX)", "take_along_axis": "mnp.take_along_axis(X, ALONG, 1)",
    "sum": "mnp.sum(X)", "sum_axis": "mnp.sum(X, axis=1, keepdims=True)", "sum_int": "mnp.sum(I)",
    "mean": "mnp.mean(X, axis=0)", "mean_int": "mnp.mean(I)", "amax": "mnp.amax(X, axis=1)", "amin": "mnp.amin(X)",
    "var": "mnp.var(X, axis=1)", "var_ddof": "mnp.var(X, ddof=1)", "std": "mnp.std(X, axis=0)",
    "argmax": "mnp.argmax(X)", "argmax_axis": "mnp.argmax(X, axis=1)", "argmin": "mnp.argmin(X, axis=0)",
    "cumsum": "mnp.cumsum(X, axis=1)", "cumsum_flat": "mnp.cumsum(I)", "roll": "mnp.roll(X, 2, axis=1)",
    "flip": "mnp.flip(X, 0)", "repeat": "mnp.repeat(V, 2)", "tensordot": "mnp.tensordot(X, Y, ((0,), (0,)))",
    "isclose": "mnp.isclose(X, X + 1e-6)", "argmin_flat": "mnp.argmin(X)",
    "round": "mnp.round(mnp.array([0.5, 1.5, 2.5, -0.5, 1.26]))", "round_2": "mnp.round(X, 2)", "trunc": "mnp.trunc(X * 3)",
    "fmod": "mnp.fmod(X * 5, 2.0)", "hypot": "mnp.hypot(X, Y)", "logaddexp": "mnp.logaddexp(X, Y)",
    "logaddexp2": "mnp.logaddexp2(X, Y)", "diag_1d": "mnp.diag(V, 1)", "diag_2d": "mnp.diag(X, -1)",
    "diagonal": "mnp.diagonal(X, 1)", "diagflat": "mnp.diagflat(mnp.ones((2, 2)), -1)",
    "tril_rows": "mnp.tril_indices(4, 1)[0]", "triu_cols": "mnp.triu_indices(3, 0, 4)[1]",
    "unravel": "mnp.unravel_index(IDX, (2, 2))[0]", "unravel_cols": "mnp.unravel_index(IDX, (2, 2))[1]",
    "searchsorted": "mnp.searchsorted(mnp.array([1.0, 2.0, 2.0, 3.0]), mnp.array([2.0, 0.5, 3.5]))",
    "searchsorted_right": "mnp.searchsorted(mnp.array([1.0, 2.0, 2.0, 3.0]), mnp.array([2.0, 0.5]), side='right')",
    "corrcoef": "mnp.corrcoef(X)", "corrcoef_cols": "mnp.corrcoef(X, rowvar=False)",
    "greater": "mnp.greater(X, Y)", "logical_and": "mnp.logical_and(X > 0, Y > 0)",
}

# int indices of X's shape for take_along_axis
ALONG = np.array([[3, 0, 1, 2], [1, 1, 0, 3], [2, 3, 3, 0]], np.int32)


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2024)
    return {"X": rng.standard_normal((3, 4)).astype(np.float32), "Y": rng.standard_normal((3, 4)).astype(np.float32),
            "I": np.arange(6, dtype=np.int32).reshape(2, 3), "V": rng.standard_normal(4).astype(np.float32),
            "IDX": np.array([0, 3, 1], np.int32)}


def evaluate(mnp, to_tensor) -> dict[str, tuple[np.ndarray, str]]:
    """Every case under ``mnp``: name -> (value, dtype name)."""
    env = {name: to_tensor(value) for name, value in inputs().items()}
    env["mnp"], env["ALONG"] = mnp, to_tensor(ALONG)
    results = {}
    for name, expression in CASES.items():
        out = eval(expression, env)  # noqa: S307 (fixed expressions from this file)
        results[name] = (out.asnumpy(), str(out.dtype).lower())
    return results


def main() -> None:
    import mindspore
    import mindspore.numpy as mnp

    results = evaluate(mnp, mindspore.Tensor)
    arrays = {f"in_{k}": v for k, v in inputs().items()}
    arrays["in_ALONG"] = ALONG
    arrays.update({f"out_{name}": value for name, (value, _) in results.items()})
    meta = {"cases": CASES, "dtypes": {name: dtype for name, (_, dtype) in results.items()},
            "mindspore": mindspore.__version__}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    with tempfile.NamedTemporaryFile(dir=OUT.parent, suffix=".npz", delete=False) as handle:
        np.savez_compressed(handle, **arrays)
    os.chmod(handle.name, 0o644)
    os.replace(handle.name, OUT)
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
