"""The dataset pipeline (``mindspore.dataset.Dataset``): rows of numpy arrays flowing through batch, map,
shuffle and repeat, read out as Tensors. Pure Python and numpy, one process."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from . import config

Row = tuple  # one value (numpy array) per column


def _as_list(value: Any, arg: str, op: str) -> list:
    if value is None:
        return []
    items = [value] if isinstance(value, (str, Callable)) and not isinstance(value, (list, tuple)) else value
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"{op}: {arg} must be a str/callable or a list of them, got {type(value).__name__}")
    return list(items)


def _as_array(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


class Dataset:
    """Base of every dataset: a source of rows plus the operations chained on it.

    Each method returns a new dataset; iterating one runs its pipeline from the source.
    """

    def __init__(self, children: Sequence[Dataset] = ()):
        self.children = list(children)
        self._size: int | None = None

    # -- what subclasses provide --------------------------------------------------------------------
    def get_col_names(self) -> list[str]:
        """Names of the columns each row carries."""
        return self.children[0].get_col_names()

    def _rows(self) -> Iterator[Row]:
        raise NotImplementedError

    # -- pipeline operations ----------------------------------------------------------------------
    def batch(self, batch_size: int, drop_remainder: bool = False, num_parallel_workers: int | None = None,
              **kwargs: Any) -> BatchDataset:
        """Stack ``batch_size`` consecutive rows into one (per column).

        Args:
            batch_size (int): rows per batch (> 0).
            drop_remainder (bool): drop a last, smaller batch. Default: False.
            num_parallel_workers (int): accepted; batches are made in this process.
        Raises:
            TypeError / ValueError: bad ``batch_size`` or ``drop_remainder``; NotImplementedError for
                ``per_batch_map``/``input_columns`` (not supported).
        """
        return BatchDataset(self, batch_size, drop_remainder, kwargs)

    def map(self, operations: Any = None, input_columns: Any = None, output_columns: Any = None,
            num_parallel_workers: int | None = None, **kwargs: Any) -> MapDataset:
        """Apply ``operations`` (callables, in order) to ``input_columns`` of every row.

        Args:
            operations (Union[Callable, list[Callable]]): each gets the column values and returns the new
                value (or a tuple of values).
            input_columns (Union[str, list[str]]): default: the first column.
            output_columns (Union[str, list[str]]): names of the results; default: ``input_columns``.
        Raises:
            TypeError: an operation is not callable; ValueError: an unknown column.
        """
        return MapDataset(self, operations, input_columns, output_columns)

    def shuffle(self, buffer_size: int) -> ShuffleDataset:
        """Shuffle rows through a buffer of ``buffer_size`` rows (seeded by ``dataset.config.set_seed``).

        Raises:
            TypeError / ValueError: ``buffer_size`` is not an int >= 2.
        """
        return ShuffleDataset(self, buffer_size)

    def repeat(self, count: int | None = None) -> RepeatDataset:
        """Run the pipeline ``count`` times (None or -1: forever)."""
        return RepeatDataset(self, count)

    def take(self, count: int = -1) -> TakeDataset:
        """Only the first ``count`` rows (-1: all)."""
        return TakeDataset(self, count)

    def project(self, columns: Any) -> MapDataset:
        """Keep only ``columns``, in that order."""
        return ProjectDataset(self, _as_list(columns, "columns", "project"))

    # -- reading --------------------------------------------------------------------------------------
    def create_tuple_iterator(self, columns: Any = None, num_epochs: int = -1, output_numpy: bool = False,
                              do_copy: bool = True) -> Iterator[list]:
        """Iterate the rows as lists of Tensors (numpy arrays with ``output_numpy``)."""
        names = self.get_col_names()
        wanted = [names.index(c) for c in _as_list(columns, "columns", "create_tuple_iterator")] or None
        for row in self._rows():
            values = row if wanted is None else tuple(row[i] for i in wanted)
            yield [self._out(v, output_numpy) for v in values]

    def create_dict_iterator(self, num_epochs: int = -1, output_numpy: bool = False,
                             do_copy: bool = True) -> Iterator[dict]:
        """Iterate the rows as dicts column name -> Tensor (numpy array with ``output_numpy``)."""
        names = self.get_col_names()
        for row in self._rows():
            yield {name: self._out(value, output_numpy) for name, value in zip(names, row)}

    def __iter__(self):
        return self.create_tuple_iterator()

    @staticmethod
    def _out(value: np.ndarray, output_numpy: bool):
        if output_numpy:
            return value
        from ..common.tensor import Tensor
        return Tensor(value)

    def get_dataset_size(self) -> int:
        """Number of rows (batches after ``batch``) one pass yields; -1 for an endless repeat."""
        if self._size is None:
            self._size = self._count()
        return self._size

    def _count(self) -> int:
        return sum(1 for _ in self._rows())

    def get_batch_size(self) -> int:
        return self.children[0].get_batch_size() if self.children else 1

    def get_repeat_count(self) -> int:
        return self.children[0].get_repeat_count() if self.children else 1

    def output_shapes(self) -> list[list[int]]:
        row = next(self._rows())
        return [list(np.shape(v)) for v in row]

    def output_types(self) -> list[np.dtype]:
        row = next(self._rows())
        return [np.asarray(v).dtype for v in row]

    def __len__(self) -> int:
        return self.get_dataset_size()


def _positive_int(value: Any, arg: str, op: str, low: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{op}: {arg} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{op}: {arg} must be >= {low}, got {value}")
    return value


class BatchDataset(Dataset):
    def __init__(self, child: Dataset, batch_size: int, drop_remainder: bool, kwargs: dict):
        super().__init__([child])
        self.batch_size = _positive_int(batch_size, "batch_size", "batch")
        if not isinstance(drop_remainder, bool):
            raise TypeError(f"batch: drop_remainder must be a bool, got {type(drop_remainder).__name__}")
        unsupported = [k for k in ("per_batch_map", "input_columns", "output_columns") if kwargs.get(k) is not None]
        if unsupported:
            raise NotImplementedError(f"batch: {unsupported} are not implemented by aotnn's dataset package")
        self.drop_remainder = drop_remainder

    def _rows(self):
        pending: list[Row] = []
        for row in self.children[0]._rows():
            pending.append(row)
            if len(pending) == self.batch_size:
                yield self._stack(pending)
                pending = []
        if pending and not self.drop_remainder:
            yield self._stack(pending)

    @staticmethod
    def _stack(rows: list[Row]) -> Row:
        columns = []
        for index in range(len(rows[0])):
            try:
                columns.append(np.stack([np.asarray(row[index]) for row in rows]))
            except ValueError as error:
                shapes = sorted({np.shape(row[index]) for row in rows})
                raise ValueError(f"batch: column {index} has rows of different shapes {shapes}; "
                                 f"they must match to be batched") from error
        return tuple(columns)

    def get_batch_size(self) -> int:
        return self.batch_size


class MapDataset(Dataset):
    def __init__(self, child: Dataset, operations: Any, input_columns: Any, output_columns: Any):
        super().__init__([child])
        self.operations = _as_list(operations, "operations", "map")
        for op in self.operations:
            if not callable(op):
                raise TypeError(f"map: operations must be callable, got {type(op).__name__}")
        names = child.get_col_names()
        self.input_columns = _as_list(input_columns, "input_columns", "map") or names[:1]
        for name in self.input_columns:
            if name not in names:
                raise ValueError(f"map: input column {name!r} is not among the columns {names}")
        self.output_columns = _as_list(output_columns, "output_columns", "map") or list(self.input_columns)
        self._in_index = [names.index(n) for n in self.input_columns]
        first = self._in_index[0]
        kept = [n for n in names if n not in self.input_columns]
        # the results take the place of the first input column; other inputs are consumed
        before = [n for n in names[:first] if n not in self.input_columns]
        self._names = before + self.output_columns + [n for n in kept if n not in before]

    def get_col_names(self):
        return list(self._names)

    def _rows(self):
        names = self.children[0].get_col_names()
        for row in self.children[0]._rows():
            values = tuple(row[i] for i in self._in_index)
            for op in self.operations:
                result = op(*values)
                values = tuple(result) if isinstance(result, tuple) else (result,)
            if len(values) != len(self.output_columns):
                raise ValueError(f"map: the operations returned {len(values)} values for output columns "
                                 f"{self.output_columns}")
            by_name = {n: row[i] for i, n in enumerate(names) if n not in self.input_columns}
            by_name.update({n: _as_array(v) for n, v in zip(self.output_columns, values)})
            yield tuple(by_name[n] for n in self._names)


class ProjectDataset(Dataset):
    def __init__(self, child: Dataset, columns: list):
        super().__init__([child])
        names = child.get_col_names()
        for name in columns:
            if name not in names:
                raise ValueError(f"project: column {name!r} is not among the columns {names}")
        self._names, self._index = list(columns), [names.index(c) for c in columns]

    def get_col_names(self):
        return list(self._names)

    def _rows(self):
        for row in self.children[0]._rows():
            yield tuple(row[i] for i in self._index)


class ShuffleDataset(Dataset):
    def __init__(self, child: Dataset, buffer_size: int):
        super().__init__([child])
        self.buffer_size = _positive_int(buffer_size, "buffer_size", "shuffle", low=2)

    def _rows(self):
        rng, buffer = config.rng(), []
        for row in self.children[0]._rows():
            buffer.append(row)
            if len(buffer) == self.buffer_size:
                yield buffer.pop(int(rng.integers(len(buffer))))
        while buffer:
            yield buffer.pop(int(rng.integers(len(buffer))))


class RepeatDataset(Dataset):
    def __init__(self, child: Dataset, count: int | None):
        super().__init__([child])
        if count is not None and count != -1:
            _positive_int(count, "count", "repeat")
        self.count = -1 if count is None else count

    def _rows(self):
        done = 0
        while self.count == -1 or done < self.count:
            yield from self.children[0]._rows()
            done += 1

    def _count(self) -> int:
        return -1 if self.count == -1 else self.count * self.children[0].get_dataset_size()

    def get_repeat_count(self) -> int:
        return self.count


class TakeDataset(Dataset):
    def __init__(self, child: Dataset, count: int):
        super().__init__([child])
        if count != -1:
            _positive_int(count, "count", "take")
        self.count = count

    def _rows(self):
        for index, row in enumerate(self.children[0]._rows()):
            if self.count != -1 and index >= self.count:
                return
            yield row
