"""Conformance runner: executes MindSpore docstring examples against aotnn and compares their output.

Each example file holds one doctest converted to a script: the prompts are stripped and every
expected output line is kept as a comment ``# expected: <text>`` right after the statement that
printed it. This runner executes each file in its own subprocess (with a timeout), with
``mindspore`` / ``tinyms`` imports aliased to aotnn (:func:`aotnn.compat.install_mindspore_aliases`)
and the doctest namespace MindSpore's docs assume (``np``, ``mindspore``, ``nn``, ``ops``,
``Tensor``, ...). Top-level statements run one by one as in a doctest: a bare expression prints
its repr. The output of every statement followed by expected lines is compared with them:
numbers with a tolerance, words and brackets exactly, whitespace and commas ignored; a
``Tensor(shape=..., dtype=..., value=...)`` wrapper present on one side only is ignored.

    python tools/run_seed_examples.py --examples DIR [--names CentralCrop,SSIM] [--jobs 2]

Prints a table (example, status, checked blocks, reason) and totals. Status: ``ran`` (every
expected block matched, or there was none), ``mismatch`` (ran, some output differs), ``failed``
(exception, timeout, or a file that does not parse). Exit status 0 when everything ran.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures
import dataclasses
import fnmatch
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import traceback

MARK = "\x1e"  # ASCII record separator: starts each statement's output on stdout
EXPECTED = re.compile(r"^\s*# expected:(?: (.*)|$)")
PREAMBLE = (
    ("np", "import numpy as np"),
    ("mindspore", "import mindspore"),
    ("ms", "import mindspore as ms"),
    ("nn", "from mindspore import nn"),
    ("ops", "from mindspore import ops"),
    ("P", "from mindspore.ops import operations as P"),
    ("Tensor", "from mindspore import Tensor"),
    ("Parameter", "from mindspore import Parameter"),
    ("ParameterTuple", "from mindspore import ParameterTuple"),
    ("context", "from mindspore import context"),
    ("Model", "from mindspore import Model"),
    ("mstype", "from mindspore import dtype as mstype"),
    ("Cell", "from mindspore.nn import Cell"),
    ("learning_rate_schedule", "from mindspore.nn import learning_rate_schedule"),
)


@dataclasses.dataclass
class Block:
    """Expected output lines and the index of the top-level statement that prints them."""
    statement: int
    line: int
    text: str


@dataclasses.dataclass
class Result:
    example: str
    status: str  # ran / mismatch / failed
    checked: int = 0
    expected: int = 0
    reason: str = ""


# -- parsing the example file ----------------------------------------------------------------------
def statements_and_blocks(source: str) -> tuple[list[ast.stmt], list[Block]]:
    """The file's top-level statements and its expected-output blocks (attached to the statement
    that ends last before them; lines before any statement are ignored)."""
    tree = ast.parse(source)
    body = tree.body
    ends = [stmt.end_lineno for stmt in body]
    blocks: dict[int, Block] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        match = EXPECTED.match(line)
        if not match:
            continue
        owner = max((i for i, end in enumerate(ends) if end < number), default=None)
        if owner is None:
            continue
        block = blocks.setdefault(owner, Block(owner, number, ""))
        block.text += (match.group(1) or "") + "\n"
    return body, sorted(blocks.values(), key=lambda b: b.statement)


# -- comparing outputs ------------------------------------------------------------------------------
_TENSOR_WRAPPER = re.compile(r"Tensor\(shape=\[[^\]]*\],\s*dtype=\w+,\s*value=")
_TOKEN = re.compile(r"""
    (?P<num>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])|[-+]?(?:inf|nan)(?!\w))
  | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<sym>[\[\](){}<>=:/'"])
""", re.VERBOSE)


def _strip_tensor_wrappers(text: str) -> str:
    """Drop ``Tensor(shape=[..], dtype=.., value=`` and its closing parenthesis."""
    while True:
        match = _TENSOR_WRAPPER.search(text)
        if not match:
            return text
        depth, end = 1, None
        for i in range(match.end(), len(text)):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end is None:
            return text[:match.start()] + text[match.end():]
        text = text[:match.start()] + text[match.end():end] + text[end + 1:]


def tokens(text: str) -> list[tuple[str, object]]:
    out = []
    for match in _TOKEN.finditer(text):
        if match.group("num") is not None:
            out.append(("num", float(match.group("num"))))
        elif match.group("word") is not None:
            out.append(("word", match.group("word")))
        else:
            out.append(("sym", match.group("sym")))
    return out


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


def compare(actual: str, expected: str, rtol: float, atol: float) -> str | None:
    """None when ``actual`` matches ``expected``, else a short description of the first difference."""
    if ("Tensor(shape=" in actual) != ("Tensor(shape=" in expected):
        actual, expected = _strip_tensor_wrappers(actual), _strip_tensor_wrappers(expected)
    got, want = tokens(actual), tokens(expected)
    for i, (g, w) in enumerate(zip(got, want)):
        same = (g[0] == w[0] == "num" and _close(g[1], w[1], rtol, atol)) or g == w
        if not same:
            return f"token {i}: got {g[1]!r}, expected {w[1]!r}"
    if len(got) != len(want):
        extra = got[len(want):] if len(got) > len(want) else want[len(got):]
        side = "got" if len(got) > len(want) else "expected"
        return f"{side} {abs(len(got) - len(want))} more token(s), first {extra[0][1]!r}"
    return None


# -- the child process: run one example ------------------------------------------------------------
def run_child(path: str) -> int:
    """Execute ``path`` statement by statement, writing MARK<index>MARK before each statement's output."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from aotnn.compat import install_mindspore_aliases
    install_mindspore_aliases()
    namespace: dict = {"__name__": "__main__", "__file__": path}
    for name, statement in PREAMBLE:
        try:
            exec(statement, namespace)  # noqa: S102 (the namespace MindSpore's doctests assume)
        except ImportError:
            pass
    with open(path, encoding="utf-8") as stream:
        source = stream.read()
    body, _ = statements_and_blocks(source)
    for index, stmt in enumerate(body):
        sys.stdout.write(f"{MARK}{index}{MARK}")
        sys.stdout.flush()
        code = compile(ast.Interactive(body=[stmt]), path, "single")  # 'single': expressions echo their repr
        try:
            exec(code, namespace)  # noqa: S102
        except BaseException as err:  # noqa: BLE001 (report whatever the example raised)
            sys.stdout.flush()
            traceback.print_exc()
            message = str(err).strip().splitlines()[-1] if str(err).strip() else ""
            sys.stderr.write(f"{MARK}line {stmt.lineno}: {type(err).__name__}: {message}{MARK}\n")
            return 1
        sys.stdout.flush()
    return 0


# -- the parent: run, compare, tabulate -------------------------------------------------------------
def split_output(stdout: str) -> dict[int, str]:
    parts = stdout.split(MARK)
    outputs: dict[int, str] = {}
    # parts: [before, idx0, out0, idx1, out1, ...]
    for i in range(1, len(parts) - 1, 2):
        if parts[i].isdigit():
            outputs[int(parts[i])] = parts[i + 1]
    return outputs


def _error_reason(stderr: str, returncode: int) -> str:
    found = re.findall(f"{MARK}(.*?){MARK}", stderr, re.S)
    if found:
        return found[-1].strip()
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exit status {returncode}"


def run_example(path: str, timeout: float, rtol: float, atol: float) -> Result:
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as stream:
            _, blocks = statements_and_blocks(stream.read())
    except SyntaxError as err:
        return Result(name, "failed", reason=f"SyntaxError: {err.msg} (line {err.lineno})")
    result = Result(name, "ran", expected=len(blocks))
    with tempfile.TemporaryDirectory(prefix="seed_example_") as workdir:
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", os.path.abspath(path)],
                                  capture_output=True, text=True, timeout=timeout, cwd=workdir,
                                  errors="replace")
        except subprocess.TimeoutExpired:
            result.status, result.reason = "failed", f"timeout after {timeout:g} s"
            return result
    outputs = split_output(proc.stdout)
    mismatches = []
    for block in blocks:
        if block.statement not in outputs:
            continue  # not reached: the failure below explains why
        difference = compare(outputs[block.statement], block.text, rtol, atol)
        if difference is None:
            result.checked += 1
        else:
            mismatches.append(f"line {block.line}: {difference}")
    if proc.returncode != 0:
        result.status, result.reason = "failed", _error_reason(proc.stderr, proc.returncode)
    elif mismatches:
        result.status, result.reason = "mismatch", "; ".join(mismatches[:2]) + (
            f" (+{len(mismatches) - 2} more)" if len(mismatches) > 2 else "")
    return result


def select(directory: str, names: list[str] | None, pattern: str) -> list[str]:
    files = sorted(f for f in os.listdir(directory) if f.endswith(".py") and fnmatch.fnmatch(f, pattern))
    if names:
        wanted = set(names)
        # files are named <seed>_<Name>_<n>.py (Name may contain dots, e.g. Cell.apply)
        files = [f for f in files if f.split("_", 1)[-1].rsplit("_", 1)[0] in wanted]
    return [os.path.join(directory, f) for f in files]


def table(results: list[Result]) -> str:
    rows = [("example", "status", "checked", "reason")]
    rows += [(r.example, r.status, f"{r.checked}/{r.expected}", r.reason) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
        if k == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    counts = {s: sum(r.status == s for r in results) for s in ("ran", "mismatch", "failed")}
    blocks = sum(r.checked for r in results), sum(r.expected for r in results)
    lines.append("")
    lines.append(f"total {len(results)}: ran {counts['ran']}, mismatch {counts['mismatch']}, "
                 f"failed {counts['failed']}; expected-output blocks matched {blocks[0]}/{blocks[1]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", help="directory of example files (<seed>_<Name>_<n>.py)")
    parser.add_argument("--names", help="comma-separated API names to run (default: all)")
    parser.add_argument("--pattern", default="*.py", help="glob over file names (default: *.py)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per example (default: 300)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="examples run in parallel (default: 1)")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of numbers (default: 1e-4)")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance of numbers (default: 1e-5)")
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child(args.child)
    if not args.examples:
        parser.error("--examples DIR is required")
    if not os.path.isdir(args.examples):
        parser.error(f"--examples: {args.examples!r} is not a directory")
    names = [n.strip() for n in args.names.split(",") if n.strip()] if args.names else None
    paths = select(args.examples, names, args.pattern)
    if not paths:
        parser.error("no example files selected")
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda p: run_example(p, args.timeout, args.rtol, args.atol), paths))
    print(table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump([dataclasses.asdict(r) for r in results], stream, indent=1)
    return 0 if all(r.status == "ran" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
