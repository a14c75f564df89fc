"""Fixtures shared by the tools' tests: bench_mcu loaded as a module and its QEMU counting plugin."""
from __future__ import annotations

import pytest

from tests.tools.script_loader import loaded_script


@pytest.fixture(scope="module")
def bench_mcu():
    yield from loaded_script("bench_mcu")


@pytest.fixture(scope="module")
def plugin(bench_mcu, tmp_path_factory):
    return bench_mcu.build_plugin(str(tmp_path_factory.mktemp("plugin")))
