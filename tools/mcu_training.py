"""On-device training on Cortex-M under qemu-system-arm: LeNet5 with fc2/fc3 fine-tuned by Momentum
(the rest frozen), N steps on batches compiled into the image; prints the largest relative loss error
against the x86 artifact's steps and the image's flash and RAM (.data + .bss + the stack's
high-water mark, which the example measures).

    python tools/mcu_training.py [--steps 20] [--targets cortex-m4 cortex-m55]

Needs arm-none-eabi-gcc, newlib and qemu-system-arm (tools/install.sh).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime"))

import aotnn  # noqa: E402
import aotnn_runtime  # noqa: E402
from aotnn import nn  # noqa: E402
from schedules.embedded_mcu import DEFAULT_BOARD, qemu_command  # noqa: E402


def fine_tuning_step():
    """LeNet5 with everything but fc2 and fc3 frozen, Momentum over the trainable parameters."""
    aotnn.set_seed(7)
    net = aotnn.models.lenet5()
    for param in net.get_parameters():
        param.requires_grad = param.name.split(".")[0] in ("fc2", "fc3")
    optimizer = nn.Momentum(filter(lambda p: p.requires_grad, net.get_parameters()), learning_rate=0.05,
                            momentum=0.9)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)


def sections(elf: str) -> dict[str, int]:
    """Section sizes of an image (``arm-none-eabi-size -A``)."""
    text = subprocess.run(["arm-none-eabi-size", "-A", elf], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            found[parts[0]] = int(parts[1])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--targets", nargs="+", default=["cortex-m4", "cortex-m55"])
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    data = rng.standard_normal((args.steps, args.batch, 1, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, (args.steps, args.batch)).astype(np.int32)
    cell = fine_tuning_step()
    example = (aotnn.Tensor(data[0]), aotnn.Tensor(labels[0]))
    with tempfile.TemporaryDirectory() as tmp:
        bundles = {t: aotnn.export(cell, *example, file_name=os.path.join(tmp, t), target=t) for t in args.targets}
        module = aotnn_runtime.load(aotnn.export(cell, *example, file_name=os.path.join(tmp, "x86")))
        expected = np.array([float(module.run(x, y)[0]) for x, y in zip(data, labels)])
        print(f"x86 losses: {expected[0]:.6f} ... {expected[-1]:.6f} ({args.steps} steps, batch {args.batch})")
        for target, bundle in bundles.items():
            data.tofile(os.path.join(bundle, "train_input0.bin"))
            labels.tofile(os.path.join(bundle, "train_input1.bin"))
            subprocess.run(["make", "-s", "-j2"], cwd=bundle, check=True, capture_output=True)
            subprocess.run(qemu_command({"mcpu": target}), cwd=bundle, check=True, capture_output=True, timeout=600)
            losses = np.fromfile(os.path.join(bundle, "losses.bin"), dtype=np.float32)
            error = float(np.max(np.abs(losses - expected) / np.abs(expected)))
            size = sections(os.path.join(bundle, "model.elf"))
            stored = sum(os.path.getsize(os.path.join(bundle, f"train_input{i}.bin")) for i in range(2))
            (stack_used,) = np.fromfile(os.path.join(bundle, "stack.bin"), dtype=np.uint32)
            ram = size.get(".data", 0) + size.get(".bss", 0) + int(stack_used)
            print(f"{target} ({DEFAULT_BOARD[target]}): max relative loss error {error:.2e}; "
                  f"flash {size.get('.text', 0) + size.get('.weights', 0) - stored} B (code + weights; "
                  f"+ {stored} B of stored batches); RAM {ram} B (.data {size.get('.data', 0)}, .bss "
                  f"{size.get('.bss', 0)}, stack used {int(stack_used)} of {size.get('.stack', 0)} reserved)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
