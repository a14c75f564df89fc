"""Flash and RAM of a built bundle, read from its ELF image (section and symbol tables).

Flash holds every allocated section with contents (code, read-only data, weights, the initial
values of .data); RAM holds every writable allocated section (.data, .bss and the stack the
linker script reserves). The bundle's own buffers are told apart by their symbol names: the
memory plan's arena (``aotnn_arena``), the kernels' scratch pool (``aotnn_workspace_pool``), the
prepared (packed/folded) weight copies (``prepared<i>_data``) and the input/output buffers.
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, field

SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHT_SYMTAB, SHT_NOBITS = 2, 8
STT_OBJECT, STT_FUNC = 1, 2
UNITS = {"": 1, "K": 1024, "M": 1024 ** 2}

# bss symbols with a category of their own (name pattern -> category)
_RAM_CATEGORIES = ((re.compile(r"aotnn_arena$"), "arena"),
                   (re.compile(r"aotnn_workspace_pool$"), "kernel scratch"),
                   (re.compile(r"prepared\d+_data$"), "prepared weight copies"),
                   (re.compile(r"(input|output)\d+(_data)?$"), "input/output buffers"))


@dataclass
class Section:
    name: str
    size: int
    flags: int
    kind: int
    index: int

    @property
    def in_flash(self) -> bool:
        return bool(self.flags & SHF_ALLOC) and self.kind != SHT_NOBITS

    @property
    def in_ram(self) -> bool:
        return bool(self.flags & SHF_ALLOC) and bool(self.flags & SHF_WRITE)


@dataclass
class Symbol:
    name: str
    size: int
    kind: int
    section: int


@dataclass
class MemoryReport:
    """Flash and RAM of one ELF image by category, and its largest symbols."""
    flash: dict[str, int] = field(default_factory=dict)
    ram: dict[str, int] = field(default_factory=dict)
    sections: list[tuple[str, int, bool, bool]] = field(default_factory=list)
    largest: list[tuple[str, str, int, str]] = field(default_factory=list)  # name, category, bytes, flash/ram

    @property
    def flash_bytes(self) -> int:
        return sum(self.flash.values())

    @property
    def ram_bytes(self) -> int:
        return sum(self.ram.values())

    def as_dict(self) -> dict:
        return {"flash_bytes": self.flash_bytes, "ram_bytes": self.ram_bytes, "flash": self.flash, "ram": self.ram,
                "sections": [{"name": n, "size": s, "flash": f, "ram": r} for n, s, f, r in self.sections],
                "largest": [{"name": n, "category": c, "size": s, "memory": m} for n, c, s, m in self.largest]}


def _read_elf(data: bytes) -> tuple[list[Section], list[Symbol]]:
    if data[:4] != b"\x7fELF":
        raise ValueError("elf: not an ELF file (no \\x7fELF magic)")
    if data[5] != 1:
        raise ValueError(f"elf: only little-endian images are read; EI_DATA is {data[5]}")
    wide = data[4] == 2
    header = struct.unpack_from("<HHIQQQIHHHHHH" if wide else "<HHIIIIIHHHHHH", data, 16)
    shoff, shentsize, shnum, shstrndx = header[5], header[10], header[11], header[12]
    entry = "<IIQQQQIIQQ" if wide else "<IIIIIIIIII"
    raw = [struct.unpack_from(entry, data, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4]

    def text(table_offset: int, at: int) -> str:
        end = data.index(b"\0", table_offset + at)
        return data[table_offset + at:end].decode("utf-8", "replace")

    sections = [Section(text(names_at, r[0]), r[5], r[2], r[1], i) for i, r in enumerate(raw)]
    symbols = []
    for r in raw:
        if r[1] != SHT_SYMTAB:
            continue
        strings_at, offset, size = raw[r[6]][4], r[4], r[5]
        step = 24 if wide else 16
        for at in range(offset + step, offset + size, step):  # entry 0 is the null symbol
            if wide:
                name, info, _, shndx, _, sym_size = struct.unpack_from("<IBBHQQ", data, at)
            else:
                name, _, sym_size, info, _, shndx = struct.unpack_from("<IIIBBH", data, at)
            if sym_size and info & 0xF in (STT_OBJECT, STT_FUNC):
                symbols.append(Symbol(text(strings_at, name), sym_size, info & 0xF, shndx))
    return sections, symbols


def _ram_category(name: str) -> str | None:
    for pattern, category in _RAM_CATEGORIES:
        if pattern.search(name):
            return category
    return None


def memory_report(elf_path: str, weights_bytes: int = 0, top: int = 24) -> MemoryReport:
    """Read ``elf_path`` and sort its flash and RAM into categories.

    Args:
        elf_path: a linked image (a Cortex-M bundle's model.elf, a Linux bundle's static ``model``).
        weights_bytes: the size of the bundle's weights.bin, counted as "weights" rather than
            read-only data where no section of its own holds it (Linux bundles keep it in .rodata).
        top: how many of the largest symbols to list.

    Returns:
        flash by .text / .rodata / weights / .data, RAM by .data / .bss / arena / kernel scratch /
        prepared weight copies / input/output buffers / stack, the sections and the largest symbols.
    Raises:
        ValueError: the file is not a little-endian ELF image.
    """
    with open(elf_path, "rb") as stream:
        sections, symbols = _read_elf(stream.read())
    by_index = {s.index: s for s in sections}
    report = MemoryReport()
    flash = dict.fromkeys((".text", ".rodata", "weights", ".data"), 0)
    ram = dict.fromkeys((".data", ".bss", "arena", "kernel scratch", "prepared weight copies",
                         "input/output buffers", "stack"), 0)
    objects_in_code = sum(s.size for s in symbols if s.kind == STT_OBJECT and s.section in by_index
                          and by_index[s.section].flags & SHF_EXECINSTR)
    weights_left = weights_bytes
    for section in sections:
        if not section.flags & SHF_ALLOC or section.size == 0:
            continue
        report.sections.append((section.name, section.size, section.in_flash, section.in_ram))
        if section.name == ".aotnn_weights":
            flash["weights"] += section.size
            weights_left = 0
        elif section.name == ".stack":
            ram["stack"] += section.size
        elif section.in_ram:
            if section.in_flash:
                flash[".data"] += section.size
                ram[".data"] += section.size
            else:
                ram[".bss"] += section.size
        elif section.flags & SHF_EXECINSTR:
            flash[".text"] += section.size
        else:
            flash[".rodata"] += section.size
    # read-only tables that a linker script places inside the code section count as .rodata
    flash[".text"] -= objects_in_code
    flash[".rodata"] += objects_in_code
    moved = min(weights_left, flash[".rodata"])
    flash[".rodata"] -= moved
    flash["weights"] += moved
    for symbol in symbols:
        section = by_index.get(symbol.section)
        category = _ram_category(symbol.name)
        if category and section is not None and section.kind == SHT_NOBITS:
            ram[category] += symbol.size
            ram[".bss"] -= symbol.size
    report.flash, report.ram = flash, ram
    labelled = []
    for symbol in symbols:
        section = by_index.get(symbol.section)
        if section is None or not section.flags & SHF_ALLOC:
            continue
        if symbol.kind == STT_FUNC:
            category = "code"
        else:
            category = _ram_category(symbol.name) or ("bss" if section.kind == SHT_NOBITS else
                                                       "data" if section.in_ram else "read-only data")
        memory = "flash+ram" if section.in_ram and section.in_flash else "ram" if section.in_ram else "flash"
        labelled.append((symbol.name, category, symbol.size, memory))
    if flash["weights"]:
        labelled.append(("weights.bin", "weights", flash["weights"], "flash"))
    report.largest = sorted(labelled, key=lambda item: -item[2])[:top]
    return report


def bundle_image(bundle: str) -> str | None:
    """The linked image of a built bundle (model.elf on Cortex-M, model on Linux), None if not built."""
    for name in ("model.elf", "model"):
        path = os.path.join(bundle, name)
        if os.path.isfile(path):
            return path
    return None


def bundle_memory(bundle: str, top: int = 24) -> MemoryReport | None:
    """The memory report of a built bundle, None when it has not been built (no image)."""
    image = bundle_image(bundle)
    if image is None:
        return None
    weights = os.path.join(bundle, "weights.bin")
    return memory_report(image, os.path.getsize(weights) if os.path.isfile(weights) else 0, top)


def parse_size(text: str, option: str) -> int:
    """``"96K"`` -> 98304: a byte count with an optional K (KiB) or M (MiB) suffix.

    Raises:
        ValueError: naming ``option``, for anything else.
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KkMm]?)(?:i?[Bb])?\s*", str(text))
    if match is None:
        raise ValueError(f"{option}: expected a byte count such as 4096, 96K or 1.5M, got {text!r}")
    return int(float(match.group(1)) * UNITS[match.group(2).upper()])


def over_budget(report: MemoryReport, max_ram: int | None, max_flash: int | None) -> str | None:
    """A message naming what exceeds the budget and the largest consumers; None when it fits."""
    problems, consumers = [], []
    for what, used, limit, parts in (("RAM", report.ram_bytes, max_ram, report.ram),
                                     ("flash", report.flash_bytes, max_flash, report.flash)):
        if limit is not None and used > limit:
            ranked = ", ".join(f"{name} {size:,d}" for name, size in sorted(parts.items(), key=lambda p: -p[1])
                               if size)
            problems.append(f"{what} {used:,d} bytes exceeds --max-{what.lower()} {limit:,d} bytes "
                            f"by {used - limit:,d} (by part: {ranked})")
            consumers += [f"{name} ({category}) {size:,d}" for name, category, size, memory in report.largest
                          if what.lower() in memory][:6]
    if not problems:
        return None
    return "; ".join(problems) + ". Largest consumers: " + "; ".join(dict.fromkeys(consumers))
