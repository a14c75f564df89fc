"""Host-side collectives on numpy arrays over a group's MPI communicator (no-ops in a world of one)."""
from __future__ import annotations

import numpy as np

from .management import _group


def allreduce_sum_(arrays: list[np.ndarray], group: str) -> None:
    """Sum every (contiguous) array over the ranks of `group`, in place, one fused buffer per dtype
    (float16 is summed in float32: MPI has no standard half type)."""
    comm = _group(group).comm
    if comm is None or comm.Get_size() == 1:
        return
    from mpi4py import MPI
    by_dtype: dict[np.dtype, list[np.ndarray]] = {}
    for array in arrays:
        by_dtype.setdefault(array.dtype, []).append(array)
    for same in by_dtype.values():
        buffer = np.concatenate([a.reshape(-1) for a in same])
        if buffer.dtype == np.float16:
            buffer = buffer.astype(np.float32)
        comm.Allreduce(MPI.IN_PLACE, buffer, op=MPI.SUM)
        offset = 0
        for array in same:
            array.reshape(-1)[...] = buffer[offset:offset + array.size]
            offset += array.size


def broadcast_(arrays: list[np.ndarray], group: str, root: int = 0) -> None:
    """Overwrite every array with its value on rank `root` of `group`, in place."""
    comm = _group(group).comm
    if comm is None or comm.Get_size() == 1:
        return
    for array in arrays:
        buffer = np.ascontiguousarray(array)
        comm.Bcast(buffer, root=root)
        array[...] = buffer


def exchange(array: np.ndarray, peer: int, group: str) -> np.ndarray:
    """Send `array` to rank `peer` of `group` and return the array `peer` sends back."""
    comm = _group(group).comm
    received = np.empty_like(array)
    comm.Sendrecv(np.ascontiguousarray(array), dest=peer, recvbuf=received, source=peer)
    return received


def group_rank_size(group: str) -> tuple[int, int]:
    entry = _group(group)
    return entry.rank, entry.size
