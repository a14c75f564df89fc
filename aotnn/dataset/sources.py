"""Source datasets: GeneratorDataset (a Python source) and NumpySlicesDataset (arrays sliced along axis 0)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._stub import unimplemented
from .engine import Dataset, _as_array, _as_list
from .samplers import DistributedSampler, RandomSampler, Sampler, SequentialSampler


def _row(item: Any, width: int, source: str) -> tuple:
    values = tuple(item) if isinstance(item, (tuple, list)) else (item,)
    if len(values) != width:
        raise ValueError(f"{source}: the source gave a row of {len(values)} values for {width} columns")
    return tuple(_as_array(v) for v in values)


class _RandomAccessSource(Dataset):
    """Common to sources read by index: shuffle, sampler and sharding arguments."""

    def __init__(self, length: int, column_names: list, num_samples, shuffle, sampler, num_shards, shard_id):
        super().__init__()
        op = type(self).__name__
        if sampler is not None and not isinstance(sampler, Sampler):
            raise TypeError(f"{op}: sampler must be a dataset Sampler, got {type(sampler).__name__}")
        if sampler is not None and (shuffle is not None or num_shards is not None):
            raise ValueError(f"{op}: sampler cannot be combined with shuffle or num_shards")
        if (num_shards is None) != (shard_id is None):
            raise ValueError(f"{op}: num_shards and shard_id must be given together")
        if sampler is None:
            shuffle = True if shuffle is None else shuffle  # MindSpore: a random-access source shuffles by default
            if num_shards is not None:
                sampler = DistributedSampler(num_shards, shard_id, shuffle=shuffle, num_samples=num_samples)
            elif shuffle:
                sampler = RandomSampler(num_samples=num_samples)
            else:
                sampler = SequentialSampler(num_samples=num_samples)
        self.sampler, self._length, self._names = sampler, length, list(column_names)

    def get_col_names(self):
        return list(self._names)

    def _read(self, index: int) -> tuple:
        raise NotImplementedError

    def _rows(self):
        for index in self.sampler.indices(self._length):
            yield self._read(int(index))

    def _count(self) -> int:
        return len(self.sampler.indices(self._length))


class GeneratorDataset(_RandomAccessSource):
    """Rows from Python: a random-access source (``__getitem__`` + ``__len__``), an iterable, or a callable
    returning an iterator.

    Args:
        source (Union[Callable, Iterable, Random Accessible]): gives the rows (a tuple per row, one value per
            column).
        column_names (Union[str, list[str]]): the columns' names. Default: None (``column_0``, ... as the
            first row needs).
        num_samples (int): read at most this many rows. Default: None (all).
        num_parallel_workers (int): accepted; rows are read in this process.
        shuffle (bool): shuffle a random-access source; None means True there (MindSpore's default) and is
            the only choice for an iterable. Default: None.
        sampler (Sampler): which indices to read (random-access sources). Default: None.
        num_shards (int), shard_id (int): read one shard (random-access sources). Default: None.
    Raises:
        TypeError: ``source`` is none of these; ValueError: shuffle/sampler/sharding of an iterable source,
            or inconsistent arguments.
    """

    def __init__(self, source: Any, column_names: Any = None, column_types: Any = None, schema: Any = None,
                 num_samples: int | None = None, num_parallel_workers: int = 1, shuffle: bool | None = None,
                 sampler: Any = None, num_shards: int | None = None, shard_id: int | None = None,
                 python_multiprocessing: bool = True, max_rowsize: Any = None):
        names = _as_list(column_names, "column_names", "GeneratorDataset")
        self.source = source
        random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if random_access:
            if not names:
                names = [f"column_{i}" for i in range(self._peek_width(source[0]))]
            super().__init__(len(source), names, num_samples, shuffle, sampler, num_shards, shard_id)
            return
        if not (callable(source) or hasattr(source, "__iter__")):
            raise TypeError("GeneratorDataset: source must be callable, iterable or random accessible, got "
                            f"{type(source).__name__}")
        if shuffle or sampler is not None or num_shards is not None:
            raise ValueError("GeneratorDataset: shuffle, sampler and num_shards need a random-access source "
                             "(with __getitem__ and __len__)")
        Dataset.__init__(self)
        self.sampler, self._length, self.num_samples = None, None, num_samples
        self._names = names or [f"column_{i}" for i in range(self._peek_width(next(iter(self._iterate()))))]

    @staticmethod
    def _peek_width(item: Any) -> int:
        return len(item) if isinstance(item, (tuple, list)) else 1

    def _iterate(self) -> Iterator:
        return iter(self.source()) if callable(self.source) and not hasattr(self.source, "__iter__") \
            else iter(self.source)

    def _read(self, index: int) -> tuple:
        return _row(self.source[index], len(self._names), "GeneratorDataset")

    def _rows(self):
        if self.sampler is not None:
            yield from super()._rows()
            return
        for count, item in enumerate(self._iterate()):
            if self.num_samples and count >= self.num_samples:
                return
            yield _row(item, len(self._names), "GeneratorDataset")

    def _count(self) -> int:
        return super()._count() if self.sampler is not None else Dataset._count(self)


class NumpySlicesDataset(_RandomAccessSource):
    """Rows sliced along axis 0 of arrays: a list/ndarray (one column), a tuple (one column per entry) or
    a dict (column name -> array).

    Args:
        data (Union[list, tuple, dict, numpy.ndarray]): the data.
        column_names (list[str]): names; default ``column_0``, ... (a dict: its keys).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as
            :class:`GeneratorDataset` (shuffle: None means True).
    Raises:
        TypeError: ``data`` of another type; ValueError: columns of different lengths or a wrong number of
            names.
    """

    def __init__(self, data: Any, column_names: Any = None, num_samples: int | None = None,
                 num_parallel_workers: int = 1, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None):
        if isinstance(data, dict):
            names, columns = list(data), [np.asarray(v) for v in data.values()]
        elif isinstance(data, tuple):
            names, columns = [], [np.asarray(v) for v in data]
        elif isinstance(data, (list, np.ndarray)):
            names, columns = [], [np.asarray(data)]
        else:
            raise TypeError(f"NumpySlicesDataset: data must be a list, tuple, dict or numpy array, got "
                            f"{type(data).__name__}")
        given = _as_list(column_names, "column_names", "NumpySlicesDataset")
        names = given or names or [f"column_{i}" for i in range(len(columns))]
        if len(names) != len(columns):
            raise ValueError(f"NumpySlicesDataset: {len(names)} column_names for {len(columns)} columns")
        lengths = {len(c) for c in columns}
        if len(lengths) != 1:
            raise ValueError(f"NumpySlicesDataset: the columns have different lengths {sorted(lengths)}")
        self.columns = columns
        super().__init__(lengths.pop(), names, num_samples, shuffle, sampler, num_shards, shard_id)

    def _read(self, index: int) -> tuple:
        return tuple(c[index] for c in self.columns)


# file-format datasets mindcv imports at module level: importable, not implemented
_FILE_HINT = "read the files in Python and use GeneratorDataset"
ImageFolderDataset = unimplemented("ImageFolderDataset", "mindspore.dataset", _FILE_HINT)
MnistDataset = unimplemented("MnistDataset", "mindspore.dataset", _FILE_HINT)
Cifar10Dataset = unimplemented("Cifar10Dataset", "mindspore.dataset", _FILE_HINT)
Cifar100Dataset = unimplemented("Cifar100Dataset", "mindspore.dataset", _FILE_HINT)
MindDataset = unimplemented("MindDataset", "mindspore.dataset", _FILE_HINT)
