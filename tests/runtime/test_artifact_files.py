"""What writing an artifact does to the file system: an existing path that is not an aotnn artifact is never
replaced, failures (exceptions, KeyboardInterrupt, killed processes) leave nothing behind or leftovers the
next write removes, a live writer's files are never removed, and files get ordinary umask-respecting modes."""
from __future__ import annotations

import importlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import aotnn
import aotnn_runtime
from aotnn import nn, ops
from aotnn_runtime import owned_files, weights as weights_module
from aotnn_runtime.owned_files import atomic_write

BUILD_MODULE = importlib.import_module("schedules.build")  # `schedules.build` is also the function
RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 4)).astype(np.float32)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        return ops.tanh(self.fc(x))


def _net(seed: int) -> tuple[Net, np.ndarray]:
    """A net with known weights and the numpy reference output for X."""
    rng = np.random.default_rng(seed)
    weight, bias = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    net = Net()
    net.fc.weight.set_data(aotnn.Tensor(weight))
    net.fc.bias.set_data(aotnn.Tensor(bias))
    return net, np.tanh(X @ weight.T + bias)


def _export(path, seed: int = 0) -> np.ndarray:
    net, expected = _net(seed)
    aotnn.export(net, aotnn.Tensor(X), file_name=str(path))
    return expected


def _runs_as(path, expected) -> None:
    (out,) = aotnn_runtime.load(str(path)).run(X)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def _env() -> dict:
    roots = {str(Path(aotnn.__file__).resolve().parents[1]), str(Path(aotnn_runtime.__file__).resolve().parents[1])}
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*sorted(roots), os.environ.get("PYTHONPATH", "")])}


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def _leftover_of(pid: int, directory, kind: str, suffix: str = "", is_dir: bool = False) -> Path:
    """A temporary named as process ``pid`` on this machine names its own."""
    name = owned_files.owned_name(kind, suffix).replace(f"-{os.getpid()}-", f"-{pid}-", 1)
    path = Path(directory) / name
    if is_dir:
        path.mkdir()
        (path / "kernels.so").write_bytes(b"half written")
    else:
        path.write_bytes(b"half written")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """An artifact of Net (seed 0) and its reference output, copied by the tests that change it."""
    path = tmp_path_factory.mktemp("built") / "net.aot"
    return path, _export(path)


# ----------------------------------------------------------------------------------------- what is replaced
def test_export_appends_aot_as_mindspore_appends_its_suffix(tmp_path):
    expected = _export(tmp_path / "model")
    assert sorted(os.listdir(tmp_path)) == ["model.aot"]
    _runs_as(tmp_path / "model.aot", expected)


def test_export_replaces_its_own_artifact(built, tmp_path):
    path = tmp_path / "net.aot"
    shutil.copytree(built[0], path)
    expected = _export(path, seed=1)
    _runs_as(path, expected)
    assert not np.allclose(expected, built[1])
    assert sorted(os.listdir(tmp_path)) == ["net.aot"]  # no staging or moved-aside folder left


@pytest.mark.parametrize("kind", ["directory", "empty directory", "file", "link"])
def test_export_never_replaces_what_is_not_an_artifact(built, tmp_path, kind):
    path = tmp_path / "mine.aot"
    if kind == "directory":
        path.mkdir()
        (path / "notes.txt").write_text("my own notes")
        (path / "manifest.json").write_text('{"format": "something else"}')
    elif kind == "empty directory":
        path.mkdir()
    elif kind == "file":
        path.write_text("my own notes")
    else:
        path.symlink_to(built[0], target_is_directory=True)
    before = {p: p.read_bytes() for p in path.rglob("*") if p.is_file()} if path.is_dir() else path.read_bytes()
    with pytest.raises(FileExistsError, match=r"mine\.aot.*not an aotnn artifact|mine\.aot.*(a file|a symbolic link)"):
        _export(path)
    after = {p: p.read_bytes() for p in path.rglob("*") if p.is_file()} if path.is_dir() else path.read_bytes()
    assert after == before and path.is_symlink() == (kind == "link")
    assert sorted(os.listdir(tmp_path)) == ["mine.aot"]
    _runs_as(built[0], built[1])  # the link's target is untouched too


