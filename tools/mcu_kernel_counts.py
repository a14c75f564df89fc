"""Instructions per kernel of a zoo model's Cortex-M bundle under qemu-system-arm, or of an aarch64
bundle under qemu-aarch64.

Cortex-M: for QEMUs without TCG plugins (Debian's 7.2), ``-singlestep -d nochain,exec`` logs one "Trace"
line per executed instruction with its address, which is mapped to the enclosing symbol of model.elf
(arm-none-eabi-nm). aarch64: the counting plugin of tools/bench_mcu.py with ``profile=1`` counts each
address (millions of instructions a second instead of a log line each), mapped the same way with
aarch64-linux-gnu-nm; the MACs of the network are printed beside them. The whole run is counted,
start-up and file I/O included.

Usage:
    python tools/mcu_kernel_counts.py ds_cnn --target cortex-m4 [--top 12]
    python tools/mcu_kernel_counts.py mobilenetv2 --target aarch64 --size 224
"""
from __future__ import annotations

import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import aotnn  # noqa: E402
from schedules.embedded_mcu import qemu_command  # noqa: E402

SHAPES = {"lenet5": (1, 1, 32, 32), "ds_cnn": (1, 1, 49, 10), "resnet8": (1, 3, 32, 32)}
AARCH64_MODELS = ("resnet18", "mobilenetv2")
BOARDS = {"cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500", "cortex-m55": "mps3-an547"}
_PC_LINE = re.compile(rb"insn_count pc 0x([0-9a-f]+) (\d+)")


def code_symbols(elf: str, nm: str = "arm-none-eabi-nm") -> tuple[list[int], list[str]]:
    """Start addresses (sorted, thumb bit cleared) and names of the image's code symbols."""
    listing = subprocess.run([nm, "-n", elf], check=True, capture_output=True, text=True).stdout
    found = [(int(p[0], 16) & ~1, p[2]) for p in (line.split() for line in listing.splitlines())
             if len(p) == 3 and p[1] in "tTwW"]
    return [a for a, _ in found], [n for _, n in found]


def count_per_symbol(bundle: str, board: str) -> collections.Counter:
    """Executed instructions per code symbol over one run of the bundle's model.elf."""
    addresses, names = code_symbols(os.path.join(bundle, "model.elf"))
    command = qemu_command({}, board)
    command[1:1] = ["-singlestep", "-d", "nochain,exec", "-D", "/dev/stderr"]
    counts: collections.Counter = collections.Counter()
    with subprocess.Popen(command, cwd=bundle, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as qemu:
        for line in qemu.stderr:
            if line.startswith(b"Trace"):  # Trace 0: 0x... [00000000/000075e4/...]
                pc = int(line.split(b"[", 1)[1].split(b"/")[1], 16)
                index = bisect.bisect_right(addresses, pc) - 1
                counts[names[index] if index >= 0 else "?"] += 1
    if qemu.returncode != 0:
        raise RuntimeError(f"qemu-system-arm exited with {qemu.returncode}")
    return counts


def count_per_symbol_aarch64(bundle: str, plugin: str) -> collections.Counter:
    """Executed instructions per code symbol over one run of the aarch64 bundle's ``model`` (qemu-aarch64
    with the counting plugin's per-address profile)."""
    addresses, names = code_symbols(os.path.join(bundle, "model"), "aarch64-linux-gnu-nm")
    done = subprocess.run(["qemu-aarch64", "-d", "plugin", "-plugin", f"{plugin},profile=1", "./model", "input0.bin"],
                          cwd=bundle, capture_output=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"qemu-aarch64 exited with {done.returncode}: {done.stderr[-2000:]!r}")
    counts: collections.Counter = collections.Counter()
    for address, count in _PC_LINE.findall(done.stdout + done.stderr):
        index = bisect.bisect_right(addresses, int(address, 16)) - 1
        counts[names[index] if index >= 0 else "?"] += int(count)
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(SHAPES) + list(AARCH64_MODELS))
    parser.add_argument("--target", default="cortex-m4", choices=sorted(BOARDS) + ["aarch64"])
    parser.add_argument("--size", type=int, default=224, help="image side of an aarch64 model's input")
    parser.add_argument("--top", type=int, default=12, help="symbols to print")
    args = parser.parse_args(argv)
    aarch64 = args.target == "aarch64"
    if aarch64 != (args.model in AARCH64_MODELS):
        parser.error(f"{args.model} is built for {'aarch64' if args.model in AARCH64_MODELS else 'a Cortex-M CPU'}, "
                     f"not {args.target}")
    aotnn.set_seed(1)
    net = getattr(aotnn.models, args.model)()
    shape = (1, 3, args.size, args.size) if aarch64 else SHAPES[args.model]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = aotnn.export(net, aotnn.Tensor(x), file_name=os.path.join(tmp, args.model), target=args.target)
        subprocess.run(["make", "-s", "-j2"], cwd=bundle, check=True, capture_output=True)
        x.tofile(os.path.join(bundle, "input0.bin"))
        if aarch64:
            from bench_mcu import build_plugin, network_macs
            counts = count_per_symbol_aarch64(bundle, build_plugin(tmp))
            macs = network_macs(net, x)
        else:
            counts = count_per_symbol(bundle, BOARDS[args.target])
    print(f"{args.model} on {args.target}: {sum(counts.values())} instructions per run")
    if aarch64:
        print(f"{macs} MACs: {sum(counts.values()) / macs:.3f} instructions per MAC over the whole run")
    for name, count in counts.most_common(args.top):
        print(f"{count:>10}  {name}")


if __name__ == "__main__":
    main()
