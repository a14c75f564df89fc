"""The L2 size the default schedules derive their thresholds from (caches.py): read from a sysfs
tree for the host's CPU, from the per-CPU table for another, ``AOTNN_L2_KB`` over both; and a
rule decision that follows it: an expanded tensor of 588 KB is computed inside its depthwise
convolution's kernel with a 512 KB L2, and left to its own kernel with 1 MB (it fits)."""
import numpy as np
import pytest
import tvm

from aotnn import Tensor
from default_schedule_helpers import assert_close, randomize
from schedules.defaults import caches, cpu_info
from test_default_inverted_residual import InvertedResidual, kernel_rules, reference

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run


def _fake_sysfs(root, entries):
    for index, (level, kind, size) in enumerate(entries):
        folder = root / f"index{index}"
        folder.mkdir()
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    return str(root)


def test_host_l2_is_read_from_sysfs(tmp_path):
    root = _fake_sysfs(tmp_path, [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "1280K"),
                                  (3, "Unified", "32M")])
    assert caches.host_l2_bytes(root) == 1280 * 1024
    assert caches.host_l2_bytes(str(tmp_path / "missing")) is None


def test_l2_of_host_table_and_override(tmp_path, monkeypatch):
    monkeypatch.delenv(caches.L2_ENV, raising=False)
    root = _fake_sysfs(tmp_path, [(2, "Unified", "2M")])
    assert caches.l2_bytes("znver4", host_mcpu="znver4", root=root) == 2 * 1024 * 1024  # the host's own
    assert caches.l2_bytes("haswell", host_mcpu="znver4", root=root) == 256 * 1024      # Haswell's data sheet
    assert caches.l2_bytes("skylake-avx512", host_mcpu=None, root=root) == 1024 * 1024
    assert caches.l2_bytes("no-such-cpu", host_mcpu="znver4", root=root) == caches.DEFAULT_L2_KB * 1024
    monkeypatch.setenv(caches.L2_ENV, "768")
    assert caches.l2_bytes("znver4", host_mcpu="znver4", root=root) == 768 * 1024


@pytest.mark.parametrize("value", ["0", "-5", "1M", "big"])
def test_bad_l2_override_is_named(monkeypatch, value):
    monkeypatch.setenv(caches.L2_ENV, value)
    with pytest.raises(ValueError, match=caches.L2_ENV):
        caches.l2_bytes("haswell")


def test_thresholds_follow_the_target_l2(cpu_target, monkeypatch):
    target = tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": cpu_target})
    for kb in (256, 1024):
        monkeypatch.setenv(caches.L2_ENV, str(kb))
        cpu = cpu_info(target)
        assert (cpu.l2_bytes, cpu.expand_merge_min_bytes, cpu.row_task_weight_bytes) == (
            kb * 1024, kb * 1024, kb * 512)


@pytest.mark.parametrize("l2_kb, merged", [(512, True), (1024, False)])
def test_expansion_merge_follows_l2(monkeypatch, l2_kb, merged):
    monkeypatch.setenv(caches.L2_ENV, str(l2_kb))
    net = randomize(InvertedResidual(32, 192, 32, 1), seed=7)  # 28x28x192 floats: 588 KB expanded
    net.set_train(False)
    x = np.random.default_rng(8).standard_normal((1, 3, 28, 28)).astype(np.float32)
    want, _ = reference(net, x, 1)
    assert_close(net(Tensor(x)), want)
    rules = kernel_rules(net, x).values()
    assert ("inverted_residual" in rules) is merged, rules