# ------------------------------------------------------------------------------------------- failed writes
@pytest.mark.parametrize("error", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_a_build_failing_midway_leaves_nothing_and_the_old_artifact(built, tmp_path, monkeypatch, error):
    path = tmp_path / "net.aot"
    shutil.copytree(built[0], path)

    def fail(*args, **kwargs):
        raise error
    monkeypatch.setattr(BUILD_MODULE, "_write_weights", fail)
    with pytest.raises(type(error)):
        _export(path, seed=1)
    assert sorted(os.listdir(tmp_path)) == ["net.aot"]
    _runs_as(path, built[1])


def test_a_failing_commit_puts_the_old_artifact_back(built, tmp_path, monkeypatch):
    path = tmp_path / "net.aot"
    shutil.copytree(built[0], path)
    real_replace = os.replace

    def replace(source, target):
        if os.path.basename(str(source)).startswith(".aotnn-build-"):
            raise OSError("simulated failure while moving the new artifact in")
        return real_replace(source, target)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="simulated"):
        _export(path, seed=1)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["net.aot"]
    _runs_as(path, built[1])


def test_stale_staging_is_removed_and_a_live_writers_kept(tmp_path):
    dead = _leftover_of(_dead_pid(), tmp_path, ".aotnn-build-", is_dir=True)
    moved_aside = _leftover_of(_dead_pid(), tmp_path, ".aotnn-old-", is_dir=True)
    live_writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = _leftover_of(live_writer.pid, tmp_path, ".aotnn-build-", is_dir=True)
        old_untagged = tmp_path / ".aotnn-build-abcd1234"  # an older aotnn's mkdtemp name, two hours old
        old_untagged.mkdir()
        os.utime(old_untagged, (time.time() - 7200,) * 2)
        new_untagged = tmp_path / ".aotnn-build-efgh5678"  # ... and one being written now
        new_untagged.mkdir()
        _export(tmp_path / "net.aot")
        left = set(os.listdir(tmp_path))
        assert live.name in left and new_untagged.name in left
        assert not {dead.name, moved_aside.name, old_untagged.name} & left
    finally:
        live_writer.kill()
        live_writer.wait()
    _export(tmp_path / "net.aot")  # the writer is gone now: its staging folder is stale
    assert sorted(os.listdir(tmp_path)) == [new_untagged.name, "net.aot"]


# ------------------------------------------------------------------------------------------------ save_weights
def _weights_files(path) -> list[str]:
    return sorted(f for f in os.listdir(path) if f.startswith("weights") and f.endswith(".bin"))


