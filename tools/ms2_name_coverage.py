"""List the MindSpore ``nn`` / ``ops`` / ``numpy`` names that model code uses, and which aotnn has.

Scans Python sources (e.g. an installed mindcv, a mindyolo or mindnlp checkout) for attribute uses through
the usual aliases (``nn.X``, ``ops.X``, ``P.X``, ``F.X``, ``mnp.X``/``msnp.X``/``numpy.X`` after a
``mindspore.numpy`` import) and ``from mindspore.<module>[.<submodule>] import X`` lines (recorded under the
full dotted module), then reports, per module, each
name that MindSpore defines with whether ``aotnn`` has it. Whether MindSpore defines a name is asked of a
separate interpreter that has MindSpore installed (``--mindspore-python``), since aotnn's own environment
does not.

Usage::

    python tools/ms2_name_coverage.py --mindspore-python <python with mindspore> \
        --source mindcv=<dir> --source mindyolo=<dir> [--json out.json] [--markdown out.md]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

# alias -> module, for attribute uses ``alias.Name``
ALIASES = {"nn": "nn", "ops": "ops", "P": "ops", "F": "ops", "mnp": "numpy", "msnp": "numpy"}
FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+mindspore\.((?:nn|ops|numpy)(?:\.[\w.]+)?)[ \t]+import[ \t]+"
                         r"(?:\(([\w\s,]+)\)|([\w \t,]+))", re.M)
ATTRIBUTE = re.compile(r"(?<![\w.])(nn|ops|P|F|mnp|msnp|numpy)\.([A-Za-z_]\w*)")
NUMPY_ALIAS = re.compile(r"import\s+mindspore\.numpy\s+as\s+(\w+)|from\s+mindspore\s+import\s+[\w\s,]*\bnumpy\b")

_PROBE = """
import json, sys, importlib
names = json.load(open(sys.argv[1]))
out = {}
for module, items in names.items():
    try:
        mod = importlib.import_module("mindspore." + module)
    except ImportError:  # a module this MindSpore does not have (older or newer code)
        out[module] = []
        continue
    out[module] = [n for n in items if hasattr(mod, n)]
json.dump(out, open(sys.argv[2], "w"))
"""


def scan(root: Path) -> dict[str, set[str]]:
    """Names used per MindSpore module (``nn``, ``ops``, ``numpy``) by the .py files under ``root``."""
    used: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "mindspore" not in text:
            continue
        numpy_is_mindspore = NUMPY_ALIAS.search(text) is not None
        for module, grouped, plain in FROM_IMPORT.findall(text):
            names = grouped or plain
            used[module].update(n.split()[0] for n in names.split(",") if n.strip())
        for alias, name in ATTRIBUTE.findall(text):
            if alias == "numpy" and not numpy_is_mindspore:
                continue
            used[ALIASES.get(alias, alias)].add(name)
    return used


def mindspore_names(python: str, used: dict[str, set[str]]) -> dict[str, set[str]]:
    """The subset of ``used`` that MindSpore defines, asked of the interpreter ``python``."""
    with tempfile.TemporaryDirectory() as tmp:
        query, answer = Path(tmp, "query.json"), Path(tmp, "answer.json")
        query.write_text(json.dumps({m: sorted(n) for m, n in used.items()}))
        env = dict(os.environ, DNNL_MAX_CPU_ISA=os.environ.get("DNNL_MAX_CPU_ISA", "AVX2"))
        env.pop("PYTHONPATH", None)
        subprocess.run([python, "-c", _PROBE, str(query), str(answer)], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        return {m: set(n) for m, n in json.loads(answer.read_text()).items()}


def aotnn_has(module: str, name: str) -> bool:
    """Whether ``aotnn.<module>`` (a dotted path, imported or reached by attributes) defines ``name``."""
    import importlib

    try:
        target = importlib.import_module(f"aotnn.{module}")
    except ImportError:
        target = importlib.import_module("aotnn")
        for part in module.split("."):
            target = getattr(target, part, None)
            if target is None:
                return False
    return hasattr(target, name)


def report(sources: dict[str, Path], python: str) -> dict:
    """{module: {name: {"users": [...], "aotnn": bool}}} over names MindSpore defines."""
    per_source = {label: scan(root) for label, root in sources.items()}
    used: dict[str, set[str]] = defaultdict(set)
    for names in per_source.values():
        for module, items in names.items():
            used[module] |= items
    known = mindspore_names(python, used)
    table: dict = {}
    for module in sorted(known):
        table[module] = {
            name: {"users": sorted(label for label, names in per_source.items() if name in names.get(module, ())),
                   "aotnn": aotnn_has(module, name)}
            for name in sorted(known[module])}
    return table


def markdown(table: dict) -> str:
    lines = []
    for module, names in table.items():
        covered = [n for n, row in names.items() if row["aotnn"]]
        missing = [n for n, row in names.items() if not row["aotnn"]]
        lines.append(f"### mindspore.{module}: {len(covered)} of {len(names)} used names covered\n")
        lines.append("Covered: " + ", ".join(f"`{n}`" for n in covered) + "\n")
        lines.append("| missing | used by |\n|---|---|")
        lines += [f"| `{n}` | {', '.join(names[n]['users'])} |" for n in missing]
        lines.append("")
    return "\n".join(lines)


def _atomic_write(path: Path, text: str) -> None:
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as handle:
        handle.write(text)
    os.replace(handle.name, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mindspore-python", required=True, help="a Python interpreter with MindSpore installed")
    parser.add_argument("--source", action="append", required=True, metavar="LABEL=DIR",
                        help="a source tree to scan, e.g. mindcv=path/to/mindcv (repeatable)")
    parser.add_argument("--json", type=Path, help="write the table as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the lists as Markdown here")
    args = parser.parse_args(argv)
    sources = {}
    for item in args.source:
        label, sep, directory = item.partition("=")
        if not sep or not Path(directory).is_dir():
            parser.error(f"--source: expected LABEL=DIR with an existing DIR, got {item!r}")
        sources[label] = Path(directory)
    table = report(sources, args.mindspore_python)
    if args.json:
        _atomic_write(args.json, json.dumps(table, indent=1) + "\n")
    text = markdown(table)
    if args.markdown:
        _atomic_write(args.markdown, text)
    if not args.json and not args.markdown:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
