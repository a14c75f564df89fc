"""Weight re-layouts run once, at compile time, for bundles: their results become const data.

An entry record's ``prepare_steps`` depend on weights only (packing, batch-norm folding,
Winograd transforms). The Python runtime runs them on the first call into ``prepared`` buffers.
A board would pay for that in RAM (a copy of every transformed weight, while the originals stay
in flash), so for bundles the steps run here, on the host, with the same kernels compiled for
the host CPU. Their results are stored like weights (flash); weights that only fed them are
dropped. The record that comes back has no prepare steps and no prepared buffers.

A training step's record keeps the prepare steps that read a parameter it updates (they must run
again after every update: ``live_prepare_steps``); the others read frozen weights and are folded.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tvm

PREPARED_PREFIX = "__prepared"


def live_prepare_steps(prepare_steps: Sequence[Mapping[str, Any]], updated_params: set[int]) -> set[int]:
    """The prepare steps (by position) that must run on every call because they read a parameter a
    training step updates, or a prepared tensor such a step touches (over-approximated: every
    prepared argument of a live step counts as changed)."""
    live, changed = set(), set()
    for position, step in enumerate(prepare_steps):
        args = step["args"]
        if any((a["kind"] == "param" and a["index"] in updated_params)
               or (a["kind"] == "prepared" and a["index"] in changed) for a in args):
            live.add(position)
            changed.update(a["index"] for a in args if a["kind"] == "prepared")
    return live


def _evaluate(record: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], kernels: tvm.IRModule,
              params: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The prepared buffers' values: ``steps`` (prepare steps of ``record``) run on the host CPU."""
    names = sorted({step["kernel"] for step in steps})
    host_kernels = tvm.IRModule({name: kernels[name].with_attr("global_symbol", name) for name in names})
    library = tvm.compile(host_kernels, target=tvm.target.Target("llvm"))
    prepared = [np.zeros(tuple(spec["shape"]), spec["dtype"]) for spec in record["prepared"]]
    tables = {"param": params, "prepared": prepared}
    for step in steps:
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
        (record, stored): parameters read by the per-call steps, returned as outputs or updated,
        then one ``__prepared<i>`` parameter per folded prepared buffer the remaining steps read.
        An inference record comes back without prepare steps and prepared buffers; a record that
        updates parameters (a training step) keeps the prepare steps that read its updated
        parameters, and their prepared buffers, renumbered. A record without prepare steps
        comes back as it was.

    Raises:
        ValueError: ``stored`` does not match ``record``'s parameters.
    """
    if not record.get("prepare_steps"):
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
    updates = record.get("param_updates", [])
    live = live_prepare_steps(record["prepare_steps"], {u["param"] for u in updates})
    kept_steps = [step for i, step in enumerate(record["prepare_steps"]) if i in live]
    folded_steps = [step for i, step in enumerate(record["prepare_steps"]) if i not in live]
    if not folded_steps:
        return dict(record), list(stored)
    prepared = _evaluate(record, folded_steps, kernels, params)

    runtime_refs = [ref for step in record["steps"] + kept_steps for ref in step["args"]] + list(record["output_refs"])
    # written by a live step (a folded step's results are read by live steps as constants)
    live_prepared = ({ref["index"] for step in kept_steps for ref in step["args"] if ref["kind"] == "prepared"}
                     - {ref["index"] for step in folded_steps for ref in step["args"] if ref["kind"] == "prepared"})
    kept_params = sorted({ref["index"] for ref in runtime_refs if ref["kind"] == "param"}
                         | {u["param"] for u in updates})
    read = sorted({ref["index"] for ref in runtime_refs if ref["kind"] == "prepared"})
    folded_prepared = [i for i in read if i not in live_prepared]
    new_index = {("param", old): new for new, old in enumerate(kept_params)}
    new_index.update({("prepared", old): len(kept_params) + new for new, old in enumerate(folded_prepared)})
    still_prepared = {old: new for new, old in enumerate(sorted(live_prepared))}

    def remap(ref: Mapping[str, Any]) -> dict[str, Any]:
        if ref["kind"] == "prepared" and ref["index"] in still_prepared:
            return {"kind": "prepared", "index": still_prepared[ref["index"]]}
        if ref["kind"] in ("param", "prepared"):
            return {"kind": "param", "index": new_index[(ref["kind"], ref["index"])]}
        return dict(ref)

    folded = copy.deepcopy(dict(record))
    folded["params"] = [record["params"][i] for i in kept_params] + [
        {"name": f"{PREPARED_PREFIX}{i}", **record["prepared"][i]} for i in folded_prepared]
    folded["steps"] = [{**step, "args": [remap(ref) for ref in step["args"]]} for step in record["steps"]]
    folded["output_refs"] = [remap(ref) for ref in record["output_refs"]]
    folded["param_updates"] = [{**u, "param": new_index[("param", u["param"])]} for u in updates]
    folded["prepare_steps"] = [{**step, "args": [remap(ref) for ref in step["args"]]} for step in kept_steps]
    folded["prepared"] = [record["prepared"][i] for i in sorted(live_prepared)]
    new_stored = [stored[i] for i in kept_params] + [(f"{PREPARED_PREFIX}{i}", prepared[i]) for i in folded_prepared]
    return folded, new_stored
