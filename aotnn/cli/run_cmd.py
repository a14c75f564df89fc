"""``aotnn run``: run an artifact (or a bundle, built with its compiler and run natively or under
qemu-user) on .npy inputs."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

import click
import numpy as np

from .app import main, one_line_errors, progress

_QEMU = {"aarch64": "qemu-aarch64", "armv7a": "qemu-arm"}


def _load_inputs(paths, specs) -> list[np.ndarray]:
    arrays = []
    for path in paths:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"--input: no such file {path!r}")
        arrays.append(np.load(path, allow_pickle=False))
    if specs is not None and len(arrays) != len(specs):
        names = ", ".join(s["name"] for s in specs)
        raise ValueError(f"--input: the artifact takes {len(specs)} inputs ({names}), got {len(arrays)}")
    return arrays


def _runner(target: dict) -> list[str]:
    """How to start a bundle's binary built for ``target`` on this machine."""
    import schedules
    if schedules.target.is_host(target):
        return []
    if schedules.target.is_microcontroller(target):
        if shutil.which("qemu-system-arm") is None:
            raise RuntimeError("this bundle is for a microcontroller: flash model.elf (make) to the board, or "
                               "install qemu-system-arm (Debian: apt install qemu-system-arm) to run it here")
        return schedules.embedded_mcu.qemu_command(target)
    arch = str(target.get("mtriple", "")).split("-")[0]
    qemu = _QEMU.get(arch)
    if qemu is None or shutil.which(qemu) is None:
        raise RuntimeError(f"this bundle is built for {target.get('mtriple')}: copy it to the board and run "
                           f"'make && ./model', or install qemu-user (Debian: apt install qemu-user) to run it here")
    return [qemu]


def _run_bundle(path: str, arrays: list[np.ndarray], repeat: int) -> tuple[list[np.ndarray], list[float]]:
    """Build the bundle with its Makefile in a scratch copy, run the example binary on raw inputs."""
    from aotnn_runtime.manifest import read_manifest

    manifest = read_manifest(path)
    entry = next(iter(manifest["entries"].values()))
    runner = _runner(manifest["target"])
    bare_metal = "-kernel" in runner  # a Cortex-M image: reads input<i>.bin from its folder (semihosting)
    updates = entry.get("param_updates", [])
    if bare_metal and updates:
        raise ValueError(f"{path}: a training-step bundle for a microcontroller trains on the batches stored "
                         "in its train_input<i>.bin: write them, run make and then the board (losses.bin, "
                         "state<i>.bin come back); `aotnn run` runs inference bundles only")
    for i, (array, spec) in enumerate(zip(arrays, entry["inputs"])):
        if list(array.shape) != spec["shape"] or str(array.dtype) != spec["dtype"]:
            raise ValueError(f"--input {i} ({spec['name']}): expected {spec['dtype']}{spec['shape']}, "
                             f"got {array.dtype}{list(array.shape)}")
    with tempfile.TemporaryDirectory(prefix="aotnn-run-") as scratch:
        work = os.path.join(scratch, "bundle")
        shutil.copytree(path, work)
        with progress("building the bundle (make)"):
            built = subprocess.run(["make", "-s", "model.elf" if bare_metal else "model"], cwd=work,
                                   capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"make failed: {(built.stderr or built.stdout).strip().splitlines()[-1:]}")
        names = []
        for i, array in enumerate(arrays):
            name = os.path.join(work if bare_metal else scratch, f"input{i}.bin")
            np.ascontiguousarray(array).tofile(name)
            names.append(name)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            command = runner if bare_metal else runner + ["./model"] + names
            ran = subprocess.run(command, cwd=work, capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            if ran.returncode != 0:
                raise RuntimeError(f"the model binary failed ({ran.returncode}): {ran.stderr.strip()}")
        outputs = [np.fromfile(os.path.join(work, f"output{i}.bin"), dtype=spec["dtype"]).reshape(spec["shape"])
                   for i, spec in enumerate(entry["outputs"][:len(entry["outputs"]) - len(updates)])]
    return outputs, times


def _profile(module, arrays: list[np.ndarray], repeat: int, call_ms: float, table: bool, trace_path) -> None:
    """Time each kernel over ``repeat`` calls; print the table and/or write the Chrome trace."""
    from aotnn_runtime.profile import format_table, write_trace

    records = module.profile(*arrays, repeat=repeat)
    if table:
        click.echo(f"per kernel, median of {repeat} call(s):")
        click.echo(format_table(records, call_ms))
    if trace_path:
        write_trace(trace_path, records, os.path.basename(os.path.normpath(module.path)))
        click.echo(f"trace: {trace_path} ({len(records) * repeat} kernel calls)")


@main.command(name="run")
@click.argument("artifact", type=click.Path())
@click.option("--input", "inputs", multiple=True, required=True, type=click.Path(),
              help=".npy file per input, in order.")
@click.option("--output", "outputs", multiple=True, type=click.Path(),
              help="Write outputs to .npy files, one option per output, in order.")
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1),
              help="Run N times and report the median.")
@click.option("--profile", is_flag=True,
              help="Also time each kernel over --repeat calls and print a table (time, share, FLOPs, GFLOP/s).")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False),
              help="Write each kernel call of --repeat calls as a Chrome trace (chrome://tracing, Perfetto).")
@one_line_errors
def run_command(artifact: str, inputs, outputs, repeat: int, profile: bool, trace_path) -> None:
    """Run ARTIFACT on .npy inputs and print the outputs' shapes and the latency.

    A host artifact runs in aotnn_runtime. A C bundle is built with its Makefile in a scratch copy
    and its example binary is run (under qemu-user for aarch64 and armv7a bundles, on
    qemu-system-arm's MPS boards for Cortex-M bundles; latency then includes process start-up).

    \b
    Examples:
      aotnn run lenet.aot --input x.npy --output y.npy --repeat 20
      aotnn run lenet-aarch64.aot --input x.npy --output y.npy
      aotnn run lenet.aot --input x.npy --repeat 50 --profile --trace lenet.trace.json
    """
    import aotnn_runtime
    from aotnn_runtime.manifest import read_manifest

    manifest = read_manifest(artifact) if os.path.isdir(artifact) else None
    if manifest is not None and manifest.get("library") is None:
        if profile or trace_path:
            raise ValueError("--profile/--trace: a C bundle runs as its own program; profile the host artifact")
        results, times = _run_bundle(artifact, _load_inputs(inputs, None), repeat)
    else:
        module = aotnn_runtime.load(artifact)
        arrays = _load_inputs(inputs, None)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            results = module.run(*arrays)
            times.append(time.perf_counter() - start)
    for i, result in enumerate(results):
        click.echo(f"output {i}: shape {tuple(result.shape)} dtype {result.dtype}")
    click.echo(f"latency: median {np.median(times) * 1e3:.3f} ms over {repeat} run(s)")
    if profile or trace_path:
        _profile(module, arrays, repeat, float(np.median(times)) * 1e3, profile, trace_path)
    if len(outputs) > len(results):
        raise ValueError(f"--output: {len(outputs)} files for {len(results)} outputs")
    for path, result in zip(outputs, results):
        np.save(path, result)
