"""Instructions per inference, flash and RAM of the zoo's microcontroller models under qemu-system-arm, and
instructions per multiply-accumulate of aarch64 bundles under qemu-aarch64.

Instructions are counted by a QEMU TCG plugin (tools/qemu_plugins/insn_count.c, built here with the host
C compiler against QEMU's plugin API 1): it counts every executed guest instruction and records the
count each time a marked address runs. The bundle's example main is built to call ``aotnn_model_run``
twice; marks on ``aotnn_model_run`` and on the first call after it (writing the output) give the first
call (which runs the prepare steps once) and a steady-state inference. Outputs are compared with the
x86 artifact of the same network; multiply-accumulates are those of the convolutions and Dense layers
computed directly (so Winograd kernels do not lower the count). An int8 aarch64 bundle (``resnet18_int8``)
runs its convolutions on ``sdot`` when built with ``--aarch64-dotprod`` (Armv8.2), else on NEON's
``smull``/``sadalp`` (schedules/defaults/int8_neon.py); its output should equal the x86 int8 artifact's exactly.

Flash and RAM are read from the linked image (aotnn.cli.bundle_memory); RAM counts .data, .bss and the
stack the linker script reserves: the worst case computed when the bundle was built plus a margin
(schedules.mcu_stack), not a measured stack high-water mark.

Usage:
    python tools/bench_mcu.py                                   # LeNet5, DS-CNN, ResNet-8 on M4 and M55
    python tools/bench_mcu.py --models lenet5 --targets cortex-m4
    python tools/bench_mcu.py --models ds_cnn_int8 --targets cortex-m4  # post-training quantized to int8
    python tools/bench_mcu.py --models ds_cnn_int8 --targets cortex-m55 --per-kernel  # and each kernel's share
    python tools/bench_mcu.py --models none --aarch64 resnet18,mobilenetv2 --aarch64-size 224
    python tools/bench_mcu.py --models none --aarch64 resnet18_int8 --aarch64-dotprod  # sdot (Armv8.2)
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_SOURCE = ROOT / "tools" / "qemu_plugins" / "insn_count.c"
MCU_MODELS = {"lenet5": (1, 1, 32, 32), "ds_cnn": (1, 1, 49, 10), "resnet8": (1, 3, 32, 32),
              "ds_cnn_int8": (1, 1, 49, 10)}
INT8_SUFFIX = "_int8"  # the float model post-training quantized on seeded random calibration batches
AARCH64_MODELS = ("resnet18", "mobilenetv2", "resnet18_int8")
# aarch64 bundles: plain NEON, or with Armv8.2's dot-product instructions (sdot; qemu-aarch64 runs them)
AARCH64_TARGETS = {"aarch64": ["+neon"], "aarch64+dotprod": ["+neon", "+dotprod"]}
BOARDS = {"cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500", "cortex-m55": "mps3-an547"}
# the example mains call one of these (bare-metal boards run on the caller's buffers)
RUN_FUNCTIONS = ("aotnn_model_run_in_place", "aotnn_model_run")
_MARK_LINE = re.compile(r"insn_count mark 0x([0-9a-f]+) (\d+)")
_TOTAL_LINE = re.compile(r"insn_count total (\d+)")


@dataclass
class Result:
    model: str
    target: str
    macs: int
    first_call_insns: int
    insns_per_inference: int
    insns_per_mac: float
    flash_bytes: int
    ram_bytes: int
    max_error: float


def build_plugin(workdir: str) -> str:
    """Compile the instruction-counting plugin into ``workdir``; returns the .so path."""
    path = os.path.join(workdir, "insn_count.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-Wall", "-o", path, str(PLUGIN_SOURCE)], check=True)
    return path


def symbol_address(nm: str, image: str, name: str) -> int:
    """The address of ``name`` in ``image`` (the Thumb bit cleared: QEMU reports even addresses)."""
    listing = subprocess.run([nm, image], check=True, capture_output=True, text=True).stdout
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    raise KeyError(f"symbol {name!r} not in {image}")


def counted_run(command: Sequence[str], cwd: str, plugin: str, marks: Sequence[int],
                timeout: float = 3600) -> tuple[int, list[tuple[int, int]]]:
    """Run a QEMU ``command`` with the counting plugin; returns (total, [(mark address, count)])."""
    args = ",".join([plugin] + [f"mark={address:x}" for address in marks])
    done = subprocess.run([command[0], "-d", "plugin", "-plugin", args, *command[1:]], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    log = done.stdout + done.stderr
    total = _TOTAL_LINE.search(log)
    if done.returncode != 0 or total is None:
        raise RuntimeError(f"{' '.join(command)} failed (status {done.returncode}): {log[-2000:]}")
    return int(total.group(1)), [(int(a, 16), int(n)) for a, n in _MARK_LINE.findall(log)]


def kernel_symbols(nm: str, image: str) -> dict[int, str]:
    """Address -> name of the bundle's kernels (their exported ``__tvm_ffi_`` entry points)."""
    listing = subprocess.run([nm, image], check=True, capture_output=True, text=True).stdout
    prefix = "__tvm_ffi_"
    return {int(parts[0], 16) & ~1: parts[2][len(prefix):] for parts in map(str.split, listing.splitlines())
            if len(parts) == 3 and parts[2].startswith(prefix)}


