"""Broken .ckpt files: ``load_checkpoint`` raises a ValueError whose message names the file and the fault,
before numpy allocates or reshapes anything the file only declares. Files are encoded by hand (tests/train/
wire.py) or cut from a checkpoint MindSpore wrote (fixtures/small_mindspore.ckpt, tools/make_ckpt_fixture.py)."""
import os
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from aotnn.train.checkpoint_format import CheckpointNotFoundError, InvalidCheckpointError
from aotnn.train.serialization import load_checkpoint

from .wire import ld, varint

FIXTURES = Path(__file__).parent / "fixtures"


def _dim(d):
    return varint(1 << 3 | 0) + varint(d & (2**64 - 1))  # int64: two's complement in 10 bytes


def _entry(tag: bytes, dims, tensor_type: bytes, content: bytes) -> bytes:
    tensor = b"".join(_dim(d) for d in dims) + ld(2, tensor_type) + ld(3, content)
    return ld(1, ld(1, tag) + ld(2, tensor))


def _file(tmp_path, data: bytes, name="bad.ckpt") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _refused(path: str, *fragments: str) -> str:
    with pytest.raises(ValueError) as info:
        load_checkpoint(path)
    message = str(info.value)
    assert os.path.abspath(path) in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_the_fixture_loads_as_mindspore_read_it():
    expected = np.load(FIXTURES / "small_mindspore.npz")
    loaded = load_checkpoint(str(FIXTURES / "small_mindspore.ckpt"))
    assert sorted(loaded) == sorted(expected.files)
    assert loaded["note"] == str(expected["note"])
    for name in ("weight", "bias", "epoch_num", "lr"):
        np.testing.assert_array_equal(loaded[name].asnumpy(), expected[name])
        assert loaded[name].asnumpy().dtype == expected[name].dtype


def test_a_directory_is_named_a_directory(tmp_path):
    path = tmp_path / "folder.ckpt"
    path.mkdir()
    message = _refused(str(path), "is a directory")
    assert "does not exist" not in message


def test_a_missing_file(tmp_path):
    with pytest.raises(CheckpointNotFoundError, match="does not exist"):
        load_checkpoint(str(tmp_path / "missing.ckpt"))


def test_an_empty_file_is_named_empty(tmp_path):
    message = _refused(_file(tmp_path, b""), "empty")
    assert "filter_prefix" not in message


def test_a_file_without_entries_is_not_a_checkpoint(tmp_path):
    # A well-formed protobuf message with only an unknown field: nothing a checkpoint holds.
    message = _refused(_file(tmp_path, varint(2 << 3 | 0) + varint(1)), "not a MindSpore checkpoint")
    assert "filter_prefix" not in message


def test_text_is_not_a_checkpoint(tmp_path):
    _refused(_file(tmp_path, b"this is a text file, not a checkpoint\n"), "not a valid MindSpore checkpoint")


def test_every_truncation_of_a_real_checkpoint(tmp_path):
    data = (FIXTURES / "small_mindspore.ckpt").read_bytes()
    full = load_checkpoint(str(FIXTURES / "small_mindspore.ckpt"))
    loaded_prefixes = 0
    for size in range(len(data)):
        path = _file(tmp_path, data[:size], f"cut{size}.ckpt")
        try:
            loaded = load_checkpoint(path)
        except ValueError as err:
            assert path in str(err), str(err)
            continue
        # A cut between two entries leaves a shorter well-formed file: the entries before the cut.
        assert list(loaded) == list(full)[:len(loaded)]
        loaded_prefixes += 1
    assert 0 < loaded_prefixes < 10


@pytest.mark.parametrize("dims", [[2**32, 2**32], [2**31, 2**31, 4], [2**62, 4], [0, 2**62]])
def test_dims_beyond_any_array_are_refused(tmp_path, dims):
    _refused(_file(tmp_path, _entry(b"w", dims, b"Float32", b"")), "'w'", "more elements than an array can hold")


def test_declared_size_is_checked_before_allocating(tmp_path):
    # 16 GiB declared, 8 bytes present: refused without numpy allocating the declared size.
    path = _file(tmp_path, _entry(b"w", [2**16, 2**16], b"Float32", bytes(8)))
    tracemalloc.start()
    try:
        _refused(path, "'w'", "17179869184 bytes", "content has 8 bytes")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_content_length_mismatch(tmp_path):
    _refused(_file(tmp_path, _entry(b"w", [3], b"Float32", bytes(8))), "'w'", "(12 bytes)", "content has 8 bytes")
    _refused(_file(tmp_path, _entry(b"h", [2], b"BFloat16", bytes(5))), "'h'", "content has 5 bytes")


def test_negative_dims(tmp_path):
    _refused(_file(tmp_path, _entry(b"w", [-2, 2], b"Float32", bytes(16))), "'w'", "negative dims [-2, 2]")


def test_too_many_dims(tmp_path):
    _refused(_file(tmp_path, _entry(b"w", [1] * 40, b"Float32", bytes(4))), "'w'", "40 dims")


@pytest.mark.parametrize("tensor_type", [b"Complex64", b"float32", b"", b"Float32 "])
def test_unknown_tensor_types(tmp_path, tensor_type):
    _refused(_file(tmp_path, _entry(b"w", [2], tensor_type, bytes(8))), "'w'", "tensor_type", "not supported")


def test_a_name_that_is_not_utf8(tmp_path):
    _refused(_file(tmp_path, _entry(b"conv\xff\xfe", [2], b"Float32", bytes(8))), "name", "not valid UTF-8")


def test_a_tensor_type_that_is_not_utf8(tmp_path):
    _refused(_file(tmp_path, _entry(b"w", [2], b"Float\xff", bytes(8))), "tensor_type", "not valid UTF-8")


def test_an_empty_name(tmp_path):
    _refused(_file(tmp_path, _entry(b"", [2], b"Float32", bytes(8))), "empty name")


def test_str_entries_that_are_not_utf32(tmp_path):
    _refused(_file(tmp_path, _entry(b"s", [0], b"str", b"\xff\xff\xff\xff")), "'s'", "not valid UTF-32")
    _refused(_file(tmp_path, _entry(b"s", [0], b"str", (0xD800).to_bytes(4, "little"))), "'s'", "not valid UTF-32")
    _refused(_file(tmp_path, _entry(b"s", [0], b"str", b"abc")), "'s'", "not a multiple of 4")


def test_a_valid_str_entry_still_loads(tmp_path):
    path = _file(tmp_path, _entry(b"s", [0], b"str", "héllo ✓".encode("utf-32-le")), "ok.ckpt")
    assert load_checkpoint(path) == {"s": "héllo ✓"}


def test_an_entry_without_a_tensor(tmp_path):
    _refused(_file(tmp_path, ld(1, ld(1, b"w"))), "'w'", "holds no tensor")


def test_a_missing_required_field(tmp_path):
    tensor = _dim(2) + ld(3, bytes(8))  # no tensor_type
    _refused(_file(tmp_path, ld(1, ld(1, b"w") + ld(2, tensor))), "not a valid MindSpore checkpoint")


def test_errors_are_value_errors_as_mindspore_raises(tmp_path):
    assert issubclass(InvalidCheckpointError, ValueError)
    with pytest.raises(InvalidCheckpointError):
        load_checkpoint(_file(tmp_path, b""))
