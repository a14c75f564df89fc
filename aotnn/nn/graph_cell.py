"""GraphCell: a Cell that runs a compiled graph loaded by ``aotnn.load``."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import aotnn_runtime
import relay_frontend

from ..common.tensor import Tensor
from .cell import Cell

__all__ = ['GraphCell']


class GraphCell(Cell):
    """Runs a computation graph loaded by ``aotnn.load`` (an artifact of ``aotnn.export``), MindSpore's GraphCell.

    The graph is already compiled, so a GraphCell runs it as it is; a Cell whose construct calls a
    GraphCell runs that construct op by op, with each of its other children compiled on its own.
    A GraphCell cannot be part of a graph being compiled or differentiated (e.g. ``TrainOneStepCell``).

    Args:
        graph (aotnn_runtime.Module): the graph returned by ``aotnn.load``; its ``predict`` entry runs.
        params_init (dict): parameter name -> Tensor, Parameter or numpy array, replacing the graph's
            stored weights for this cell (the loaded graph itself is unchanged). Default: None.
        obf_random_seed (int): MindSpore's obfuscation seed; aotnn graphs are never obfuscated, so it
            must be None. Default: None.

    Inputs:
        - **inputs** (Tensor) - one Tensor per input of the graph, of the exported shape and dtype.

    Outputs:
        Tensor, or a tuple of Tensors when the graph has several outputs.

    Raises:
        TypeError: ``graph`` is not a loaded graph, ``params_init`` is not a dict, or a value in it is not
            a Tensor/Parameter/numpy array.
        ValueError: ``graph`` has no ``predict`` entry, ``params_init`` names a parameter the graph does not
            have or gives it another shape or dtype, ``obf_random_seed`` is not None, or (when called)
            the inputs do not match the graph's (count, shape, dtype).

    Examples:
        >>> ms.export(net, Tensor(np.ones([1, 1, 32, 32], np.float32)), file_name="net")
        >>> graph = ms.load("net.aot")
        >>> out = nn.GraphCell(graph)(Tensor(np.ones([1, 1, 32, 32], np.float32)))
    """

    _eager_only = True  # nn.Cell runs the construct of any cell containing one op by op

    def __init__(self, graph: Any, params_init: Mapping[str, Any] | None = None, obf_random_seed: Any = None):
        super().__init__()
        if not isinstance(graph, aotnn_runtime.Module):
            raise TypeError(f"graph: expected a graph loaded by aotnn.load, got {type(graph).__name__}")
        if "predict" not in graph.entry_points:
            raise ValueError(f"graph: expected an inference graph (entry 'predict'), got entries {graph.entry_points}")
        if obf_random_seed is not None:
            raise ValueError(f"obf_random_seed: aotnn graphs are not obfuscated, expected None, got {obf_random_seed!r}")
        object.__setattr__(self, "graph", graph)
        object.__setattr__(self, "_entry", graph["predict"])
        object.__setattr__(self, "_params_init", self._check_params(params_init))

    def _check_params(self, params_init: Mapping[str, Any] | None) -> dict[str, np.ndarray] | None:
        if params_init is None:
            return None
        if not isinstance(params_init, Mapping):
            raise TypeError(f"params_init: expected a dict of name -> Tensor, got {type(params_init).__name__}")
        specs = {spec["name"]: spec for spec in self._entry.params}
        arrays = {}
        for name, value in params_init.items():
            if name not in specs:
                raise ValueError(f"params_init: the graph has no parameter {name!r}; expected names in {sorted(specs)}")
            if isinstance(value, Tensor):
                value = value.asnumpy()
            elif not isinstance(value, np.ndarray):
                raise TypeError(f"params_init[{name!r}]: expected a Tensor, Parameter or numpy array, "
                                f"got {type(value).__name__}")
            spec = specs[name]
            if tuple(value.shape) != tuple(spec["shape"]) or value.dtype != np.dtype(spec["dtype"]):
                raise ValueError(f"params_init[{name!r}]: expected {spec['dtype']}{tuple(spec['shape'])}, "
                                 f"got {value.dtype}{tuple(value.shape)}")
            arrays[name] = np.array(value)  # a private copy: later changes to the caller's tensor do not leak in
        return arrays

    def construct(self, *inputs: Tensor) -> Any:
        if relay_frontend.current() is not None:
            raise TypeError("GraphCell: a loaded graph cannot be part of a graph being compiled or differentiated; "
                            "call it outside compiled code (a Cell calling it runs op by op)")
        arrays = [x.asnumpy() if isinstance(x, Tensor) else x for x in inputs]
        if self._params_init is None:
            results = self._entry(*arrays)  # InputError (a ValueError) before any kernel runs
        else:
            results = self._entry.raw(*arrays, params=self._params_init, params_key=("GraphCell", id(self)))
        outputs = tuple(Tensor._from_numpy(r) for r in results)
        return outputs[0] if len(outputs) == 1 else outputs

    def extend_repr(self) -> str:
        names = ", ".join(f"{s['name']}: {s['dtype']}{list(s['shape'])}" for s in self._entry.inputs)
        return f"inputs=({names})"