def kernel_profile(hits: list[tuple[int, int]], kernels: dict[int, str], start: int, stop: int) -> dict[str, int]:
    """Instructions per kernel between the counts ``start`` and ``stop`` (one inference): from each kernel's
    entry to the next mark (its call's glue included), summed over its calls."""
    ordered = sorted((count, address) for address, count in hits if start <= count <= stop)
    profile: dict[str, int] = {}
    for (count, address), (following, _) in zip(ordered, ordered[1:]):
        if address in kernels:
            profile[kernels[address]] = profile.get(kernels[address], 0) + following - count
    return profile


def call_counts(hits: list[tuple[int, int]], run_address: int, end_address: int) -> tuple[int, int]:
    """(first call, second call) instructions from the marks of two ``aotnn_model_run`` calls and the
    first instruction after them."""
    runs = [count for address, count in hits if address == run_address]
    ends = [count for address, count in hits if address == end_address and runs and count > runs[-1]]
    if len(runs) != 2 or not ends:
        raise RuntimeError(f"expected two aotnn_model_run calls and then the output; marks were {hits[:8]}")
    return runs[1] - runs[0], ends[0] - runs[1]


def run_twice(bundle: str) -> str:
    """Make the bundle's example main call the model twice (the second call is the steady state);
    returns the name of the function it calls."""
    main_c = Path(bundle, "main.c")
    text = main_c.read_text()
    for function in RUN_FUNCTIONS:
        call = f"{function}(inputs, outputs) != AOTNN_OK"
        if call in text:
            main_c.write_text(text.replace(call, f"({call} || {call})", 1))
            return function
    raise RuntimeError(f"{main_c}: no call of {' or '.join(RUN_FUNCTIONS)} was found")


