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


class SequentialCell(Cell):
    """Cells run one after the other.

    Args:
        args: Cells, one list of Cells, or one OrderedDict of named Cells.
    Raises:
        TypeError: an entry is not a Cell.
    """

    def __init__(self, *args: Any):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, cell in args[0].items():
                self.insert_child_to_cell(name, _check_cell(cell, f"args[{name!r}]"))
                cell._rename_parameters(name + ".")
        else:
            cells = args[0] if len(args) == 1 and isinstance(args[0], list) else args
            for index, cell in enumerate(cells):
                setattr(self, str(index), _check_cell(cell, f"args[{index}]"))

    def __getitem__(self, index: int | slice) -> Cell | SequentialCell:
        cells = list(self._cells.values())
        if isinstance(index, slice):
            return SequentialCell(cells[index])
        return cells[index]

    def __setitem__(self, index: int, cell: Cell) -> None:
        key = list(self._cells.keys())[index]
        setattr(self, key, _check_cell(cell, "cell"))

    def __delitem__(self, index: int) -> None:
        key = list(self._cells.keys())[index]
        del self._cells[key]

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell: Cell) -> SequentialCell:
        setattr(self, str(len(self._cells)), _check_cell(cell, "cell"))
        return self

    def construct(self, input_data):
        for cell in self._cells.values():
            input_data = cell(input_data)
        return input_data


class CellList(Cell):
    """A list of Cells whose parameters the parent sees.

    Args:
        args: an optional iterable of Cells.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(**kwargs)
        if args:
            self.extend(args[0])

    def __getitem__(self, index):
        cells = list(self._cells.values())
        if isinstance(index, slice):
            return CellList(cells[index])
        return cells[index]

    def __setitem__(self, index: int, cell: Cell) -> None:
        key = list(self._cells.keys())[index]
        setattr(self, key, _check_cell(cell, "cell"))

    def __delitem__(self, index: int) -> None:
        keys = list(self._cells.keys())
        del self._cells[keys[index]]
        cells = list(self._cells.values())
        self._cells.clear()
        for i, cell in enumerate(cells):
            self._cells[str(i)] = cell

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell: Cell) -> CellList:
        setattr(self, str(len(self._cells)), _check_cell(cell, "cell"))
        return self

    def extend(self, cells: Iterable[Cell]) -> CellList:
        for cell in cells:
            self.append(cell)
        return self

    def insert(self, index: int, cell: Cell) -> None:
        cells = list(self._cells.values())
        cells.insert(index, _check_cell(cell, "cell"))
        self._cells.clear()
        for i, item in enumerate(cells):
            self._cells[str(i)] = item

    def construct(self, *inputs):
        raise NotImplementedError("CellList is a container; call its cells in your own construct")
