"""Cell: the building block of networks, MindSpore's ``nn.Cell``.

Calling a Cell with Tensors compiles ``construct`` for that input signature (once; later calls
reuse the compiled artifact) and runs it through aotnn_runtime. Inside a graph being captured,
a Cell call simply inlines its ``construct``.
"""
from __future__ import annotations

import inspect
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

import relay_frontend

from ..common import dtype as mstype
from ..common.buffer import Buffer
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from ..jit import mixed_precision
from ..jit.cell_call import _NOT_MEMOIZED
from ..jit.cell_call import call_memoized as _call_memoized

_STRUCTURE_VERSION = itertools.count()
_version = [0]


def _is_generated_name(name: str) -> bool:
    """A name the Parameter got for lack of one (MindSpore: 'Parameter#<n>'; aotnn: 'Parameter')."""
    return name == "Parameter" or name.startswith("Parameter#")


def _structure_changed() -> None:
    """Note that some cell's parameters, sub-cells, buffers, hooks or modes changed (what a
    compiled call derives from them is recomputed on its next call)."""
    _version[0] = next(_STRUCTURE_VERSION)


class _Members(OrderedDict):
    """A cell's table of parameters, sub-cells or buffers; every change is a structure change,
    whoever makes it (``Cell.__setattr__``, the containers' ``append``/``insert``/``del``...)."""

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        _structure_changed()

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        _structure_changed()

    def pop(self, *args: Any) -> Any:
        _structure_changed()
        return super().pop(*args)

    def popitem(self, last: bool = True) -> Any:
        _structure_changed()
        return super().popitem(last)

    def clear(self) -> None:
        super().clear()
        _structure_changed()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        _structure_changed()
        return super().setdefault(key, default)

    def move_to_end(self, key: Any, last: bool = True) -> None:
        super().move_to_end(key, last)
        _structure_changed()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        _structure_changed()


class _HookHandle:
    """Returned by ``register_*_hook``; ``remove()`` unregisters the hook."""
    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.handle_id = next(self._ids)

    def remove(self) -> None:
        self._hooks.pop(self.handle_id, None)
        _version[0] = next(_STRUCTURE_VERSION)


