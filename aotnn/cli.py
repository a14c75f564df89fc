"""The ``aotnn`` command line: compile a model for a device, run an artifact, inspect one."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import traceback

import click
import numpy as np

_DEBUG = {"on": False}


def _fail(err: BaseException) -> None:
    if _DEBUG["on"]:
        traceback.print_exception(err)
    raise click.ClickException(f"{type(err).__name__}: {err}")


def load_model(spec: str):
    """A Cell from ``file.py:Name`` or ``package.module:name`` (class or factory, called without arguments)."""
    if ":" not in spec:
        raise click.BadParameter(f"expected FILE.py:NAME or MODULE:NAME, got {spec!r}", param_hint="MODEL")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise click.BadParameter(f"no such file: {where}", param_hint="MODEL")
        module_spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(where))[0], where)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, name):
        raise click.BadParameter(f"{where} has no attribute {name!r}", param_hint="MODEL")
    return getattr(module, name)()


def parse_input(text: str) -> tuple[str, tuple[int, ...], str]:
    """``NAME:1,3,224,224[:float32]`` -> (name, shape, dtype)."""
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise click.BadParameter(f"expected NAME:D0,D1,...[:DTYPE], got {text!r}", param_hint="--input")
    try:
        shape = tuple(int(d) for d in parts[1].split(","))
    except ValueError:
        raise click.BadParameter(f"shape must be comma-separated ints, got {parts[1]!r}", param_hint="--input") from None
    return parts[0], shape, parts[2] if len(parts) == 3 else "float32"


@click.group()
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def main(debug: bool) -> None:
    """aotnn: compile MindSpore-style networks ahead of time with TVM, and run them.

    \b
    Examples:
      aotnn compile aotnn.models:lenet5 --input x:1,1,32,32 -o lenet.aot
      aotnn run lenet.aot --input x.npy --output y.npy
      aotnn inspect lenet.aot
    """
    _DEBUG["on"] = debug


@main.command()
@click.argument("model")
@click.option("--input", "inputs", multiple=True, required=True, help="NAME:D0,D1,...[:DTYPE], once per input.")
@click.option("--target", default="x86", show_default=True, help="Target: x86.")
@click.option("--ckpt", type=click.Path(exists=True, dir_okay=False), help="MindSpore .ckpt weights to load.")
@click.option("-o", "--output", required=True, help="Artifact directory to write (OUT.aot).")
def compile(model: str, inputs, target: str, ckpt, output: str) -> None:  # noqa: A001
    """Compile MODEL (file.py:Name or aotnn.models:name) into an artifact.

    \b
    Example:
      aotnn compile aotnn.models:resnet18 --input x:1,3,224,224 -o resnet18.aot
    """
    import aotnn
    try:
        net = load_model(model)
        if ckpt:
            aotnn.load_checkpoint(ckpt, net=net)
        examples = [aotnn.Tensor(np.zeros(shape, dtype)) for _, shape, dtype in map(parse_input, inputs)]
        click.echo(f"compiling {model} for {target} ...", err=True)
        start = time.perf_counter()
        path = aotnn.export(net, *examples, file_name=output, file_format="AOT", target=target)
        click.echo(f"wrote {path} in {time.perf_counter() - start:.1f} s")
    except click.ClickException:
        raise
    except Exception as err:  # one clear line; --debug shows the trace
        _fail(err)


@main.command()
@click.argument("artifact", type=click.Path())
@click.option("--input", "inputs", multiple=True, required=True, type=click.Path(), help=".npy file per input, in order.")
@click.option("--output", "output", type=click.Path(), help="Write the first output to this .npy file.")
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1), help="Run N times and report the median.")
def run(artifact: str, inputs, output, repeat: int) -> None:
    """Run ARTIFACT on .npy inputs.

    \b
    Example:
      aotnn run lenet.aot --input x.npy --output y.npy --repeat 20
    """
    import aotnn_runtime
    try:
        module = aotnn_runtime.load(artifact)
        arrays = []
        for path in inputs:
            if not os.path.isfile(path):
                raise FileNotFoundError(f"--input: no such file {path!r}")
            arrays.append(np.load(path, allow_pickle=False))
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            results = module.run(*arrays)
            times.append(time.perf_counter() - start)
        for i, result in enumerate(results):
            click.echo(f"output {i}: shape {result.shape} dtype {result.dtype}")
        click.echo(f"latency: median {np.median(times) * 1e3:.3f} ms over {repeat} run(s)")
        if output:
            np.save(output, results[0])
    except Exception as err:
        _fail(err)


@main.command()
@click.argument("artifact", type=click.Path())
def inspect(artifact: str) -> None:
    """Show ARTIFACT's entry points, kernels, memory plan, target and sizes."""
    from aotnn_runtime.manifest import read_manifest
    try:
        manifest = read_manifest(artifact)
    except Exception as err:
        _fail(err)
    click.echo(f"target: {manifest['target']}")
    for name, info in manifest["files"].items():
        click.echo(f"file {name}: {info['size']} bytes")
    for name, entry in manifest["entries"].items():
        click.echo(f"entry {name}:")
        for spec in entry["inputs"]:
            click.echo(f"  input  {spec['name']}: {spec['dtype']}{spec['shape']}")
        for i, spec in enumerate(entry["outputs"]):
            click.echo(f"  output {i}: {spec['dtype']}{spec['shape']}")
        click.echo(f"  parameters: {len(entry['params'])}")
        click.echo(f"  kernels: {len(entry['steps'])} calls of {len({s['kernel'] for s in entry['steps']})} kernels")
        click.echo(f"  arena: {entry['arena_bytes']} bytes (intermediates without reuse: {entry['unplanned_bytes']} bytes)")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
