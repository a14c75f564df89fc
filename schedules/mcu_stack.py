"""The worst-case stack of a Cortex-M bundle, computed when it is built, for its linker script.

The call graph is shallow and has no recursion: reset -> main -> aotnn_model_run -> kernel (through
model.c's table) -> the backend hooks (through the kernels' GOT) -> memcpy/memset. Its frames come
from two sources:

- the C files (model.c, runtime/, main.c, board/): compiled with the Makefile's flags and gcc's
  ``-fcallgraph-info=su``, which writes each function's static frame and its calls (``.ci`` files).
- the kernels (kernels.o, LLVM): each function's stack adjustments read from its disassembly
  (``push``/``stmdb sp!``, ``vpush``/``vstmdb sp!``, ``sub sp``, a realignment of sp down to a
  power of two) and its ``bl``/``b.w`` callees (``mov sp, rN`` restores a saved sp).

An indirect call in C (model.c's kernel table) may reach any kernel entry point; an indirect call in
a kernel (``blx``, the GOT) any function of runtime/ that calls no pointer itself (the hooks). Functions that no file defines (newlib's
memcpy/memset/strlen, libm) are charged ``LIBRARY_FRAME_BYTES``. The analysis gives up (returns
None) where a frame is not a constant (``alloca``, ``sub sp, rN``), on recursion, where a kernel
launches parallel work, or where the tools are missing; the caller then keeps a fixed reservation.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

# Charged for each call into newlib (memcpy, memset, strlen, expf ...): their frames are not in the
# call graph. newlib-nano's string functions push at most 8 registers, libm's float functions less.
LIBRARY_FRAME_BYTES = 64
# Added to the worst path: an exception frame with the FP context (26 words = 104 bytes, 8-aligned)
# that a fault or interrupt pushes on top of the deepest call, and slack for code the analysis
# does not see (interrupt handlers a firmware adds reserve their own stack on top of this).
STACK_MARGIN_BYTES = 256
# The reservation when the stack cannot be computed (tools missing, dynamic frames).
FALLBACK_STACK_BYTES = 16 * 1024

_CI_NODE = re.compile(r'node: \{ title: "([^"]+)" label: "[^"\n]*?\\n[^"]*?\\n(\d+) bytes \(([a-z,]+)\)"')
_CI_EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
_FUNCTION = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
_INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\s+(?:[0-9a-f]{4} ?){1,2}\s+(\S+)\s*(.*)$")
_DIRECT_CALL = re.compile(r"^(?:bl|b\.w|b)\s+[0-9a-f]+ <([^>+]+)>")
_INDIRECT = "<indirect>"


class Frames:
    """A call graph: each function's own frame (bytes) and the functions it calls."""

    def __init__(self) -> None:
        self.frame: dict[str, int] = {}
        self.calls: dict[str, set[str]] = {}

    def add(self, name: str, frame: int | None = None) -> None:
        self.calls.setdefault(name, set())
        if frame is not None:
            self.frame[name] = max(self.frame.get(name, 0), frame)


def _register_count(registers: str) -> int:
    """Registers in a list such as ``{r4, r5, r6, lr}`` or ``{d8-d15}``."""
    count = 0
    for item in registers.strip("{} ").split(","):
        item = item.strip()
        if "-" in item:
            low, high = item.split("-")
            count += int(high[1:]) - int(low[1:]) + 1
        elif item:
            count += 1
    return count


def kernel_frames(disassembly: str, frames: Frames) -> bool:
    """Add the functions of ``arm-none-eabi-objdump -d kernels.o`` to ``frames``; False where a
    frame is not a constant or a kernel launches parallel work (the stack cannot be bounded)."""
    current, sp_copy = None, None
    for line in disassembly.splitlines():
        match = _FUNCTION.match(line)
        if match:
            current, sp_copy = match.group(1), None
            frames.add(current, 0)
            continue
        match = _INSTRUCTION.match(line)
        if current is None or not match:
            continue
        op, operands = match.group(1), match.group(2).split("@")[0].strip()
        if op in ("push", "push.w", "vpush") or (op.startswith(("stmdb", "vstmdb")) and operands.startswith("sp!")):
            width = 8 if "{d" in operands else 4
            frames.frame[current] += width * _register_count(operands[operands.index("{"):])
        elif op.startswith("sub") and re.match(r"sp, (sp, )?#", operands):
            frames.frame[current] += int(operands.rsplit("#", 1)[1].split()[0], 0)
        elif re.match(r"(sp|r\d+|ip|lr|fp|sl), (sp, )?(r\d+|ip|lr|fp|sl)", operands) and op.startswith("sub") \
                and ("sp" in operands.split(",")[0] or ", sp," in operands):
            return False  # a frame sized at run time (alloca)
        elif op.startswith("mov") and re.fullmatch(r"(r\d+|ip|lr|fp|sl), sp", operands):
            sp_copy = operands.split(",")[0]
        elif op == "bfc" and sp_copy and re.fullmatch(rf"{sp_copy}, #0, #\d+", operands):
            # the frame realigned down (mov rN, sp; bfc rN, #0, #k; mov sp, rN): at most 2**k more
            frames.frame[current] += 1 << int(operands.rsplit("#", 1)[1])
        elif op.startswith("blx") or op.startswith("bx") and operands != "lr":
            frames.calls[current].add(_INDIRECT)
        else:
            call = _DIRECT_CALL.match(f"{op} {operands}")
            if call and call.group(1) != current:
                frames.calls[current].add(call.group(1))
    return "ParallelLaunch" not in disassembly


