"""Helpers for the default-schedule tests: which rule scheduled each kernel, and output checks.

(Imported by the test modules next to it; pytest puts this directory on sys.path.)
"""
from __future__ import annotations

import re

import numpy as np
import torch

from aotnn.jit.compiled import capture_function
from schedules import pipeline, target as targets
from schedules.build import _kernel_module
import schedules.defaults as defaults


def _host_kernels(fn, specs):
    """(the kernel module of ``fn`` for the host, the host's TVM target)."""
    mod, _, _, _ = capture_function(fn, specs)
    target = targets.to_tvm(targets.resolve(None))
    return _kernel_module(pipeline.lower_to_kernels(mod, target)), target


def rules_used(fn, specs) -> dict[str, str | None]:
    """{kernel name: the default rule that scheduled it (None: left as legalized)} for ``fn``."""
    kernels, target = _host_kernels(fn, specs)
    cpu = defaults.cpu_info(target)
    return {gv.name_hint: defaults.schedule_with_rule(func, cpu, target)[1] for gv, func in kernels.functions.items()}


def lowered_kernels(fn, specs) -> dict[str, str]:
    """{kernel name: its TIR after the default schedule and TVM's lowering passes} for ``fn``."""
    import tvm
    kernels, target = _host_kernels(fn, specs)
    scheduled = defaults.apply_default_schedules(kernels, target)
    bound = tvm.tirx.transform.BindTarget(target.with_host(target))(scheduled)
    passes, _, _ = tvm.tirx.get_default_tir_pipeline(target)
    lowered = passes(bound)
    return {gv.name_hint: func.script() for gv, func in lowered.functions.items()}


def scalarized_loops(lowered_text: str) -> list[str]:
    """The loops TVM's vectorizer had to run one lane at a time (it names them ``..._s``)."""
    return re.findall(r"for (\w+_s) in range", lowered_text)


def assert_close(actual, expected, tol: float = 1e-4) -> None:
    """Largest difference within ``tol`` of the largest magnitude of ``expected``."""
    actual = actual.asnumpy() if hasattr(actual, "asnumpy") else np.asarray(actual)
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    scale = max(float(np.abs(expected).max()), 1e-6)
    err = float(np.abs(actual.astype(np.float64) - expected).max())
    assert err <= tol * scale, f"max error {err:.3g} > {tol} x {scale:.3g}"


def randomize(cell, seed: int = 0, scale: float = 0.5):
    """Random values for every parameter (positive for variances)."""
    rng = np.random.default_rng(seed)
    for name, param in cell.parameters_and_names():
        value = rng.standard_normal(param.shape) * scale
        if "variance" in name:
            value = np.abs(value) + 0.5
        param.set_data(value.astype(param.asnumpy().dtype))
    return cell


def t(array) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array))


def torch_params(cell) -> dict[str, torch.Tensor]:
    """The cell's parameters by name, as torch tensors."""
    return {name: t(param.asnumpy()) for name, param in cell.parameters_and_names()}


def batch_norm(value: torch.Tensor, params: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    """Inference batch norm (MindSpore's eps 1e-5) with the parameters of the BatchNorm2d ``name``."""
    return torch.nn.functional.batch_norm(value, params[f"{name}.moving_mean"], params[f"{name}.moving_variance"],
                                          params[f"{name}.gamma"], params[f"{name}.beta"], False, 0.0, 1e-5)
