"""MindSpore .ckpt wire format, checked against a protobuf encoder/decoder written here from the schema.

Schema (MindSpore checkpoint.proto): Checkpoint{repeated Value value = 1}, Value{string tag = 1;
TensorProto tensor = 2}, TensorProto{repeated int64 dims = 1; string tensor_type = 2; bytes tensor_content = 3}.
"""
import os

import numpy as np
import pytest

from aotnn.train import checkpoint_format as cf
from aotnn.train.checkpoint_format import CheckpointNotFoundError, read_checkpoint, write_checkpoint

from .wire import ld, varint


# ---------------------------------------------------------------- checkpoint messages encoded and decoded by hand
def _tensor(dims, tensor_type, content, packed=False):
    if packed:
        body = ld(1, b"".join(varint(d) for d in dims)) if dims else b""
    else:
        body = b"".join(varint(1 << 3 | 0) + varint(d) for d in dims)
    return body + ld(2, tensor_type.encode()) + ld(3, content)


def _value(tag, tensor_bytes):
    """One serialized Checkpoint message holding one Value (MindSpore writes one per tensor and concatenates)."""
    return ld(1, ld(1, tag.encode()) + ld(2, tensor_bytes))


def _read_varint(buf, pos):
    shift = result = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def _fields(buf):
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 2:
            length, pos = _read_varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        yield field, wire, value


def _decode(buf):
    """[(tag, dims, tensor_type, content)] of a checkpoint file's bytes."""
    entries = []
    for field, wire, value in _fields(buf):
        assert (field, wire) == (1, 2)
        tag, tensor = None, None
        for f, _, v in _fields(value):
            if f == 1:
                tag = v.decode()
            elif f == 2:
                tensor = v
        dims, ttype, content = [], None, None
        for f, w, v in _fields(tensor):
            if f == 1 and w == 0:
                dims.append(v)
            elif f == 1 and w == 2:
                dims.extend(d for _, _, d in _fields_packed(v))
            elif f == 2:
                ttype = v.decode()
            elif f == 3:
                content = bytes(v)
        entries.append((tag, dims, ttype, content))
    return entries


def _fields_packed(buf):
    pos = 0
    while pos < len(buf):
        value, pos = _read_varint(buf, pos)
        yield None, 0, value


# ------------------------------------------------------------------------------------------------ tests
def _known_checkpoint():
    weight = np.arange(8, dtype="<f4").reshape(2, 1, 2, 2) / 8
    bias = np.array([1.5, -2.0, 0.25], dtype="<f2")
    data = (_value("conv1.weight", _tensor([2, 1, 2, 2], "Float32", weight.tobytes()))
            + _value("fc.bias", _tensor([3], "Float16", bias.tobytes()))
            + _value("global_step", _tensor([1], "Int32", np.array([7], "<i4").tobytes()))
            + _value("learning_rate", _tensor([0], "Float32", np.array(0.01, "<f4").tobytes()))
            + _value("lr_v2", _tensor([], "Float64", np.array(0.5, "<f8").tobytes()))
            + _value("mask", _tensor([2, 2], "Bool", bytes([1, 0, 0, 1]), packed=True))
            + _value("old_u8", _tensor([2], "Uint8", bytes([3, 250]))))
    return data, weight, bias


def test_read_hand_encoded(tmp_path):
    data, weight, bias = _known_checkpoint()
    path = tmp_path / "known.ckpt"
    path.write_bytes(data)
    got = read_checkpoint(str(path))
    assert list(got) == ["conv1.weight", "fc.bias", "global_step", "learning_rate", "lr_v2", "mask", "old_u8"]
    np.testing.assert_array_equal(got["conv1.weight"], weight)
    assert got["conv1.weight"].dtype == np.float32
    np.testing.assert_array_equal(got["fc.bias"], bias)
    assert got["fc.bias"].dtype == np.float16
    assert got["global_step"].shape == (1,) and got["global_step"].dtype == np.int32 and got["global_step"][0] == 7
    assert got["learning_rate"].shape == () and got["learning_rate"] == np.float32(0.01)
    assert got["lr_v2"].shape == () and got["lr_v2"].dtype == np.float64 and got["lr_v2"] == 0.5
    np.testing.assert_array_equal(got["mask"], [[True, False], [False, True]])
    assert got["old_u8"].dtype == np.uint8 and list(got["old_u8"]) == [3, 250]


