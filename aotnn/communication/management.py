"""Process groups: ``init``, ranks and sizes, user groups (MindSpore's ``communication.management``).

Every backend name MindSpore knows (hccl, nccl, mccl, mpi) runs on MPI here: start the processes with
``mpirun -n N python train.py``. A process started without ``mpirun`` is a world of one (rank 0, size 1);
that case works even without mpi4py installed.
"""
from __future__ import annotations

import os
from typing import Any

__all__ = ["GlobalComm", "init", "release", "get_rank", "get_group_size", "get_local_rank",
           "get_local_rank_size", "create_group", "destroy_group", "get_world_rank_from_group_rank",
           "get_group_rank_from_world_rank", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP",
           "MCCL_WORLD_COMM_GROUP", "MPI_WORLD_COMM_GROUP"]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"
MPI_WORLD_COMM_GROUP = "mpi_world_group"
_WORLD_NAMES = (HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP, MPI_WORLD_COMM_GROUP)
_BACKENDS = {None: HCCL_WORLD_COMM_GROUP, "hccl": HCCL_WORLD_COMM_GROUP, "nccl": NCCL_WORLD_COMM_GROUP,
             "mccl": MCCL_WORLD_COMM_GROUP, "mpi": MPI_WORLD_COMM_GROUP}
# Variables a launcher (Open MPI, MPICH, PMIx) sets in every process it starts.
_LAUNCHER_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")


class GlobalComm:
    """The communication state: backend name, world group name, whether ``init`` ran."""
    BACKEND = "mpi"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


class _Group:
    """A group: its MPI communicator (None in a world of one without MPI) and its world ranks."""

    def __init__(self, comm: Any, world_ranks: list[int]):
        self.comm = comm
        self.world_ranks = world_ranks

    @property
    def rank(self) -> int:
        return self.comm.Get_rank() if self.comm is not None else 0

    @property
    def size(self) -> int:
        return len(self.world_ranks)


_GROUPS: dict[str, _Group] = {}


def _launched_size() -> int:
    for var in _LAUNCHER_SIZE_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 1


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise ImportError("init: distributed training needs mpi4py and an MPI library; install them with "
                          "`apt-get install openmpi-bin libopenmpi-dev` and `pip install 'aotnn[distributed]'`"
                          ) from err
    return MPI


def init(backend_name: str | None = None) -> None:
    """Join the world group of the processes started together by ``mpirun``.

    Args:
        backend_name (str): "hccl", "nccl", "mccl", "mpi" or None. All of them communicate over MPI; the name
            only selects the world group's name (``GlobalComm.WORLD_COMM_GROUP``). Default: None ("hccl").
    Raises:
        TypeError: `backend_name` is not a str or None.
        ValueError: `backend_name` is not one of the names above.
        ImportError: started by an MPI launcher with more than one process, and mpi4py is missing.
    """
    if backend_name is not None and not isinstance(backend_name, str):
        raise TypeError(f"backend_name: expected a str or None, got {type(backend_name).__name__}")
    if backend_name not in _BACKENDS:
        raise ValueError(f"backend_name: expected one of {sorted(k for k in _BACKENDS if k)} or None, "
                         f"got {backend_name!r}")
    if GlobalComm.INITED:
        GlobalComm.WORLD_COMM_GROUP = _BACKENDS[backend_name]
        return
    try:
        MPI = _import_mpi()
    except ImportError:
        if _launched_size() > 1:
            raise
        world = _Group(None, [0])  # a world of one needs no MPI
    else:
        comm = MPI.COMM_WORLD
        world = _Group(comm, list(range(comm.Get_size())))
    _GROUPS.clear()
    _GROUPS["__world__"] = world
    GlobalComm.BACKEND = "mpi"
    GlobalComm.WORLD_COMM_GROUP = _BACKENDS[backend_name]
    GlobalComm.INITED = True


def release() -> None:
    """Forget every group (MPI itself is finalized when the process exits)."""
    for name, group in list(_GROUPS.items()):
        if name != "__world__" and group.comm is not None:
            group.comm.Free()
    _GROUPS.clear()
    GlobalComm.INITED = False


def _group(group: str) -> _Group:
    if not isinstance(group, str):
        raise TypeError(f"group: expected a str, got {type(group).__name__}")
    if not GlobalComm.INITED:
        raise RuntimeError("communication is not initialized: call aotnn.communication.init() first")
    if group in _WORLD_NAMES:
        return _GROUPS["__world__"]
    if group not in _GROUPS:
        raise ValueError(f"group: no group named {group!r}; create it with create_group first")
    return _GROUPS[group]


