"""Flash and RAM of a built Cortex-M bundle (`aotnn inspect`) and the `--max-ram/--max-flash` budget of
`aotnn compile`, against binutils' own section table (arm-none-eabi-size -A) and the manifest."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from aotnn.cli import main
from aotnn.cli.bundle_memory import bundle_memory, parse_size

HAVE_TOOLS = shutil.which("arm-none-eabi-gcc") is not None and shutil.which("arm-none-eabi-size") is not None
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="needs gcc-arm-none-eabi (tools/install.sh installs it)")


def test_parse_size_reads_suffixes_and_names_the_option_on_bad_input():
    assert parse_size("4096", "--max-ram") == 4096
    assert parse_size("96K", "--max-ram") == 96 * 1024
    assert parse_size("1.5M", "--max-flash") == 3 * 512 * 1024
    with pytest.raises(ValueError, match="--max-flash: expected a byte count.*'12Q'"):
        parse_size("12Q", "--max-flash")


@pytest.fixture(scope="module")
def built_bundle(tmp_path_factory):
    """LeNet5 for cortex-m4, compiled by the CLI and built with its Makefile."""
    path = str(tmp_path_factory.mktemp("budget") / "lenet-m4.aot")
    result = CliRunner().invoke(main, ["compile", "aotnn.models:lenet5", "--target", "cortex-m4", "-o", path])
    assert result.exit_code == 0, result.output
    subprocess.run(["make", "-s"], cwd=path, check=True, capture_output=True)
    return path


def size_table(elf: str) -> dict[str, int]:
    lines = subprocess.run(["arm-none-eabi-size", "-A", elf], check=True, capture_output=True, text=True).stdout
    return {parts[0]: int(parts[1]) for parts in (line.split() for line in lines.splitlines()[2:])
            if len(parts) == 3 and parts[1].isdigit()}


@needs_tools
def test_memory_by_part_adds_up_to_binutils_sections(built_bundle):
    sections = size_table(os.path.join(built_bundle, "model.elf"))
    report = bundle_memory(built_bundle)
    # flash: code + read-only data (.text), weights and .data's initial values; RAM: .data, .bss, stack
    assert report.flash_bytes == sections[".text"] + sections[".weights"] + sections[".data"]
    assert report.ram_bytes == sections[".data"] + sections[".bss"] + sections[".stack"]
    assert report.ram["stack"] == sections[".stack"]
    with open(os.path.join(built_bundle, "manifest.json"), encoding="utf-8") as stream:
        manifest = json.load(stream)
    arena = manifest["entries"]["predict"]["arena_bytes"]
    assert report.ram["arena"] == max(arena, 64)
    assert report.flash["weights"] == os.path.getsize(os.path.join(built_bundle, "weights.bin"))
    assert report.ram["kernel scratch"] > 0 and report.flash[".text"] > 0


@needs_tools
def test_inspect_prints_flash_and_ram_of_a_built_bundle(built_bundle):
    result = CliRunner().invoke(main, ["inspect", built_bundle])
    assert result.exit_code == 0, result.output
    report = bundle_memory(built_bundle)
    assert f"flash: {report.flash_bytes:,d} bytes" in result.output
    assert f"RAM: {report.ram_bytes:,d} bytes" in result.output
    assert "arena" in result.output and "kernel scratch" in result.output
    as_json = json.loads(CliRunner().invoke(main, ["inspect", built_bundle, "--json"]).output)
    assert as_json["memory"]["ram_bytes"] == report.ram_bytes
    # the stack the linker script reserves is the one computed at build time (plus its margin)
    stack = as_json["stack"]
    worst = max(stack["image_bytes"], stack["model_run_bytes"]) + stack["margin_bytes"]
    assert stack["reserved_bytes"] == report.ram["stack"] and worst <= stack["reserved_bytes"] < worst + 8
    assert f"stack: {stack['reserved_bytes']:,d} bytes reserved" in result.output
    assert f"worst case computed at build time: {stack['image_bytes']:,d} bytes" in result.output


@needs_tools
def test_compile_fails_over_budget_naming_the_largest_consumers(tmp_path):
    path = str(tmp_path / "lenet-m4.aot")
    result = CliRunner().invoke(main, ["compile", "aotnn.models:lenet5", "--target", "cortex-m4", "-o", path,
                                       "--max-ram", "1K", "--max-flash", "64M"])
    assert result.exit_code != 0
    assert "RAM" in result.output and "exceeds --max-ram 1,024 bytes" in result.output
    assert "Largest consumers:" in result.output and "aotnn_arena (arena)" in result.output
    assert "--max-flash" not in result.output.split("Largest")[0]  # flash fits: only RAM is reported
    fits = CliRunner().invoke(main, ["compile", "aotnn.models:lenet5", "--target", "cortex-m4", "-o", path,
                                     "--force", "--max-ram", "64M", "--max-flash", "64M"])
    assert fits.exit_code == 0, fits.output
    assert "fits: flash" in fits.output