def test_written_bytes_match_hand_encoding(tmp_path):
    weight = np.arange(6, dtype=np.float32).reshape(2, 3)
    step = np.array([3], dtype=np.int64)
    lr = np.array(0.125, dtype=np.float32)
    path = tmp_path / "w.ckpt"
    write_checkpoint(str(path), [("fc.weight", weight), ("global_step", step), ("learning_rate", lr)])
    raw = path.read_bytes()
    assert _decode(raw) == [("fc.weight", [2, 3], "Float32", weight.tobytes()),
                            ("global_step", [1], "Int64", step.tobytes()),
                            ("learning_rate", [0], "Float32", lr.tobytes())]
    expected = (_value("fc.weight", _tensor([2, 3], "Float32", weight.tobytes()))
                + _value("global_step", _tensor([1], "Int64", step.tobytes()))
                + _value("learning_rate", _tensor([0], "Float32", lr.tobytes())))
    assert raw == expected


ALL_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64",
              "uint8", "uint16", "uint32", "uint64", "bool"]
MS_NAMES = ["Float16", "Float32", "Float64", "Int8", "Int16", "Int32", "Int64",
            "UInt8", "UInt16", "UInt32", "UInt64", "Bool"]


@pytest.mark.parametrize("dtype,ms_name", zip(ALL_DTYPES, MS_NAMES))
def test_round_trip_all_dtypes(tmp_path, dtype, ms_name):
    rng = np.random.default_rng(0)
    values = {
        "t3d": (rng.standard_normal((2, 3, 4)) * 50).astype(dtype),
        "scalar": np.array(1, dtype=dtype),
        "empty": np.zeros((0,), dtype=dtype),
        "empty2d": np.zeros((2, 0), dtype=dtype),
        "transposed": (rng.standard_normal((3, 5)) * 50).astype(dtype).T,
    }
    path = tmp_path / "rt.ckpt"
    write_checkpoint(str(path), list(values.items()))
    assert {e[2] for e in _decode(path.read_bytes())} == {ms_name}
    got = read_checkpoint(str(path))
    assert list(got) == list(values)
    for name, value in values.items():
        assert got[name].dtype == np.dtype(dtype), name
        assert got[name].shape == value.shape, name
        np.testing.assert_array_equal(got[name], value)


def test_big_endian_input_written_little_endian(tmp_path):
    value = np.arange(4, dtype=">i4")
    path = tmp_path / "be.ckpt"
    write_checkpoint(str(path), [("x", value)])
    assert _decode(path.read_bytes())[0][3] == np.arange(4, dtype="<i4").tobytes()
    np.testing.assert_array_equal(read_checkpoint(str(path))["x"], value)


def test_str_entries(tmp_path):
    path = tmp_path / "s.ckpt"
    path.write_bytes(_value("note", _tensor([0], "str", np.array("hello").astype("<U5").tobytes())))
    assert str(read_checkpoint(str(path))["note"]) == "hello"
    write_checkpoint(str(path), [("note", np.array("héllo"))])
    assert _decode(path.read_bytes()) == [("note", [0], "str", "héllo".encode("utf-32-le"))]
    assert str(read_checkpoint(str(path))["note"]) == "héllo"


def test_bfloat16_read_as_float32(tmp_path):
    values = np.array([1.0, -2.5, 3.140625], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")
    path = tmp_path / "bf.ckpt"
    path.write_bytes(_value("w", _tensor([3], "BFloat16", bf16.tobytes())))
    got = read_checkpoint(str(path))["w"]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, values)


def test_chunked_tensor_is_joined(tmp_path, monkeypatch):
    monkeypatch.setattr(cf, "CHUNK_BYTES", 16)
    value = np.arange(25, dtype=np.float32).reshape(5, 5)
    path = tmp_path / "chunk.ckpt"
    write_checkpoint(str(path), [("big", value), ("small", np.ones(2, np.int8))])
    entries = _decode(path.read_bytes())
    assert [e[0] for e in entries] == ["big"] * 7 + ["small"]
    assert all(e[1] == [5, 5] for e in entries[:7])
    assert b"".join(e[3] for e in entries[:7]) == value.tobytes()
    got = read_checkpoint(str(path))
    np.testing.assert_array_equal(got["big"], value)