def get_rank(group: str = GlobalComm.WORLD_COMM_GROUP) -> int:
    """This process's rank in `group` (the world by default).

    Raises:
        RuntimeError: ``init`` was not called.
        ValueError: `group` does not exist.
    """
    return _group(group).rank


def get_group_size(group: str = GlobalComm.WORLD_COMM_GROUP) -> int:
    """The number of processes in `group` (the world by default).

    Raises:
        RuntimeError: ``init`` was not called.
        ValueError: `group` does not exist.
    """
    return _group(group).size


def _local_comm():
    world = _group(GlobalComm.WORLD_COMM_GROUP)
    if world.comm is None:
        return None
    from mpi4py import MPI
    return world.comm.Split_type(MPI.COMM_TYPE_SHARED)


def _ask_local(group: str, query: str, alone: int) -> int:
    """``query`` (Get_rank/Get_size) of the world group's processes on this machine; ``alone`` without MPI."""
    if group not in _WORLD_NAMES:
        raise ValueError(f"group: only the world group is supported, got {group!r}")
    local = _local_comm()
    if local is None:
        return alone
    try:
        return getattr(local, query)()
    finally:
        local.Free()


def get_local_rank(group: str = GlobalComm.WORLD_COMM_GROUP) -> int:
    """This process's rank among the processes of the world group on the same machine.

    Raises:
        RuntimeError: ``init`` was not called.
        ValueError: `group` is not the world group (as MindSpore, only the world is supported).
    """
    return _ask_local(group, "Get_rank", alone=0)


def get_local_rank_size(group: str = GlobalComm.WORLD_COMM_GROUP) -> int:
    """The number of processes of the world group on this machine.

    Raises:
        RuntimeError: ``init`` was not called.
        ValueError: `group` is not the world group.
    """
    return _ask_local(group, "Get_size", alone=1)


def create_group(group: str, rank_ids: list[int]) -> None:
    """Create the group `group` of the world ranks `rank_ids`; every rank listed must call it.

    Raises:
        TypeError: `group` is not a str or `rank_ids` not a list of ints.
        ValueError: `group` is a world name or exists already; `rank_ids` empty, repeated or out of range.
    """
    if not isinstance(group, str):
        raise TypeError(f"group: expected a str, got {type(group).__name__}")
    if not isinstance(rank_ids, (list, tuple)) or not all(isinstance(r, int) for r in rank_ids):
        raise TypeError(f"rank_ids: expected a list of int, got {rank_ids!r}")
    world = _group(GlobalComm.WORLD_COMM_GROUP)
    if group in _WORLD_NAMES or group in _GROUPS:
        raise ValueError(f"group: {group!r} exists already")
    if not rank_ids or len(set(rank_ids)) != len(rank_ids) or not all(0 <= r < world.size for r in rank_ids):
        raise ValueError(f"rank_ids: expected distinct ranks in [0, {world.size}), got {list(rank_ids)}")
    comm = None
    if world.comm is not None:
        comm = world.comm.Create_group(world.comm.Get_group().Incl(list(rank_ids)))
    _GROUPS[group] = _Group(comm, list(rank_ids))


def destroy_group(group: str) -> None:
    """Destroy a group made by ``create_group``.

    Raises:
        ValueError: `group` is the world group or does not exist.
    """
    if group in _WORLD_NAMES:
        raise ValueError("group: the world group cannot be destroyed")
    entry = _group(group)
    if entry.comm is not None:
        entry.comm.Free()
    del _GROUPS[group]


def get_world_rank_from_group_rank(group: str, group_rank_num: int) -> int:
    """The world rank of rank `group_rank_num` of `group`.

    Raises:
        ValueError: `group_rank_num` out of range.
    """
    ranks = _group(group).world_ranks
    if not 0 <= group_rank_num < len(ranks):
        raise ValueError(f"group_rank_num: expected in [0, {len(ranks)}), got {group_rank_num}")
    return ranks[group_rank_num]


def get_group_rank_from_world_rank(world_rank_num: int, group: str) -> int:
    """The rank in `group` of world rank `world_rank_num`.

    Raises:
        ValueError: `world_rank_num` is not in `group`.
    """
    ranks = _group(group).world_ranks
    if world_rank_num not in ranks:
        raise ValueError(f"world_rank_num: {world_rank_num} is not in group {group!r}")
    return ranks.index(world_rank_num)
