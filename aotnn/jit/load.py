"""``aotnn.load``: open an artifact written by ``aotnn.export`` as a graph for ``nn.GraphCell``."""
from __future__ import annotations

import os
from typing import Any

import aotnn_runtime


def load(file_name: str | os.PathLike, **kwargs: Any) -> aotnn_runtime.Module:
    """Load the compiled graph in ``file_name`` (an 'AOT' artifact of :func:`aotnn.export`), MindSpore's ``load``.

    Args:
        file_name (str): the artifact path; '.aot' is appended when the path does not exist without it.
        kwargs: MindSpore's decryption/obfuscation options (``dec_key``, ``dec_mode``, ``obf_func``):
            artifacts are never encrypted, so any of them given a value other than None is refused.

    Returns:
        the loaded graph (an ``aotnn_runtime.Module``); run it with ``nn.GraphCell(graph)``.

    Raises:
        TypeError: ``file_name`` is not a str or path.
        ValueError: the file does not exist, or an encryption option is given.
        aotnn_runtime.ArtifactError: the file is not a complete, loadable artifact.
    """
    if not isinstance(file_name, (str, os.PathLike)):
        raise TypeError(f"file_name: expected a str, got {type(file_name).__name__}")
    for option in ("dec_key", "dec_mode", "obf_func"):
        if kwargs.get(option) is not None and not (option == "dec_mode" and kwargs[option] == "AES-GCM"):
            raise ValueError(f"{option}: aotnn artifacts are not encrypted or obfuscated, got {kwargs[option]!r}")
    path = os.fspath(file_name)
    if not os.path.exists(path) and os.path.exists(path + ".aot"):
        path += ".aot"
    if not os.path.exists(path):
        raise ValueError(f"file_name: the file {path!r} does not exist")
    if not os.path.isdir(path):
        raise aotnn_runtime.ArtifactError(f"file_name: {path!r} is not an aotnn artifact (a directory written by "
                                          f"aotnn.export with file_format='AOT')")
    return aotnn_runtime.load(path)