def test_random_op_entry_skipped(tmp_path):
    path = tmp_path / "r.ckpt"
    path.write_bytes(_value("random_op", _tensor([0], "random_op", b"\x01\x02"))
                     + _value("w", _tensor([1], "Int8", b"\x05")))
    assert list(read_checkpoint(str(path))) == ["w"]


def test_truncated_file(tmp_path):
    data, _, _ = _known_checkpoint()
    path = tmp_path / "trunc.ckpt"
    path.write_bytes(data[:-3])
    with pytest.raises(ValueError, match="not a valid MindSpore checkpoint") as info:
        read_checkpoint(str(path))
    assert "trunc.ckpt" in str(info.value)


@pytest.mark.parametrize("garbage", [b"PK\x03\x04" + bytes(range(60)), b"\xff" * 64,
                                     b"this is not a checkpoint\n"])
def test_garbage_file(tmp_path, garbage):
    path = tmp_path / "garbage.ckpt"
    path.write_bytes(garbage)
    with pytest.raises(ValueError, match="not a valid MindSpore checkpoint") as info:
        read_checkpoint(str(path))
    assert "garbage.ckpt" in str(info.value)


def test_missing_required_field(tmp_path):
    path = tmp_path / "noreq.ckpt"
    path.write_bytes(ld(1, ld(1, b"w") + ld(2, ld(3, b"\x00"))))  # no tensor_type
    with pytest.raises(ValueError, match="not a valid"):
        read_checkpoint(str(path))


def test_missing_file(tmp_path):
    path = tmp_path / "absent.ckpt"
    with pytest.raises(CheckpointNotFoundError) as info:
        read_checkpoint(str(path))
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, ValueError)
    assert "absent.ckpt" in str(info.value)


def test_content_length_mismatch_names_tensor(tmp_path):
    path = tmp_path / "len.ckpt"
    path.write_bytes(_value("conv.weight", _tensor([2, 2], "Float32", bytes(12))))
    with pytest.raises(ValueError, match="conv.weight") as info:
        read_checkpoint(str(path))
    assert "12 bytes" in str(info.value) and "16 bytes" in str(info.value)


def test_unknown_tensor_type(tmp_path):
    path = tmp_path / "t.ckpt"
    path.write_bytes(_value("w", _tensor([1], "Complex64", bytes(8))))
    with pytest.raises(ValueError, match="Complex64"):
        read_checkpoint(str(path))


def test_empty_file_reads_empty(tmp_path):
    path = tmp_path / "empty.ckpt"
    write_checkpoint(str(path), [])
    assert path.read_bytes() == b""
    assert read_checkpoint(str(path)) == {}


def test_atomic_replace_and_no_temp_left(tmp_path):
    path = tmp_path / "a.ckpt"
    write_checkpoint(str(path), [("x", np.ones(3, np.float32))])
    write_checkpoint(str(path), [("y", np.zeros(2, np.int32))])
    assert list(read_checkpoint(str(path))) == ["y"]
    assert os.listdir(tmp_path) == ["a.ckpt"]
    with pytest.raises(TypeError, match="complex"):
        write_checkpoint(str(path), [("z", np.ones(2, np.complex64))])
    assert list(read_checkpoint(str(path))) == ["y"]  # old file untouched
    assert os.listdir(tmp_path) == ["a.ckpt"]


def test_write_into_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_checkpoint(str(tmp_path / "nope" / "x.ckpt"), [("x", np.ones(1))])


def test_protobuf_classes_parse_hand_bytes():
    data, _, _ = _known_checkpoint()
    msg = cf.Checkpoint()
    msg.ParseFromString(data)
    assert [v.tag for v in msg.value][:2] == ["conv1.weight", "fc.bias"]
    assert list(msg.value[0].tensor.dims) == [2, 1, 2, 2]