class Cell:
    """Base class of every network and layer.

    Args:
        auto_prefix: whether child cells' parameter names get this cell's attribute names as
            prefix (``conv1.weight``). Default: True.
        flags: flags to add to the cell (see :meth:`add_flags`).
    """

    _eager_only = False  # True: never traced (nn.GraphCell); the cells containing it run op by op

    def __init__(self, auto_prefix: bool = True, flags: Mapping[str, Any] | None = None):
        object.__setattr__(self, "_params", _Members())
        object.__setattr__(self, "_cells", _Members())
        object.__setattr__(self, "_buffers", _Members())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_auto_prefix", auto_prefix)
        object.__setattr__(self, "_names_checked", False)
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "requires_grad", False)
        object.__setattr__(self, "_mixed_precision", None)
        object.__setattr__(self, "_jit_cache", {})
        object.__setattr__(self, "_flags", {})
        if flags:
            self.add_flags(**flags)

    # -- attributes -----------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        for table in ("_params", "_cells", "_buffers"):
            entries = self.__dict__.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if "_params" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before setting attributes")
        existing = self.__dict__["_params"].get(name)
        if existing is not None and isinstance(value, Tensor) and not isinstance(value, Parameter):
            existing.set_data(value)  # as MindSpore: a Tensor assigned to a Parameter attribute updates its data
            return
        _version[0] = next(_STRUCTURE_VERSION)
        for table in ("_params", "_cells", "_buffers"):
            self.__dict__[table].pop(name, None)
        if isinstance(value, Parameter):
            if _is_generated_name(value.name):  # MindSpore: only a parameter created without a name is renamed
                value.name = name
            self._params[name] = value
            self.__dict__.pop(name, None)
        elif isinstance(value, Cell):
            if self._auto_prefix:
                value.update_parameters_name(name + ".")
            self._cells[name] = value
            self.__dict__.pop(name, None)
        elif isinstance(value, Buffer):
            value.name = name
            self._buffers[name] = value
            self.__dict__.pop(name, None)
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        _version[0] = next(_STRUCTURE_VERSION)
        for table in ("_params", "_cells", "_buffers"):
            if name in self.__dict__[table]:
                del self.__dict__[table][name]
                return
        object.__delattr__(self, name)

    def update_parameters_name(self, prefix: str = "", recurse: bool = True) -> None:
        """Name every parameter ``prefix`` + its path in this cell (MindSpore renames a cell's parameters so
        when the cell becomes an attribute of another; the path, not the current name, follows the prefix).

        Args:
            prefix (str): The prefix. Default: ``''``.
            recurse (bool): Include sub-cells' parameters. Default: ``True``.
        Raises:
            TypeError: ``prefix`` is not a str.
        """
        if not isinstance(prefix, str):
            raise TypeError(f"prefix: expected a str, got {type(prefix).__name__}")
        for path, param in self.parameters_and_names(expand=recurse):
            param.name = prefix + path

    def check_names(self) -> None:
        """Raise ValueError when two parameters share a name."""
        names: set[str] = set()
        for path, param in self.parameters_and_names():
            if param.name in names:
                raise ValueError(f"The value of {path} is {param}, its name '{param.name}' already exists. "
                                 "Please set a unique name for the parameter.")
            names.add(param.name)

    def check_names_and_refresh_name(self) -> None:
        """When two parameters share a name, rename all of them by their path (MindSpore does this when a
        cell is first called)."""
        names = [param.name for _, param in self.parameters_and_names()]
        if len(set(names)) < len(names):
            self.update_parameters_name()
            self.check_names()

    # -- calling ------------------------------------------------------------------------------
    def construct(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the cell; subclasses override it."""
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def _construct_with_precision(self, args: tuple, kwargs: dict) -> Any:
        if self._mixed_precision is None:
            return self.construct(*args, **kwargs)
        target = self._mixed_precision
        args = tuple(a.astype(target) if isinstance(a, Tensor) and a.dtype.is_float and a.dtype != target else a
                     for a in args)
        with mixed_precision.compute_dtype(target):
            return self.construct(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            output = _call_memoized(self, args, _version[0])
            if output is not _NOT_MEMOIZED:
                return output
        if relay_frontend.current() is not None:
            return self._construct_with_precision(args, kwargs)
        args = tuple(Tensor(a) if isinstance(a, np.ndarray) else a for a in args)
        if not self.__dict__.get("_names_checked", False):  # (cells pickled before the flag existed)
            self.check_names_and_refresh_name()
            object.__setattr__(self, "_names_checked", True)
        for hook in list(self._forward_pre_hooks.values()):
            new_args = hook(self, args)
            if new_args is not None:
                args = new_args if isinstance(new_args, tuple) else (new_args,)
        if self._runs_eagerly():
            # children run (and hook) one by one; a GraphCell (_eager_only) cannot be traced
            output = self._construct_with_precision(args, kwargs)
        else:
            from ..jit.cell_call import call_compiled
            output = call_compiled(self, args, kwargs)
        for hook in list(self._forward_hooks.values()):
            new_output = hook(self, args, output)
            if new_output is not None:
                output = new_output
        return output

    def _runs_eagerly(self) -> bool:
        """Whether a call runs the children one by one (a child has hooks, or cannot be traced),
        looked up once per structure version: walking ResNet-18's 68 cells costs about 0.1 ms."""
        plan = self.__dict__.get("_eager_plan")
        if plan is None or plan[0] != _version[0]:
            eager = any(((cell._forward_pre_hooks or cell._forward_hooks) and cell is not self) or cell._eager_only
                        for _, cell in self.cells_and_names())
            plan = (_version[0], eager)
            object.__setattr__(self, "_eager_plan", plan)
        return plan[1]

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile ``construct`` for these inputs without running it."""
        from ..jit.cell_call import compiled_for
        compiled_for(self, args, kwargs)

    def compile_and_run(self, *args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)

    def register_forward_pre_hook(self, hook_fn: Callable) -> _HookHandle:
        """Call ``hook_fn(cell, inputs)`` before every call; a non-None result replaces the inputs."""
        return self._register(self._forward_pre_hooks, hook_fn)

    def register_forward_hook(self, hook_fn: Callable) -> _HookHandle:
        """Call ``hook_fn(cell, inputs, output)`` after every call; a non-None result replaces the output."""
        return self._register(self._forward_hooks, hook_fn)

    def register_backward_hook(self, hook_fn: Callable) -> _HookHandle:
        """Record a backward hook (called by compiled training when gradients reach this cell)."""
        return self._register(self._backward_hooks, hook_fn)

    def _register(self, table: dict, hook_fn: Callable) -> _HookHandle:
        if not callable(hook_fn):
            raise TypeError(f"hook_fn: expected a callable, got {type(hook_fn).__name__}")
        handle = _HookHandle(table)
        table[handle.handle_id] = hook_fn
        _version[0] = next(_STRUCTURE_VERSION)
        return handle

    # -- parameters -----------------------------------------------------------------------------
    def parameters_and_names(self, name_prefix: str = "", expand: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(attribute path, parameter)`` for this cell's parameters (and sub-cells' if ``expand``)."""
        seen: set[int] = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        for cell_name, cell in cells:
            for name, param in cell._params.items():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{cell_name}.{name}" if cell_name else name), param

    def get_parameters(self, expand: bool = True) -> Iterator[Parameter]:
        for _, param in self.parameters_and_names(expand=expand):
            yield param

    def trainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse: bool = True) -> OrderedDict:
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def insert_param_to_cell(self, param_name: str, param: Parameter, check_name_contain_dot: bool = True) -> None:
        """Add ``param`` as attribute ``param_name``."""
        if not isinstance(param_name, str) or not param_name:
            raise KeyError(f"param_name: expected a non-empty str, got {param_name!r}")
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"param_name: must not contain '.', got {param_name!r}")
        if not isinstance(param, Parameter) and param is not None:
            raise TypeError(f"param: expected a Parameter, got {type(param).__name__}")
        if param is not None and _is_generated_name(param.name):
            param.name = param_name
        _version[0] = next(_STRUCTURE_VERSION)
        self._params[param_name] = param

    # -- cells ------------------------------------------------------------------------------------
    def cells_and_names(self, cells: set | None = None, name_prefix: str = "") -> Iterator[tuple[str, Cell]]:
        """Yield ``(name, cell)`` for this cell and every sub-cell, each once."""
        seen = cells if cells is not None else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            if cell is not None:
                yield from cell.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix else name)

    def cells(self):
        """The immediate sub-cells (``odict_values``, as MindSpore prints them)."""
        return self.name_cells().values()

    def name_cells(self) -> OrderedDict:
        return OrderedDict((n, c) for n, c in self._cells.items() if c is not None)

    def insert_child_to_cell(self, child_name: str, child_cell: Cell) -> None:
        """Add ``child_cell`` as attribute ``child_name`` (its parameter names are left as they are)."""
        if not isinstance(child_name, str) or not child_name or "." in child_name:
            raise KeyError(f"child_name: expected a non-empty str without '.', got {child_name!r}")
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError(f"child_cell: expected a Cell, got {type(child_cell).__name__}")
        _version[0] = next(_STRUCTURE_VERSION)
        self._cells[child_name] = child_cell

    def apply(self, fn: Callable[[Cell], None]) -> Cell:
        """Call ``fn`` on every sub-cell, then on this cell; returns self."""
        for cell in self.cells():
            cell.apply(fn)
        fn(self)
        return self

    # -- modes and flags ----------------------------------------------------------------------------
    def set_train(self, mode: bool = True) -> Cell:
        """Put this cell and its sub-cells in training (True) or inference (False) mode."""
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        _structure_changed()
        return self

    @property
    def phase(self) -> str:
        return "train" if self.training else "predict"

    def set_grad(self, requires_grad: bool = True) -> Cell:
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    def to_float(self, dst_type) -> Cell:
        """Run this cell (and its sub-cells) in ``dst_type`` (float16 or float32); parameters keep their dtype."""
        dst_type = mstype.normalize(dst_type)
        if dst_type not in (mstype.float16, mstype.float32):
            raise ValueError(f"dst_type: expected float16 or float32, got {dst_type}")
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "_mixed_precision", dst_type)
        _version[0] = next(_STRUCTURE_VERSION)
        return self

    def add_flags(self, **flags: Any) -> Cell:
        self._flags.update(flags)
        for key, value in flags.items():
            object.__setattr__(self, key, value)
        return self

    def add_flags_recursive(self, **flags: Any) -> Cell:
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self) -> dict:
        return dict(self._flags)

    @property
    def auto_prefix(self) -> bool:
        return self._auto_prefix

    # -- buffers and state -----------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a non-trainable tensor ``name`` to the cell's state."""
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"name: expected a non-empty str without '.', got {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"tensor: expected a Tensor or None, got {type(tensor).__name__}")
        buffer = tensor if tensor is None or isinstance(tensor, Buffer) else Buffer(tensor)
        if buffer is not None:
            buffer.name = name
        self._buffers[name] = buffer
        if not persistent:
            self._non_persistent.add(name)

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        cells = self.cells_and_names(name_prefix=prefix) if recurse else [(prefix, self)]
        for cell_name, cell in cells:
            for name, buf in cell._buffers.items():
                if buf is not None:
                    yield (f"{cell_name}.{name}" if cell_name else name), buf

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_buffer(self, target: str) -> Tensor:
        *path, name = target.split(".")
        cell = self
        for part in path:
            cell = cell._cells.get(part)
            if cell is None:
                raise AttributeError(f"target: no sub-cell {part!r} in {target!r}")
        if name not in cell._buffers:
            raise AttributeError(f"target: {target!r} is not a buffer")
        return cell._buffers[name]

    def state_dict(self, *args: Any, destination: OrderedDict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """Parameters then persistent buffers, keyed by attribute path."""
        state = destination if destination is not None else OrderedDict()
        for name, param in self.parameters_and_names(name_prefix=prefix.rstrip(".")):
            state[name] = param
        for cell_name, cell in self.cells_and_names(name_prefix=prefix.rstrip(".")):
            for name, buf in cell._buffers.items():
                if buf is not None and name not in cell._non_persistent:
                    state[f"{cell_name}.{name}" if cell_name else name] = buf
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True):
        """Copy values from ``state_dict`` into parameters and buffers by attribute path.

        Returns:
            a named tuple ``(missing_keys, unexpected_keys)``.
        Raises:
            RuntimeError: with ``strict``, keys missing or unexpected; or a shape mismatch.
        """
        from collections import namedtuple
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for key, value in state_dict.items():
            if key not in own:
                continue
            array = value.asnumpy() if isinstance(value, Tensor) else np.asarray(value)
            if tuple(array.shape) != tuple(own[key].shape):
                raise RuntimeError(f"load_state_dict: {key!r} expects shape {own[key].shape}, got {array.shape}")
            target = own[key]
            if isinstance(target, Parameter):
                target.set_data(array)
            else:
                target._data[...] = array
                target._version += 1
        return namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])(missing, unexpected)

    # -- printing -------------------------------------------------------------------------------------
    def extend_repr(self) -> str:
        """Extra text shown inside this cell's repr (subclasses override)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extend_repr()
        children = [f"({name}): {cell!r}".replace("\n", "\n  ") for name, cell in self._cells.items() if cell is not None]
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = ([extra] if extra else []) + children
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_jit_cache"] = {}
        # per-process call caches hold compiled modules, which neither copy nor pickle
        state.pop("_call_memo", None)
        state.pop("_eager_plan", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