def _new_weights(tmp_path, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = {"fc.weight": rng.standard_normal((3, 4)).astype(np.float32),
              "fc.bias": rng.standard_normal(3).astype(np.float32)}
    np.savez(tmp_path / f"w{seed}.npz", **values)
    return values


def test_saving_weights_twenty_times_keeps_one_weights_file(built, tmp_path):
    path = tmp_path / "net.aot"
    shutil.copytree(built[0], path)
    module = aotnn_runtime.load(str(path))
    for seed in range(20):
        values = _new_weights(tmp_path, seed)
        module.load_weights(tmp_path / f"w{seed}.npz")
        module.save_weights()
    assert len(_weights_files(path)) == 1 and not [f for f in os.listdir(path) if f.startswith(".tmp-")]
    _runs_as(path, np.tanh(X @ values["fc.weight"].T + values["fc.bias"]))


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failing_save_leaves_the_old_weights_and_no_new_file(built, tmp_path, monkeypatch, error):
    path = tmp_path / "net.aot"
    shutil.copytree(built[0], path)
    module = aotnn_runtime.load(str(path))
    _new_weights(tmp_path, 1)
    module.load_weights(tmp_path / "w1.npz")

    def fail(*args, **kwargs):
        raise error
    monkeypatch.setattr(weights_module, "atomic_write", fail)  # the manifest write fails after the weights file
    with pytest.raises(type(error)):
        module.save_weights()
    assert _weights_files(path) == ["weights.bin"] and sorted(os.listdir(path)) == sorted(os.listdir(built[0]))
    _runs_as(path, built[1])


KILLED_SAVER = """
import sys, time
import aotnn_runtime
from aotnn_runtime import weights
module = aotnn_runtime.load(sys.argv[1])
module.load_weights(sys.argv[2])
def hang(path):  # reached once the new weights file is written, before the manifest names it
    print("writing", flush=True)
    time.sleep(60)
weights.file_sha256 = hang
module.save_weights()
"""


def test_a_killed_save_leaves_a_file_the_next_save_removes(built, tmp_path):
    path = tmp_path / "net.aot"
    shutil.copytree(built[0], path)
    _new_weights(tmp_path, 1)
    saver = subprocess.Popen([sys.executable, "-c", KILLED_SAVER, str(path), str(tmp_path / "w1.npz")],
                             stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert saver.stdout.readline().strip() == "writing"
        assert len(_weights_files(path)) == 2  # the file a concurrent save must not remove
        module = aotnn_runtime.load(str(path))
        module.save_weights()
        assert len(_weights_files(path)) == 2  # the saver is alive: its file is kept
    finally:
        saver.send_signal(signal.SIGKILL)
        saver.wait()
        saver.stdout.close()
    values = _new_weights(tmp_path, 2)
    module = aotnn_runtime.load(str(path))
    module.load_weights(tmp_path / "w2.npz")
    module.save_weights()
    assert len(_weights_files(path)) == 1
    _runs_as(path, np.tanh(X @ values["fc.weight"].T + values["fc.bias"]))


def test_orphans_of_older_versions_are_removed_once_old(built, tmp_path):
    path = tmp_path / "net.aot"
    shutil.copytree(built[0], path)
    for name in ("weights-abcd1234.bin", ".tmp-abcd1234.json"):  # tempfile names of older aotnn versions
        (path / name).write_bytes(b"orphan")
        os.utime(path / name, (time.time() - 7200,) * 2)
    (path / "weights-efgh5678.bin").write_bytes(b"recent: an older version may be writing it")
    aotnn_runtime.load(str(path)).save_weights()
    left = set(os.listdir(path))
    assert "weights-abcd1234.bin" not in left and ".tmp-abcd1234.json" not in left
    assert "weights-efgh5678.bin" in left and len(_weights_files(path)) == 2


# ------------------------------------------------------------------------------------------------- atomic_write
@pytest.mark.parametrize("error", [ValueError("bad value"), KeyboardInterrupt()])
def test_atomic_write_failing_leaves_the_old_file_and_no_temporary(tmp_path, error):
    target = tmp_path / "data.json"
    target.write_text("old")

    def write(stream):
        stream.write(b"half")
        raise error
    with pytest.raises(type(error)):
        atomic_write(str(target), write)
    assert os.listdir(tmp_path) == ["data.json"] and target.read_text() == "old"


def test_atomic_write_removes_only_stale_temporaries_of_its_own_naming(tmp_path):
    dead = _leftover_of(_dead_pid(), tmp_path, ".tmp-", ".npz")
    mine = _leftover_of(os.getpid(), tmp_path, ".tmp-", ".json")  # this process is alive: e.g. another thread
    users = [tmp_path / ".tmp-notes", tmp_path / ".tmp-abcd1234"]  # not aotnn's names (untagged: never removed)
    for user_file in users:
        user_file.write_text("the user's")
        os.utime(user_file, (time.time() - 7200,) * 2)
    atomic_write(str(tmp_path / "out.bin"), lambda stream: stream.write(b"x"))
    assert sorted(os.listdir(tmp_path)) == sorted([mine.name, "out.bin", *(u.name for u in users)])
    with pytest.raises(IsADirectoryError, match="is a directory"):
        atomic_write(str(tmp_path), lambda stream: stream.write(b"x"))


# ------------------------------------------------------------------------------------------------------- modes
@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_modes_follow_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        path = tmp_path / "net.aot"
        _export(path)
        module = aotnn_runtime.load(str(path))
        module.save_weights()
        atomic_write(str(tmp_path / "data.bin"), lambda stream: stream.write(b"x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o777 & ~umask
    assert stat.S_IMODE(os.stat(tmp_path / "data.bin").st_mode) == 0o666 & ~umask
    for name in os.listdir(path):
        mode = stat.S_IMODE(os.stat(path / name).st_mode)
        expected = 0o777 if name.endswith(".so") else 0o666  # a shared library is executable, as a linker writes it
        assert mode == expected & ~umask, (name, oct(mode))
