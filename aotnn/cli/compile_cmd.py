"""``aotnn compile``: MODEL -> an artifact for the host, or a C bundle for a cross target."""
from __future__ import annotations

import os
import time

import click

from .app import human_bytes, main, one_line_errors, progress
from .bundle_memory import bundle_memory, over_budget, parse_size
from .models import default_output, example_inputs, load_model, load_weights

TARGET_HELP = ("Target: x86 (this host); a C bundle to build for the board: aarch64, armv7a (32-bit ARM Linux), "
               "cortex-m4, cortex-m7, cortex-m55 (bare metal); cuda, vulkan.")


def directory_size(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files)


FORCE_HELP = "Replace an existing output (only an aotnn artifact, or a file for ONNX; never another directory)."


def check_output_free(path: str, force: bool) -> None:
    """Refuse an existing output path unless ``--force`` (which still replaces only what aotnn wrote).

    Raises:
        FileExistsError: ``path`` exists and ``force`` is off.
    """
    if os.path.lexists(path) and not force:
        raise FileExistsError(f"output: {path!r} already exists; pass --force to replace it")


def fallback_report(path: str) -> str | None:
    """``"N of M kernels on the generic fallback: ..."`` for a host artifact at ``path``, None when
    every kernel has an op-class schedule (or ``path`` is not a host artifact)."""
    import json

    from aotnn_runtime.manifest import MANIFEST_FILE
    from schedules.build import KERNEL_RULES_KEY
    from schedules.defaults.coverage import fallback_line

    manifest_path = os.path.join(path, MANIFEST_FILE)
    if not os.path.isfile(manifest_path):
        return None
    with open(manifest_path, encoding="utf-8") as stream:
        rules = json.load(stream).get("metadata", {}).get(KERNEL_RULES_KEY)
    return fallback_line(rules) if isinstance(rules, dict) else None


def compile_model(model: str, inputs: tuple[str, ...], target: str, ckpt: str | None, output: str | None,
                  bundle: bool, tuning_db: str | None = None, force: bool = False) -> str:
    """Load MODEL, its weights and input signature, and write the artifact or bundle at exactly
    ``output`` (default NAME.aot); returns its path."""
    import schedules
    from aotnn.jit.export import export_to_path
    from schedules.output_dir import check_output

    target_dict = schedules.resolve(target)
    cross = not schedules.target.is_host(target_dict) and target_dict.get("kind") == "llvm"
    as_bundle = bundle or cross
    output = output or default_output(model, f"-{target}.aot" if cross else ".aot")
    check_output_free(output, force)
    check_output(output)
    with progress(f"loading {model}"):
        net = load_model(model, inputs)
        load_weights(net, ckpt)
        examples = example_inputs(net, model, inputs)
    with progress(f"compiling {model} for {target}{' (C bundle)' if as_bundle else ''}"):
        path = export_to_path(net, *examples, path=output, file_format="BUNDLE" if as_bundle else "AOT",
                              target=target_dict, tuning_db=tuning_db)
    return path


def check_memory_budget(path: str, max_ram: int | None, max_flash: int | None) -> None:
    """Build the bundle at ``path`` with its Makefile and compare its image with the budget.

    Raises:
        ValueError: ``path`` is not a C bundle, or its RAM/flash exceeds the budget (the message
            names the parts and the largest consumers; the bundle stays for ``aotnn inspect``).
        RuntimeError: the bundle does not build.
    """
    import subprocess

    if not os.path.isfile(os.path.join(path, "Makefile")):
        raise ValueError("--max-ram/--max-flash: only C bundles (a cross target or --bundle) are measured; "
                         f"{path} is a host artifact")
    with progress(f"building {path} to measure it"):
        built = subprocess.run(["make", "-s"], cwd=path, capture_output=True, text=True)
    if built.returncode != 0:
        raise RuntimeError(f"make in {path} failed: {built.stderr.strip()[-400:]}")
    report = bundle_memory(path)
    problem = over_budget(report, max_ram, max_flash)
    if problem is not None:
        raise ValueError(f"{path}: {problem} (the bundle is kept: aotnn inspect {path})")
    click.echo(f"fits: flash {report.flash_bytes:,d} bytes, RAM {report.ram_bytes:,d} bytes")


@main.command(name="compile")
@click.argument("model")
@click.option("--input", "inputs", multiple=True, metavar="NAME:D0,D1,...[:DTYPE]",
              help="Input name, shape and dtype (default float32), once per input. ONNX models: "
                   "fixes dynamic dimensions (default: the shapes the model declares).")
@click.option("--target", default="x86", show_default=True, help=TARGET_HELP)
@click.option("--ckpt", type=click.Path(exists=True, dir_okay=False), help="MindSpore .ckpt weights to load.")
@click.option("--tuning-db", type=click.Path(exists=True, file_okay=False),
              help="Use the kernels tuned by `aotnn tune` into this database where they beat the defaults.")
@click.option("--bundle", is_flag=True, help="Write a C bundle (embedded runtime) even for the host target.")
@click.option("-o", "--output",
              help="Where to write the artifact, exactly this path "
                   "(default: NAME.aot, NAME-TARGET.aot for cross targets).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@click.option("--max-ram", metavar="BYTES[K|M]",
              help="Build the bundle (make) and fail when its RAM (data, bss, arena, scratch, stack) exceeds this.")
@click.option("--max-flash", metavar="BYTES[K|M]",
              help="Build the bundle (make) and fail when its flash (code, read-only data, weights) exceeds this.")
@one_line_errors
def compile_command(model: str, inputs, target: str, ckpt, tuning_db, bundle: bool, output, force: bool,
                    max_ram: str | None, max_flash: str | None) -> None:
    """Compile MODEL (FILE.py:NAME, MODULE:NAME or FILE.onnx) ahead of time.

    For the host (x86) the result is an artifact that `aotnn run` and aotnn_runtime load. For a
    cross target (aarch64, armv7a, cortex-m4/m7/m55) it is a build-ready C bundle: kernel objects, the generated
    executor on one static arena, runtime/c, weights, a Makefile and an example main.c.

    \b
    Examples:
      aotnn compile aotnn.models:resnet18 --input x:1,3,224,224 -o resnet18.aot
      aotnn compile net.py:Net --input x:8,16 --ckpt net.ckpt -o net.aot
      aotnn compile model.onnx --input input:1,3,224,224 -o model.aot
      aotnn compile aotnn.models:lenet5 --target aarch64 -o lenet-arm.aot   # then: make -C lenet-arm.aot
      aotnn compile aotnn.models:ds_cnn --input x:1,1,49,10 --target cortex-m4 -o kws-m4.aot
    """
    ram_limit = parse_size(max_ram, "--max-ram") if max_ram is not None else None
    flash_limit = parse_size(max_flash, "--max-flash") if max_flash is not None else None
    start = time.perf_counter()
    path = compile_model(model, inputs, target, ckpt, output, bundle, tuning_db, force)
    click.echo(f"wrote {path} ({human_bytes(directory_size(path))}) in {time.perf_counter() - start:.1f} s")
    if ram_limit is not None or flash_limit is not None:
        check_memory_budget(path, ram_limit, flash_limit)
    report = fallback_report(path)
    if report is not None:
        click.echo(report)
