"""Containers: SequentialCell runs cells in order, CellList holds them like a list."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from .cell import Cell


def _check_cell(value: Any, what: str) -> Cell:
    if not isinstance(value, Cell):
        raise TypeError(f"{what}: expected a Cell, got {type(value).__name__}")
    return value


def _prefix_and_index(cells: OrderedDict) -> tuple[str, int]:
    """The name prefix the cells' parameters carry before their own key, and that key's position in a
    dot-split name: MindSpore's rule, read off the first (and second) cell with parameters, so that cells
    added later are named like the ones already there."""
    found = []
    for key, cell in cells.items():
        param = next((p for _, p in cell.parameters_and_names()), None)
        if param is not None:
            found.append((key, param))
            if len(found) == 2:
                break
    if not found:
        return "", 0
    (first_key, first_param), second = found[0], (found[1] if len(found) > 1 else None)
    prefix, index = "", 0
    parts = first_param.name.split(".")
    for position, part in enumerate(parts):
        if part == first_key:
            prefix = ".".join(parts[:position])
            prefix = prefix + "." if prefix else prefix
            index = position
            if second is not None:
                second_parts = second[1].name.split(".")
                if position < len(second_parts) and second_parts[position] == second[0]:
                    break
    return prefix, index


def _check_index(count: int, index: Any, inserting: bool = False) -> int:
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"index: expected an int, got {type(index).__name__}")
    high = count + 1 if inserting else count
    if not -count <= index < high:
        raise IndexError(f"index: expected a number in [{-count}, {high}), got {index}")
    if inserting:
        return index % count if count and index != count else index
    return index % count


def _renumber(cell: Cell, prefix: str, key_index: int, new_key: str) -> None:
    """Rename a moved cell's parameters: the part after the old key stays, the key becomes ``new_key``."""
    for _, param in cell.parameters_and_names():
        rest = ".".join(param.name.split(".")[key_index + 1:])
        param.name = f"{prefix}{new_key}.{rest}"


class SequentialCell(Cell):
    """Cells run one after the other.

    Parameters are named as MindSpore 2.x names them: a cell at position ``i`` gets ``i.`` (or its key, for
    the OrderedDict form) before its own parameter paths; the container's attribute name is added when the
    container is assigned to another cell.

    Args:
        args: Cells, one Cell, one list of Cells, or one OrderedDict of named Cells.
    Raises:
        TypeError: an entry is not a Cell, or the single argument is none of these.
    """

    def __init__(self, *args: Any):
        super().__init__()
        object.__setattr__(self, "_is_dynamic_name", [])
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, cell in args[0].items():
                self._add(name, _check_cell(cell, f"args[{name!r}]"), dynamic=False)
        elif len(args) == 1 and not isinstance(args[0], Cell):
            if not isinstance(args[0], list):
                raise TypeError(f"SequentialCell: args[0] must be a Cell, list or OrderedDict, got "
                                f"{type(args[0]).__name__}")
            for index, cell in enumerate(args[0]):
                self._add(str(index), _check_cell(cell, f"args[0][{index}]"), dynamic=True)
        else:
            for index, cell in enumerate(args):
                self._add(str(index), _check_cell(cell, f"args[{index}]"), dynamic=True)

    def _add(self, key: str, cell: Cell, dynamic: bool) -> None:
        self.insert_child_to_cell(key, cell)
        cell.update_parameters_name(key + ".")
        self._is_dynamic_name.append(dynamic)

    def __getitem__(self, index: int | slice) -> Cell | SequentialCell:
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._cells.items())[index]))
        return list(self._cells.values())[_check_index(len(self), index)]

    def __setitem__(self, index: int, cell: Cell) -> None:
        _check_cell(cell, "cell")
        prefix, _ = _prefix_and_index(self._cells)
        key = list(self._cells.keys())[_check_index(len(self), index)]
        self._cells[key] = cell
        cell.update_parameters_name(prefix + key + ".")

    def __delitem__(self, index: int | slice) -> None:
        keys = list(self._cells.keys())
        if isinstance(index, slice):
            removed = keys[index]
            del self._is_dynamic_name[index]
        else:
            position = _check_index(len(self), index)
            removed = [keys[position]]
            del self._is_dynamic_name[position]
        for key in removed:
            del self._cells[key]
        prefix, key_index = _prefix_and_index(self._cells)
        renumbered = OrderedDict()
        for position, (key, cell) in enumerate(self._cells.items()):
            if self._is_dynamic_name[position]:
                _renumber(cell, prefix, key_index, str(position))
                renumbered[str(position)] = cell
            else:
                renumbered[key] = cell
        self._cells.clear()
        self._cells.update(renumbered)

    def __len__(self) -> int:
        return len(self._cells)

    def __bool__(self) -> bool:
        return len(self._cells) != 0

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell: Cell) -> SequentialCell:
        """Add ``cell`` at the end (named like the cells already there)."""
        _check_cell(cell, "cell")
        prefix, _ = _prefix_and_index(self._cells)
        cell.update_parameters_name(prefix + str(len(self)) + ".")
        self._is_dynamic_name.append(True)
        self._cells[str(len(self))] = cell
        return self

    def construct(self, input_data):
        for cell in self._cells.values():
            input_data = cell(input_data)
        return input_data


