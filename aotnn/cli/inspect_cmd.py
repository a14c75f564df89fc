"""``aotnn inspect``: what an artifact, a bundle or an ONNX file holds."""
from __future__ import annotations

import collections
import json
import os
from typing import Any

import click
import numpy as np

from .app import human_bytes, main, one_line_errors
from .bundle_memory import MemoryReport, bundle_memory


def _target_text(target: dict) -> str:
    parts = [str(target.get("kind", "?"))]
    for key in ("mtriple", "mcpu", "arch"):
        if target.get(key):
            parts.append(f"{key}={target[key]}")
    if target.get("mattr"):
        parts.append("mattr=" + ",".join(target["mattr"]))
    if target.get("num-cores"):
        parts.append(f"cores={target['num-cores']}")
    return " ".join(parts)


def _nbytes(spec: dict) -> int:
    return int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize


def artifact_summary(manifest: dict) -> dict[str, Any]:
    """The facts ``inspect`` prints, as JSON-able data."""
    bundle = manifest.get("library") is None
    entries = {}
    for name, entry in manifest["entries"].items():
        calls = collections.Counter(step["kernel"] for step in entry["steps"])
        params = entry["params"]
        constants = [p for p in params if p["name"].startswith("__const")]
        entries[name] = {
            "inputs": [{"name": s["name"], "dtype": s["dtype"], "shape": s["shape"]} for s in entry["inputs"]],
            "outputs": [{"dtype": s["dtype"], "shape": s["shape"]} for s in entry["outputs"]],
            "parameters": len(params) - len(constants),
            "constants": len(constants),
            "parameter_bytes": sum(_nbytes(p) for p in params),
            "kernel_calls": sum(calls.values()),
            "kernels": dict(calls.most_common()),
            "prepare_steps": len(entry.get("prepare_steps", [])),
            "intermediates": len(entry.get("buffers", [])),
            "arena_bytes": entry["arena_bytes"],
            "unplanned_bytes": entry["unplanned_bytes"],
            "param_updates": len(entry.get("param_updates", [])),
        }
    return {
        "kind": "bundle" if bundle else "artifact",
        "format": f"{manifest.get('format')} v{manifest.get('format_version')}",
        "network": manifest.get("metadata", {}).get("network"),
        "target": manifest["target"],
        "versions": manifest.get("versions", {}),
        "library": manifest.get("library"),
        "entries": entries,
        "files": {name: info["size"] for name, info in manifest.get("files", {}).items()},
        "stack": manifest.get("metadata", {}).get("stack"),
    }


def stack_text(stack: dict[str, Any]) -> str:
    """The line on a Cortex-M bundle's stack reservation (manifest metadata ``stack``)."""
    reserved = f"stack: {stack['reserved_bytes']:,d} bytes reserved by the linker scripts"
    if stack.get("image_bytes") is None:
        return reserved + " (fixed: the worst case could not be computed when the bundle was built)"
    return (f"{reserved} (worst case computed at build time: {stack['image_bytes']:,d} bytes for the example, "
            f"{stack['model_run_bytes']:,d} below aotnn_model_run, + {stack['margin_bytes']:,d} margin)")