def c_frames(callgraph: str, frames: Frames) -> bool:
    """Add the functions of gcc's ``-fcallgraph-info=su`` output to ``frames``; False where a frame
    is dynamic (``alloca``, variable-length arrays)."""
    for title, size, kind in _CI_NODE.findall(callgraph):
        if kind != "static":  # "dynamic" or "dynamic,bounded": sized at run time
            return False
        frames.add(_plain(title), int(size))
    for source, target in _CI_EDGE.findall(callgraph):
        frames.add(_plain(source))
        frames.calls[_plain(source)].add(_INDIRECT if target == "__indirect_call" else _plain(target))
    return True


def _plain(title: str) -> str:
    """gcc names static functions ``file.c:name``; the disassembly and other files use ``name``."""
    return title.rsplit(":", 1)[-1]


def worst_path(frames: Frames, root: str, indirect: Mapping[str, Sequence[str]]) -> int | None:
    """The most stack any call chain from ``root`` takes, None on recursion.

    Args:
        frames: the call graph.
        root: where the chain starts.
        indirect: for a function, the functions its indirect calls may reach.
    """
    done: dict[str, int] = {}
    on_path: set[str] = set()

    def visit(name: str) -> int | None:
        if name in done:
            return done[name]
        if name in on_path:
            return None
        if name not in frames.frame:  # defined in no file we compiled: newlib
            return LIBRARY_FRAME_BYTES
        on_path.add(name)
        deepest = 0
        for callee in frames.calls.get(name, ()):
            for target in (indirect.get(name, ()) if callee == _INDIRECT else (callee,)):
                below = visit(target)
                if below is None:
                    return None
                deepest = max(deepest, below)
        on_path.discard(name)
        done[name] = frames.frame[name] + deepest
        return done[name]

    return visit(root)


def _run(command: list[str], cwd: str) -> str | None:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def bundle_stack(bundle: str, compiler: str, cflags: str, c_files: Sequence[str],
                 kernel_entries: Sequence[str]) -> dict[str, int] | None:
    """The worst-case stack of the bundle at ``bundle`` (its C files not yet built).

    Args:
        bundle: the bundle's folder (kernels.o and the C files in it).
        compiler: the cross compiler (``arm-none-eabi-gcc``); objdump is found beside it.
        cflags: the flags the Makefile compiles the C files with.
        c_files: the C files of the image, relative to ``bundle``; runtime/ ones hold the hooks.
        kernel_entries: the symbols model.c calls through its kernel table.

    Returns:
        ``{"model_run": bytes, "image": bytes}``: the deepest chain below aotnn_model_run (what a
        firmware calling the model adds to its own stack) and below the reset handler (the whole
        example image), or None where it cannot be bounded (see the module's docstring).
    """
    objdump = compiler[: -len("gcc")] + "objdump" if compiler.endswith("gcc") else "objdump"
    if shutil.which(compiler) is None or shutil.which(objdump) is None:
        return None
    frames = Frames()
    disassembly = _run([objdump, "-d", "kernels.o"], bundle)
    if disassembly is None or not kernel_frames(disassembly, frames):
        return None
    kernel_functions = list(frames.frame)
    with tempfile.TemporaryDirectory(dir=bundle) as scratch:
        runtime_functions: list[str] = []
        for index, source in enumerate(c_files):
            stem = os.path.join(scratch, str(index))
            command = [compiler, *shlex.split(cflags), "-I.", "-fcallgraph-info=su", "-c", source,
                       "-o", stem + ".o", "-dumpbase", "", "-dumpdir", stem + "-"]
            if _run(command, bundle) is None:
                return None
            ci = [name for name in os.listdir(scratch) if name.startswith(f"{index}-") and name.endswith(".ci")]
            if len(ci) != 1:
                return None
            before = set(frames.frame)
            with open(os.path.join(scratch, ci[0])) as stream:
                if not c_frames(stream.read(), frames):
                    return None
            if source.startswith("runtime/"):
                runtime_functions += [name for name in frames.frame if name not in before]
    # the kernels reach runtime/ through the GOT: its hooks (workspace, errors), never the parallel
    # launcher (kernel_frames refuses kernels that launch parallel work), the one runtime function
    # that calls back through a pointer
    hooks = [name for name in runtime_functions if _INDIRECT not in frames.calls.get(name, ())]
    targets: dict[str, Sequence[str]] = {name: hooks for name in kernel_functions}
    for name in frames.frame:
        targets.setdefault(name, kernel_entries)
    if "aotnn_model_run" not in frames.frame or "aotnn_reset_handler" not in frames.frame:
        return None
    model_run = worst_path(frames, "aotnn_model_run", targets)
    image = worst_path(frames, "aotnn_reset_handler", targets)
    if model_run is None or image is None:
        return None
    return {"model_run": model_run, "image": image}


def reserved_stack(computed: Mapping[str, int] | None) -> int:
    """The bytes the linker script reserves: the computed worst case (the example image's, or a
    firmware's call of aotnn_model_run where deeper) plus ``STACK_MARGIN_BYTES``, rounded up to 8
    (the AAPCS stack alignment); ``FALLBACK_STACK_BYTES`` when not computed."""
    if computed is None:
        return FALLBACK_STACK_BYTES
    return (max(computed["image"], computed["model_run"]) + STACK_MARGIN_BYTES + 7) // 8 * 8
