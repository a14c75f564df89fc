"""``aotnn.dataset`` (``mindspore.dataset``): in-memory data pipelines in pure Python and numpy.

GeneratorDataset and NumpySlicesDataset feed ``batch``, ``map``, ``shuffle``, ``repeat`` and are read with
``create_tuple_iterator``/``create_dict_iterator`` (or by ``Model.train``/``Model.eval``). Everything runs in
the calling process; ``num_parallel_workers`` and ``python_multiprocessing`` are accepted and ignored.
File-format datasets (ImageFolderDataset, MnistDataset, Cifar10Dataset...) are importable names that raise
NotImplementedError; ``vision`` and ``transforms`` hold the few numpy transforms listed there and stubs.
"""
from . import config, transforms, vision
from .engine import Dataset
from .samplers import DistributedSampler, RandomSampler, Sampler, SequentialSampler
from .sources import (Cifar10Dataset, Cifar100Dataset, GeneratorDataset, ImageFolderDataset, MindDataset,
                      MnistDataset, NumpySlicesDataset)

__all__ = ["config", "transforms", "vision", "Dataset", "GeneratorDataset", "NumpySlicesDataset", "Sampler",
           "SequentialSampler", "RandomSampler", "DistributedSampler", "ImageFolderDataset", "MnistDataset",
           "Cifar10Dataset", "Cifar100Dataset", "MindDataset"]