def _print_artifact(path: str, info: dict, all_kernels: bool) -> None:
    echo = click.echo
    kind = "C bundle (embedded runtime; build with make)" if info["kind"] == "bundle" else "host artifact"
    echo(f"{path}: {kind}, {info['format']}")
    if info["network"]:
        echo(f"network: {info['network']}")
    echo(f"target: {_target_text(info['target'])}")
    versions = info["versions"]
    echo("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    for name, entry in info["entries"].items():
        echo(f"entry {name}:")
        for spec in entry["inputs"]:
            echo(f"  input  {spec['name']}: {spec['dtype']}{spec['shape']}")
        for i, spec in enumerate(entry["outputs"]):
            echo(f"  output {i}: {spec['dtype']}{spec['shape']}")
        echo(f"  parameters: {entry['parameters']} (+{entry['constants']} constants), "
             f"{human_bytes(entry['parameter_bytes'])}")
        if entry["param_updates"]:
            echo(f"  parameter updates per call: {entry['param_updates']}")
        prepare = (f", +{entry['prepare_steps']} prepare steps (run once per weight change)"
                   if entry["prepare_steps"] else "")
        echo(f"  kernels: {entry['kernel_calls']} calls of {len(entry['kernels'])} kernels{prepare}")
        shown = list(entry["kernels"].items())
        for kernel, count in shown if all_kernels else shown[:10]:
            echo(f"    {count:4d} x {kernel}")
        if not all_kernels and len(shown) > 10:
            echo(f"    ... {len(shown) - 10} more (--all-kernels lists them)")
        arena, unplanned = entry["arena_bytes"], entry["unplanned_bytes"]
        share = f" ({100 * arena / unplanned:.0f}%)" if unplanned else ""
        echo(f"  memory plan: {entry['intermediates']} intermediates in one arena")
        echo(f"  arena: {arena} bytes (intermediates without reuse: {unplanned} bytes){share}")
    if info.get("stack"):
        echo(stack_text(info["stack"]))
    total = sum(info["files"].values())
    echo(f"files: {len(info['files'])}, {human_bytes(total)}")
    for name, size in info["files"].items():
        echo(f"  {size:>12,d}  {name}")


def print_memory(report: MemoryReport | None, path: str) -> None:
    """Flash and RAM of a built bundle by part, and its largest symbols."""
    echo = click.echo
    if report is None:
        echo(f"flash/RAM: not built yet (make -C {path} builds the image they are read from)")
        return
    for title, total, parts in (("flash", report.flash_bytes, report.flash), ("RAM", report.ram_bytes, report.ram)):
        echo(f"{title}: {total:,d} bytes ({human_bytes(total)})")
        for name, size in parts.items():
            echo(f"  {size:>12,d}  {name}")
    echo("largest:")
    for name, category, size, memory in report.largest[:10]:
        echo(f"  {size:>12,d}  {name} ({category}, {memory})")


def onnx_summary(path: str) -> dict[str, Any]:
    from onnx import helper
    from relay_frontend.onnx_import import load_model

    model = load_model(path)
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}

    def spec(info):
        tensor_type = info.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tensor_type.shape.dim]
        return {"name": info.name, "dtype": str(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)), "shape": dims}

    weight_bytes = sum(int(np.prod(t.dims, dtype=np.int64)) * helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
                       for t in graph.initializer)
    ops = collections.Counter(node.op_type for node in graph.node)
    return {
        "kind": "onnx",
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "opsets": {entry.domain or "ai.onnx": entry.version for entry in model.opset_import},
        "ir_version": model.ir_version,
        "inputs": [spec(i) for i in graph.input if i.name not in initializers],
        "outputs": [spec(o) for o in graph.output],
        "initializers": len(initializers),
        "initializer_bytes": weight_bytes,
        "nodes": len(graph.node),
        "ops": dict(ops.most_common()),
        "files": {os.path.basename(path): os.path.getsize(path)},
    }


def _print_onnx(path: str, info: dict) -> None:
    echo = click.echo
    echo(f"{path}: ONNX model (IR {info['ir_version']}, "
         + ", ".join(f"{d} opset {v}" for d, v in info["opsets"].items()) + f"), producer {info['producer'] or '?'}")
    for spec in info["inputs"]:
        echo(f"  input  {spec['name']}: {spec['dtype']}{spec['shape']}")
    for spec in info["outputs"]:
        echo(f"  output {spec['name']}: {spec['dtype']}{spec['shape']}")
    echo(f"  initializers: {info['initializers']}, {human_bytes(info['initializer_bytes'])}")
    echo(f"  nodes: {info['nodes']}: " + ", ".join(f"{op} x{n}" for op, n in info["ops"].items()))
    echo(f"  file size: {human_bytes(sum(info['files'].values()))}")


@main.command(name="inspect")
@click.argument("artifact", type=click.Path())
@click.option("--all-kernels", is_flag=True, help="List every kernel (default: the 10 most called).")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
@one_line_errors
def inspect_command(artifact: str, all_kernels: bool, as_json: bool) -> None:
    """Show what ARTIFACT holds: entry points, inputs and outputs, kernels, memory plan, target, files.

    ARTIFACT is a host artifact or a C bundle (the directory aotnn compile/export writes), or an
    .onnx file. For a built bundle (after make) it prints flash and RAM by part, read from the
    linked image: .text, .rodata, weights, .data, .bss, the arena, kernel scratch, prepared weight
    copies, input/output buffers and the reserved stack. A Cortex-M bundle's stack line gives the
    reservation and the worst case computed when it was built. The memory plan line compares the arena (intermediates placed at compile time,
    bytes reused between tensors whose lifetimes do not overlap) with the sum of all intermediates.

    \b
    Examples:
      aotnn inspect lenet.aot
      aotnn inspect lenet-aarch64.aot --all-kernels
      aotnn inspect resnet18.onnx --json
    """
    from aotnn_runtime.manifest import read_manifest

    if artifact.lower().endswith(".onnx") and not os.path.isdir(artifact):
        info = onnx_summary(artifact)
        click.echo(json.dumps(info, indent=1)) if as_json else _print_onnx(artifact, info)
        return
    info = artifact_summary(read_manifest(artifact))
    memory = bundle_memory(artifact) if info["kind"] == "bundle" else None
    if as_json:
        if info["kind"] == "bundle":
            info["memory"] = memory.as_dict() if memory is not None else None
        click.echo(json.dumps(info, indent=1))
        return
    _print_artifact(artifact, info, all_kernels)
    if info["kind"] == "bundle":
        print_memory(memory, artifact)
