"""Temporary files and folders aotnn writes beside the user's: named after their writer, removed on
failure, and the ones a killed writer left behind removed by the next write to the same folder.

A temporary name is ``KIND HOST-PID-RANDOM SUFFIX`` (``.tmp-1a2b3c4d-4242-9f8e7d6c.json``): HOST is a
hash of this machine's name and PID the writing process. A leftover is stale when its writer, on this
machine, is no longer running; a name from another machine (a shared folder) is stale once it is
older than :data:`FOREIGN_STALE_AFTER_S`. A live writer's files are never touched, so two processes
writing to one folder do not remove each other's work.
"""
from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import socket
import time
from collections.abc import Callable, Collection
from typing import Any

TEMP_KIND = ".tmp-"
# Leftovers of a writer on another machine, or of an aotnn version that did not name its writer.
FOREIGN_STALE_AFTER_S = 3600.0
_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def owned_name(kind: str, suffix: str = "") -> str:
    """A fresh temporary name for this process: ``kind`` + host tag + pid + random hex + ``suffix``."""
    return f"{kind}{_host_tag()}-{os.getpid()}-{secrets.token_hex(4)}{suffix}"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process, or not a pid we can ask about: keep its files
    return True


def _tagged_pattern(kind: str) -> re.Pattern:
    return re.compile(re.escape(kind) + r"([0-9a-f]{8})-(\d{1,10})-[0-9a-f]{8}(\.[A-Za-z0-9]{1,8})?")


def _untagged_pattern(kind: str) -> re.Pattern:
    # tempfile.mkstemp/mkdtemp's names: kind + 8 characters of [a-z0-9_] + suffix (older aotnn versions).
    return re.compile(re.escape(kind) + r"[a-z0-9_]{8}(\.[A-Za-z0-9]{1,8})?")


def _older_than(path: str, seconds: float) -> bool:
    try:
        return time.time() - os.lstat(path).st_mtime > seconds
    except OSError:
        return False


def is_stale(path: str, kind: str, untagged: bool = False) -> bool:
    """Whether ``path`` is a temporary of kind ``kind`` whose writer is gone.

    Args:
        path: the file or folder.
        kind: the name prefix (``.tmp-``, ``.aotnn-build-``, ``weights-``).
        untagged: also count names without a writer tag (older aotnn versions) once they are older
            than :data:`FOREIGN_STALE_AFTER_S`; only for folders that are aotnn's own.
    Returns:
        True for a leftover that may be removed; False for anything else, a live writer's included.
    """
    name = os.path.basename(path)
    tagged = _tagged_pattern(kind).fullmatch(name)
    if tagged:
        if tagged.group(1) == _host_tag():
            return not _pid_alive(int(tagged.group(2)))
        return _older_than(path, FOREIGN_STALE_AFTER_S)
    if untagged and _untagged_pattern(kind).fullmatch(name):
        return _older_than(path, FOREIGN_STALE_AFTER_S)
    return False


def remove_path(path: str) -> None:
    """Remove a file, link or folder tree; quietly if it is already gone or cannot be removed."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
    except OSError:
        pass


def remove_stale(directory: str, kinds: Collection[str], untagged: bool = False,
                 keep: Collection[str] = ()) -> list[str]:
    """Remove the stale temporaries (:func:`is_stale`) of the given kinds directly in ``directory``.

    Args:
        directory: the folder to tidy; nothing happens if it does not exist.
        kinds: name prefixes to look for.
        untagged: see :func:`is_stale`.
        keep: names never removed (files a manifest references).
    Returns:
        The names removed.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for name in names:
        if name in keep:
            continue
        path = os.path.join(directory, name)
        if any(name.startswith(kind) and is_stale(path, kind, untagged) for kind in kinds):
            remove_path(path)
            removed.append(name)
    return removed


def create_owned_file(directory: str, kind: str, suffix: str = "") -> tuple[int, str]:
    """Create a new empty file with an :func:`owned_name` in ``directory``.

    The mode is 0666 less the umask (0644 usually), as ``open`` gives.

    Returns:
        (file descriptor open for writing, path).
    """
    for _ in range(100):
        path = os.path.join(directory, owned_name(kind, suffix))
        try:
            return os.open(path, _OPEN_FLAGS, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file in {directory!r}")


def create_owned_dir(parent: str, kind: str) -> str:
    """Create a new folder with an :func:`owned_name` in ``parent`` (mode 0777 less the umask)."""
    for _ in range(100):
        path = os.path.join(parent, owned_name(kind))
        try:
            os.mkdir(path, 0o777)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary folder in {parent!r}")


def atomic_write(path: str, write: Callable[[Any], Any], suffix: str = "") -> None:
    """Write ``path`` whole or not at all: ``write(stream)`` fills a temporary file in the same
    folder, which then replaces ``path`` by a rename. The temporary is removed if anything fails
    (KeyboardInterrupt included); stale temporaries of killed writers in that folder are removed first.

    Args:
        path: the file to write.
        write: called with a binary stream.
        suffix: the temporary's name ending (some writers look at it, e.g. ``.npz``).
    Raises:
        IsADirectoryError: ``path`` is a folder.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path!r} is a directory; expected a file path to write")
    remove_stale(directory, [TEMP_KIND])
    fd, temp = create_owned_file(directory, TEMP_KIND, suffix)
    try:
        with os.fdopen(fd, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, path)
    except BaseException:
        remove_path(temp)
        raise