class CellList(Cell):
    """A list of Cells whose parameters the parent sees.

    Parameters are named as MindSpore 2.x names them: cells appended to a list that is already an attribute
    of another cell are named from the list's first cell's parameter names (``0.blocks...`` when the list was
    empty then), not from the attribute path; checkpoints hold these names.

    Args:
        args: an optional list of Cells.
        auto_prefix (bool): prefix the cells' parameter names with their index. Default: True.
    Raises:
        TypeError: ``args[0]`` is not a list, or an entry is not a Cell.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(auto_prefix=kwargs.get("auto_prefix", True))
        if len(args) == 1:
            self.extend(args[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return CellList(list(self._cells.values())[index])
        return self._cells[str(_check_index(len(self), index))]

    def __setitem__(self, index: int, cell: Cell) -> None:
        _check_cell(cell, "cell")
        index = _check_index(len(self), index)
        if self._auto_prefix:
            prefix, _ = _prefix_and_index(self._cells)
            cell.update_parameters_name(prefix + str(index) + ".")
        self._cells[str(index)] = cell

    def __delitem__(self, index: int | slice) -> None:
        keys = list(self._cells.keys())
        if isinstance(index, slice):
            removed = keys[index]
        else:
            removed = [str(_check_index(len(self), index))]
        for key in removed:
            del self._cells[key]
        prefix, key_index = _prefix_and_index(self._cells)
        cells = list(self._cells.values())
        self._cells.clear()
        for position, cell in enumerate(cells):
            if self._auto_prefix:
                _renumber(cell, prefix, key_index, str(position))
            self._cells[str(position)] = cell

    def __len__(self) -> int:
        return len(self._cells)

    def __bool__(self) -> bool:
        return len(self._cells) != 0

    def __iter__(self):
        return iter(self._cells.values())

    def __iadd__(self, cells):
        return self.extend(cells)

    def append(self, cell: Cell) -> CellList:
        """Add ``cell`` at the end."""
        _check_cell(cell, "cell")
        if self._auto_prefix:
            prefix, _ = _prefix_and_index(self._cells)
            cell.update_parameters_name(prefix + str(len(self)) + ".")
        self._cells[str(len(self))] = cell
        return self

    def extend(self, cells: list) -> CellList:
        """Add each of ``cells`` at the end.

        Raises:
            TypeError: ``cells`` is not a list, or an entry is not a Cell.
        """
        if not isinstance(cells, list):
            raise TypeError(f"cells: expected a list of Cells, got {type(cells).__name__}")
        prefix, _ = _prefix_and_index(self._cells)
        for index, cell in enumerate(cells):
            _check_cell(cell, f"cells[{index}]")
            if self._auto_prefix:
                cell.update_parameters_name(prefix + str(len(self)) + ".")
            self._cells[str(len(self))] = cell
        return self

    def insert(self, index: int, cell: Cell) -> None:
        """Insert ``cell`` before position ``index``; the cells after it move up (and are renamed)."""
        position = _check_index(len(self), index, inserting=True)
        _check_cell(cell, "cell")
        length = len(self)
        prefix, key_index = _prefix_and_index(self._cells)
        while length > position:
            moved = self._cells[str(length - 1)]
            if self._auto_prefix:
                _renumber(moved, prefix, key_index, str(length))
            self._cells[str(length)] = moved
            length -= 1
        self._cells[str(position)] = cell
        if self._auto_prefix:
            cell.update_parameters_name(prefix + str(position) + ".")

    def construct(self, *inputs):
        raise NotImplementedError("CellList is a container; call its cells in your own construct")