def network_macs(net, x: np.ndarray) -> int:
    """Multiply-accumulates of the network's convolutions and Dense layers as direct products
    (output elements x inputs per output), whatever algorithm the kernels use (Winograd does fewer)."""
    import aotnn
    from aotnn import nn

    total = [0]

    def count(cell, inputs, output) -> None:
        outputs = int(np.prod(output.shape))
        if isinstance(cell, nn.Conv2d):
            kernel = cell.kernel_size
            total[0] += outputs * (cell.in_channels // cell.group) * kernel[0] * kernel[1]
        else:
            total[0] += outputs * cell.in_channels

    handles = [cell.register_forward_hook(count) for _, cell in net.cells_and_names()
               if isinstance(cell, (nn.Conv2d, nn.Dense))]
    net(aotnn.Tensor(x))
    for handle in handles:
        handle.remove()
    return total[0]


def reference(net, x: np.ndarray, workdir: str, float_net=None) -> tuple[np.ndarray, int]:
    """The x86 artifact's output and the multiply-accumulates of ``float_net`` (default: ``net``)."""
    import aotnn
    import aotnn_runtime

    artifact = aotnn.export(net, aotnn.Tensor(x), file_name=os.path.join(workdir, "x86"))
    (expected,) = aotnn_runtime.load(artifact).run(x)
    return np.asarray(expected).ravel(), network_macs(net if float_net is None else float_net, x)


def scaled_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """max |actual - expected| / max |expected| (inf on a size mismatch)."""
    if actual.size != expected.size:
        return float("inf")
    return float(np.abs(actual - expected).max() / max(float(np.abs(expected).max()), 1e-30))


def make_net(name: str, seed: int, shape: tuple[int, ...]):
    """(the network to build, the float network its multiply-accumulates are counted on): a zoo model, or
    with the ``_int8`` suffix that model quantized by ``PostTrainingQuantization`` (min/max observers)
    on two seeded batches of 8 standard-normal inputs."""
    import aotnn

    aotnn.set_seed(seed)
    quantized = name.endswith(INT8_SUFFIX)
    net = getattr(aotnn.models, name[:-len(INT8_SUFFIX)] if quantized else name)()
    if not quantized:
        return net, net
    from aotnn.compression.quant import PostTrainingQuantization

    rng = np.random.default_rng(seed)
    calibration = [rng.standard_normal((8, *shape[1:])).astype(np.float32) for _ in range(2)]
    return PostTrainingQuantization().quantize(net, calibration), net


def bench_bundle(name: str, shape: tuple[int, ...], target: str, plugin: str, workdir: str, seed: int = 0,
                 per_kernel: bool = False) -> Result:
    """Build ``name`` for ``target`` (a Cortex-M CPU or a key of AARCH64_TARGETS), run it twice under QEMU with the
    counting plugin and compare its output with x86."""
    import aotnn
    from aotnn.cli.bundle_memory import bundle_memory

    net, float_net = make_net(name, seed, shape)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected, macs = reference(net, x, os.path.join(workdir, f"{name}-{target}-ref"), float_net)
    build_target = ({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": AARCH64_TARGETS[target]}
                    if target in AARCH64_TARGETS else target)
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=os.path.join(workdir, f"{name}-{target}"),
                          target=build_target)
    run_function = run_twice(bundle)
    subprocess.run(["make", "-s", "-j2"], cwd=bundle, check=True, capture_output=True)
    x.tofile(os.path.join(bundle, "input0.bin"))
    if target in AARCH64_TARGETS:
        image, nm, end = os.path.join(bundle, "model"), "aarch64-linux-gnu-nm", "fopen"
        command = ["qemu-aarch64", "./model", "input0.bin"]
    else:
        image, nm, end = os.path.join(bundle, "model.elf"), "arm-none-eabi-nm", "aotnn_semihost_write_file"
        from schedules.embedded_mcu import qemu_command
        command = qemu_command({"mcpu": target}, BOARDS[target])
    run_at, end_at = symbol_address(nm, image, run_function), symbol_address(nm, image, end)
    kernels = kernel_symbols(nm, image) if per_kernel else {}
    _, hits = counted_run(command, bundle, plugin, [run_at, end_at, *kernels])
    first, steady = call_counts(hits, run_at, end_at)
    if per_kernel:
        second_run = [count for address, count in hits if address == run_at][1]
        profile = kernel_profile(hits, kernels, second_run, second_run + steady)
        for kernel, count in sorted(profile.items(), key=lambda item: -item[1]):
            print(f"  {count:>11,d}  {kernel}", flush=True)
    out = np.fromfile(os.path.join(bundle, "output0.bin"), dtype=np.float32)
    memory = bundle_memory(bundle)
    return Result(name, target, macs, first, steady, steady / max(macs, 1), memory.flash_bytes, memory.ram_bytes,
                  scaled_error(out, expected))


def format_rows(results: Sequence[Result]) -> str:
    lines = [f"{'model':<16} {'target':<15} {'MACs':>11} {'instr/inference':>15} {'first call':>12} "
             f"{'instr/MAC':>9} {'flash':>11} {'RAM':>11} {'max err':>9}"]
    for r in results:
        lines.append(f"{r.model:<16} {r.target:<15} {r.macs:>11,d} {r.insns_per_inference:>15,d} "
                     f"{r.first_call_insns:>12,d} {r.insns_per_mac:>9.3f} {r.flash_bytes:>11,d} "
                     f"{r.ram_bytes:>11,d} {r.max_error:>9.1e}")
    return "\n".join(lines)


def _names(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [] if text == "none" else [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"{what}: unknown {unknown}; expected names from {', '.join(known)} (comma-separated) or none")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MCU_MODELS), help="MCU models (comma-separated, or none)")
    parser.add_argument("--targets", default="cortex-m4,cortex-m55", help="Cortex-M CPUs (comma-separated)")
    parser.add_argument("--aarch64", default="", help=f"aarch64 bundles to count ({', '.join(AARCH64_MODELS)})")
    parser.add_argument("--aarch64-size", type=int, default=224, help="image side of the aarch64 models' input")
    parser.add_argument("--aarch64-dotprod", action="store_true",
                        help="build the aarch64 bundles for Armv8.2 with the dot-product extension (+dotprod: sdot)")
    parser.add_argument("--per-kernel", action="store_true",
                        help="also print each kernel's instructions in one inference (Cortex-M and aarch64)")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    models = _names(args.models, list(MCU_MODELS), "--models")
    targets = _names(args.targets, list(BOARDS), "--targets")
    big = _names(args.aarch64 or "none", AARCH64_MODELS, "--aarch64")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_mcu") as workdir:
        plugin = build_plugin(workdir)
        for name in models:
            for target in targets:
                results.append(bench_bundle(name, MCU_MODELS[name], target, plugin, workdir,
                                            per_kernel=args.per_kernel))
                print(format_rows(results[-1:]).splitlines()[1], flush=True)
        for name in big:
            shape = (1, 3, args.aarch64_size, args.aarch64_size)
            target = "aarch64+dotprod" if args.aarch64_dotprod else "aarch64"
            results.append(bench_bundle(name, shape, target, plugin, workdir, per_kernel=args.per_kernel))
            print(format_rows(results[-1:]).splitlines()[1], flush=True)
    print(format_rows(results))
    if args.json:
        sys.path.insert(0, str(ROOT / "tools"))
        from fixture_files import save_json  # noqa: E402
        save_json(args.json, [asdict(r) for r in results])
    return 0


if __name__ == "__main__":
    sys.exit(main())
