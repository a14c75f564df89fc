"""Turning a MODEL argument (``file.py:Name``, ``package.module:name``, ``model.onnx``) and ``--input``
options into a Cell and example inputs."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

import click
import numpy as np

# Input signatures of the zoo models, used when no --input is given.
ZOO_INPUTS = {"lenet5": [("x", (1, 1, 32, 32), "float32")], "LeNet5": [("x", (1, 1, 32, 32), "float32")],
              "resnet18": [("x", (1, 3, 224, 224), "float32")], "mobilenetv2": [("x", (1, 3, 224, 224), "float32")],
              "bert_encoder": [("input_ids", (1, 128), "int64")], "lstm_model": [("x", (32, 1, 256), "float32")]}


def parse_input(text: str) -> tuple[str, tuple[int, ...], str]:
    """``NAME:1,3,224,224[:float32]`` -> (name, shape, dtype)."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise click.BadParameter(f"expected NAME:D0,D1,...[:DTYPE], got {text!r}", param_hint="--input")
    try:
        shape = tuple(int(d) for d in parts[1].split(",")) if parts[1] else ()
    except ValueError:
        raise click.BadParameter(f"shape must be comma-separated ints, got {parts[1]!r}",
                                 param_hint="--input") from None
    if any(d <= 0 for d in shape):
        raise click.BadParameter(f"dimensions must be positive, got {parts[1]!r}", param_hint="--input")
    dtype = parts[2] if len(parts) == 3 else "float32"
    try:
        np.dtype(dtype)
    except TypeError:
        raise click.BadParameter(f"unknown dtype {dtype!r}", param_hint="--input") from None
    return parts[0], shape, dtype


def is_onnx(spec: str) -> bool:
    return spec.lower().endswith(".onnx")


def _load_python(spec: str):
    if ":" not in spec:
        raise click.BadParameter(f"expected FILE.py:NAME, MODULE:NAME or FILE.onnx, got {spec!r}", param_hint="MODEL")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise click.BadParameter(f"no such file: {where}", param_hint="MODEL")
        module_name = os.path.splitext(os.path.basename(where))[0]
        module_spec = importlib.util.spec_from_file_location(module_name, where)
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))  # the file's own imports
        try:
            module_spec.loader.exec_module(module)
        finally:
            sys.path.pop(0)
    else:
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as err:
            raise click.BadParameter(f"cannot import {where!r}: {err}", param_hint="MODEL") from None
    if not hasattr(module, name):
        raise click.BadParameter(f"{where} has no attribute {name!r}", param_hint="MODEL")
    return getattr(module, name)


def load_model(spec: str, inputs: tuple[str, ...] = ()) -> Any:
    """A Cell from ``file.py:Name`` / ``package.module:name`` (a Cell, or a class or factory called
    without arguments) or from an ``.onnx`` file (``--input`` shapes fix its dynamic dimensions)."""
    from aotnn.nn import Cell

    if is_onnx(spec):
        import aotnn
        if not os.path.isfile(spec):
            raise click.BadParameter(f"no such file: {spec}", param_hint="MODEL")
        shapes = {name: shape for name, shape, _ in map(parse_input, inputs)}
        return aotnn.load_onnx(spec, shape_dict=shapes or None)
    target = _load_python(spec)
    net = target if isinstance(target, Cell) else target()
    if not isinstance(net, Cell):
        raise click.BadParameter(f"{spec} gave a {type(net).__name__}, expected a Cell", param_hint="MODEL")
    return net


def example_inputs(net: Any, spec: str, inputs: tuple[str, ...]) -> list:
    """Zero tensors matching ``--input`` (or the ONNX model's / zoo model's own signature)."""
    import aotnn
    from aotnn.onnx import OnnxCell

    if isinstance(net, OnnxCell):
        graph = net.graph
        return [aotnn.Tensor(np.zeros(shape, dtype)) for shape, dtype in graph.input_specs]
    parsed = [parse_input(text) for text in inputs]
    if not parsed:
        name = spec.rsplit(":", 1)[-1]
        parsed = ZOO_INPUTS.get(name, [])
        if not parsed:
            raise click.UsageError(f"{spec} needs its input shapes: --input NAME:D0,D1,...[:DTYPE] per input")
    return [aotnn.Tensor(np.zeros(shape, dtype)) for _, shape, dtype in parsed]


def default_output(spec: str, suffix: str) -> str:
    base = os.path.splitext(os.path.basename(spec))[0] if is_onnx(spec) else spec.rsplit(":", 1)[-1]
    return base + suffix


def load_weights(net: Any, ckpt: str | None) -> None:
    """Load a MindSpore .ckpt into ``net`` (parameters matched by name), with a summary line."""
    if not ckpt:
        return
    import aotnn
    entries = aotnn.load_checkpoint(ckpt, net=net)
    names = list(net.parameters_dict())
    matched = [n for n in names if n in entries]
    if names and not matched:
        raise ValueError(f"--ckpt: none of the model's {len(names)} parameters (e.g. {names[0]!r}) is in {ckpt} "
                         f"(e.g. {next(iter(entries), None)!r})")
    click.echo(f"loaded {ckpt}: {len(matched)} of {len(names)} parameters", err=True)
