"""A CPU target's per-core L2 cache size, which the default schedules' merge and tiling thresholds
derive from.

For the host's own CPU (the target's ``mcpu`` is the one detected on this machine) the size is
read from Linux's ``/sys/devices/system/cpu/cpu0/cache``. For another CPU (``AOTNN_MCPU`` pinned
to an older or newer model) it comes from :data:`L2_KB_BY_CPU`, per LLVM CPU name; CPUs missing
there get :data:`DEFAULT_L2_KB`. ``AOTNN_L2_KB`` overrides both (tests pin it with the CPU, so
that a rule's decision does not depend on the machine the suite runs on).
"""
from __future__ import annotations

import os

L2_ENV = "AOTNN_L2_KB"
SYSFS_CACHE = "/sys/devices/system/cpu/cpu0/cache"
DEFAULT_L2_KB = 512

# per-core L2 of the CPUs LLVM names (vendor data sheets), for targets other than the host
L2_KB_BY_CPU = {
    "x86-64": 512, "x86-64-v2": 512, "x86-64-v3": 512, "x86-64-v4": 1024,
    "haswell": 256, "broadwell": 256, "skylake": 256, "alderlake": 1280, "raptorlake": 2048,
    "skylake-avx512": 1024, "cascadelake": 1024, "cooperlake": 1024, "cannonlake": 256,
    "icelake-client": 512, "icelake-server": 1280, "tigerlake": 1280, "sapphirerapids": 2048,
    "emeraldrapids": 2048, "graniterapids": 2048,
    "znver1": 512, "znver2": 512, "znver3": 512, "znver4": 1024, "znver5": 1024,
}


def _size_bytes(text: str) -> int:
    """Bytes of a sysfs cache size (``1024K``, ``2M``, ``512``)."""
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
    return int(text.rstrip("KM")) * scale


def host_l2_bytes(root: str = SYSFS_CACHE) -> int | None:
    """The L2 (unified or data) cache of the host's first core as Linux reports it; None where
    there is no such report (not Linux, a container hiding it)."""
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return None
    for entry in entries:
        path = os.path.join(root, entry)
        try:
            with open(os.path.join(path, "level"), encoding="ascii") as stream:
                level = stream.read().strip()
            with open(os.path.join(path, "type"), encoding="ascii") as stream:
                kind = stream.read().strip()
            with open(os.path.join(path, "size"), encoding="ascii") as stream:
                size = _size_bytes(stream.read())
        except (OSError, ValueError):
            continue
        if level == "2" and kind in ("Unified", "Data") and size > 0:
            return size
    return None


def l2_bytes(mcpu: str, host_mcpu: str | None = None, root: str = SYSFS_CACHE) -> int:
    """Per-core L2 bytes of the CPU LLVM calls ``mcpu``.

    Args:
        mcpu (str): the target's LLVM CPU name ('' for a generic target).
        host_mcpu (Union[str, None]): the host's LLVM CPU name; where it equals ``mcpu`` the
            host's own cache is read. Default: None (never the host's).
        root (str): the sysfs cache directory to read. Default: :data:`SYSFS_CACHE`.

    Returns:
        int, bytes.

    Raises:
        ValueError: ``AOTNN_L2_KB`` is set but not a positive whole number of kilobytes.
    """
    pinned = os.environ.get(L2_ENV, "").strip()
    if pinned:
        if not pinned.isdigit() or int(pinned) <= 0:
            raise ValueError(f"{L2_ENV}: expected a positive whole number of kilobytes such as '512', got {pinned!r}")
        return int(pinned) * 1024
    if mcpu and host_mcpu is not None and mcpu == host_mcpu:
        measured = host_l2_bytes(root)
        if measured is not None:
            return measured
    return L2_KB_BY_CPU.get(mcpu, DEFAULT_L2_KB) * 1024
