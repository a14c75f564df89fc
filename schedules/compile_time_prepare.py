"""Weight re-layouts run once, at compile time, for bundles: their results become const data.

An entry record's ``prepare_steps`` depend on weights only (packing, batch-norm folding,
Winograd transforms). The Python runtime runs them on the first call into ``prepared`` buffers.
A board would pay for that in RAM (a copy of every transformed weight, while the originals stay
in flash), so for bundles the steps run here, on the host, with the same kernels compiled for
the host CPU. Their results are stored like weights (flash); weights that only fed them are
dropped. The record that comes back has no prepare steps and no prepared buffers.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tvm

PREPARED_PREFIX = "__prepared"


def _evaluate(record: Mapping[str, Any], kernels: tvm.IRModule,
              params: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The prepared buffers' values: ``record``'s prepare steps run on the host CPU."""
    names = sorted({step["kernel"] for step in record["prepare_steps"]})
    host_kernels = tvm.IRModule({name: kernels[name].with_attr("global_symbol", name) for name in names})
    library = tvm.compile(host_kernels, target=tvm.target.Target("llvm"))
    prepared = [np.zeros(tuple(spec["shape"]), spec["dtype"]) for spec in record["prepared"]]
    tables = {"param": params, "prepared": prepared}
    for step in record["prepare_steps"]:
        for ref in step["args"]:
            if ref["kind"] not in tables:
                raise ValueError(f"record: a prepare step of kernel {step['kernel']!r} reads a {ref['kind']!r} "
                                 "tensor; expected parameters and prepared buffers only")
        args = [tvm.runtime.tensor(np.array(tables[ref["kind"]][ref["index"]], order="C")) for ref in step["args"]]  # 0-d stays 0-d
        library[step["kernel"]](*args)
        for ref, arg in zip(step["args"], args):
            if ref["kind"] == "prepared":
                prepared[ref["index"]] = arg.numpy()
    return prepared


def fold_prepare_steps(record: Mapping[str, Any], kernels: tvm.IRModule,
                       stored: Sequence[tuple[str, np.ndarray]]) -> tuple[dict[str, Any], list[tuple[str, np.ndarray]]]:
    """``record`` and its stored tensors with the prepare steps evaluated at compile time.

    Args:
        record: an entry record (``schedules.build.entry_record``) whose parameters are all in ``stored``.
        kernels: the entry's kernels (TIR), which the prepare steps name.
        stored: (name, value) of every parameter of ``record``, in its ``params`` order.

    Returns:
        (record, stored): parameters read by the per-call steps or returned as outputs, then one
        ``__prepared<i>`` parameter per prepared buffer the per-call steps read; no prepare
        steps, no prepared buffers. A record without prepare steps, or one that updates
        parameters (a training step: its weights change at run time), comes back as it was.

    Raises:
        ValueError: ``stored`` does not match ``record``'s parameters.
    """
    if not record.get("prepare_steps") or record.get("param_updates"):
        return dict(record), list(stored)
    names = [spec["name"] for spec in record["params"]]
    if [name for name, _ in stored] != names:
        raise ValueError(f"stored: expected the record's {len(names)} parameters in order, "
                         f"got {[name for name, _ in stored][:5]}...")
    params = []
    for spec, (name, value) in zip(record["params"], stored):
        value = np.asarray(value)
        if value.size != int(np.prod(spec["shape"], dtype=np.int64)) or value.dtype != np.dtype(spec["dtype"]):
            raise ValueError(f"stored: {name!r} expected {spec['dtype']} of shape {tuple(spec['shape'])}, "
                             f"got {value.dtype} of shape {value.shape}")
        params.append(value.reshape(tuple(spec["shape"])))  # e.g. a scalar stored as shape (1,)
    prepared = _evaluate(record, kernels, params)

    runtime_refs = [ref for step in record["steps"] for ref in step["args"]] + list(record["output_refs"])
    kept_params = sorted({ref["index"] for ref in runtime_refs if ref["kind"] == "param"})
    kept_prepared = sorted({ref["index"] for ref in runtime_refs if ref["kind"] == "prepared"})
    new_index = {("param", old): new for new, old in enumerate(kept_params)}
    new_index.update({("prepared", old): len(kept_params) + new for new, old in enumerate(kept_prepared)})

    def remap(ref: Mapping[str, Any]) -> dict[str, Any]:
        if ref["kind"] in ("param", "prepared"):
            return {"kind": "param", "index": new_index[(ref["kind"], ref["index"])]}
        return dict(ref)

    folded = copy.deepcopy(dict(record))
    folded["params"] = [record["params"][i] for i in kept_params] + [
        {"name": f"{PREPARED_PREFIX}{i}", **record["prepared"][i]} for i in kept_prepared]
    folded["steps"] = [{**step, "args": [remap(ref) for ref in step["args"]]} for step in record["steps"]]
    folded["output_refs"] = [remap(ref) for ref in record["output_refs"]]
    folded["prepare_steps"], folded["prepared"] = [], []
    new_stored = [stored[i] for i in kept_params] + [(f"{PREPARED_PREFIX}{i}", prepared[i]) for i in kept_prepared]
    return folded, new_stored
