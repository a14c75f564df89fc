"""MindSpore's ``.ckpt`` file format: a protobuf ``Checkpoint`` message, read and written with numpy.

The schema is MindSpore's ``checkpoint.proto`` (proto2), built at import time with dynamic descriptors::

    message Checkpoint {
        message Value {
            required string tag = 1;
            oneof value { TensorProto tensor = 2; MapTensorProto maptensor = 3; }
        }
        repeated Value value = 1;
    }
    message TensorProto {
        repeated int64 dims = 1;            // [0] for a scalar
        required string tensor_type = 2;    // 'Float32', 'Int64', 'UInt8', 'Bool', 'str', ...
        required bytes tensor_content = 3;  // raw little-endian C-order element bytes
    }
    message MapTensorProto { repeated TensorProto tensor = 1; }

MindSpore writes one serialized ``Checkpoint`` per tensor (several, with the same tag, for tensors over
512 MiB) and concatenates them; protobuf parsing of the concatenation merges the ``value`` lists. Consecutive
values with the same tag are joined back into one tensor.
"""
from __future__ import annotations

import math
import os
import warnings
from typing import Dict, Iterable, List, Tuple

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError
from aotnn_runtime.weights import atomic_write

__all__ = ["write_checkpoint", "read_checkpoint", "CheckpointNotFoundError", "InvalidCheckpointError", "Checkpoint",
           "TensorProto", "TENSOR_TYPES"]

# Bytes of tensor content per Value, as MindSpore's _write_parameter_bytes_data (1024 * SLICE_SIZE KB).
CHUNK_BYTES = 512 * 1024 * 1024

# MindSpore tensor_type string -> numpy dtype (little-endian).
TENSOR_TYPES: Dict[str, np.dtype] = {
    "Float16": np.dtype("<f2"), "Float32": np.dtype("<f4"), "Float64": np.dtype("<f8"),
    "Int8": np.dtype("i1"), "Int16": np.dtype("<i2"), "Int32": np.dtype("<i4"), "Int64": np.dtype("<i8"),
    "UInt8": np.dtype("u1"), "UInt16": np.dtype("<u2"), "UInt32": np.dtype("<u4"), "UInt64": np.dtype("<u8"),
    "Bool": np.dtype("?"),
}
# MindSpore 1.x spelled the unsigned types 'Uint8', ...: accepted when reading.
_READ_ALIASES = {"Uint8": "UInt8", "Uint16": "UInt16", "Uint32": "UInt32", "Uint64": "UInt64"}
_NUMPY_TO_TYPE = {dt.name: name for name, dt in TENSOR_TYPES.items()}


# numpy's limit on array dimensions is 64 (32 before numpy 2); MindSpore tensors have far fewer.
MAX_DIMS = 32


class CheckpointNotFoundError(FileNotFoundError, ValueError):
    """The checkpoint file does not exist (a FileNotFoundError, and a ValueError as MindSpore raises)."""


class InvalidCheckpointError(ValueError):
    """A checkpoint path is not a readable, well-formed ``.ckpt`` file; the message names the file and the fault.

    A ValueError, as MindSpore's ``load_checkpoint`` raises for a file of the wrong format.
    """


def _build_messages():
    fdp = descriptor_pb2.FileDescriptorProto(name="aotnn/train/checkpoint.proto", package="aotnn.ckpt",
                                             syntax="proto2")
    label = descriptor_pb2.FieldDescriptorProto
    tensor = fdp.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, type=label.TYPE_INT64, label=label.LABEL_REPEATED)
    tensor.field.add(name="tensor_type", number=2, type=label.TYPE_STRING, label=label.LABEL_REQUIRED)
    tensor.field.add(name="tensor_content", number=3, type=label.TYPE_BYTES, label=label.LABEL_REQUIRED)
    map_tensor = fdp.message_type.add(name="MapTensorProto")
    map_tensor.field.add(name="tensor", number=1, type=label.TYPE_MESSAGE, label=label.LABEL_REPEATED,
                         type_name=".aotnn.ckpt.TensorProto")
    ckpt = fdp.message_type.add(name="Checkpoint")
    value = ckpt.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    value.field.add(name="tag", number=1, type=label.TYPE_STRING, label=label.LABEL_REQUIRED)
    value.field.add(name="tensor", number=2, type=label.TYPE_MESSAGE, label=label.LABEL_OPTIONAL,
                    type_name=".aotnn.ckpt.TensorProto", oneof_index=0)
    value.field.add(name="maptensor", number=3, type=label.TYPE_MESSAGE, label=label.LABEL_OPTIONAL,
                    type_name=".aotnn.ckpt.MapTensorProto", oneof_index=0)
    ckpt.field.add(name="value", number=1, type=label.TYPE_MESSAGE, label=label.LABEL_REPEATED,
                   type_name=".aotnn.ckpt.Checkpoint.Value")
    pool = descriptor_pool.DescriptorPool()  # private pool: no clash with other protos of the process
    pool.Add(fdp)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("aotnn.ckpt.Checkpoint")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("aotnn.ckpt.TensorProto")))


Checkpoint, TensorProto = _build_messages()


def _tensor_type_of(name: str, array: np.ndarray) -> str:
    kind_name = array.dtype.name
    if kind_name == "bfloat16":
        return "BFloat16"
    if array.dtype.kind == "U":
        return "str"
    if kind_name not in _NUMPY_TO_TYPE:
        raise TypeError(f"For 'write_checkpoint', the tensor {name!r} has dtype {array.dtype}, which a MindSpore "
                        f"checkpoint cannot hold; supported: {sorted(_NUMPY_TO_TYPE)}, bfloat16 and str.")
    return _NUMPY_TO_TYPE[kind_name]


def _encode_item(name: str, array: np.ndarray) -> Iterable[bytes]:
    """Serialized Checkpoint messages for one tensor (one per content chunk, as MindSpore writes)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"For 'write_checkpoint', tensor names must be non-empty str, but got {name!r}.")
    array = np.asarray(array)
    tensor_type = _tensor_type_of(name, array)
    if tensor_type == "str":
        if array.ndim != 0:
            raise ValueError(f"For 'write_checkpoint', the string entry {name!r} must be a single str (0-d array), "
                             f"but got shape {array.shape}.")
        content = array.astype(f"<U{max(array.dtype.itemsize // 4, 1)}").tobytes()
        dims = [0]
    else:
        if tensor_type != "BFloat16":
            array = array.astype(array.dtype.newbyteorder("<"), copy=False)
        content = np.ascontiguousarray(array).tobytes()
        # Scalars are written with dims [0], as MindSpore 1.x does (MindSpore 2.x reads [0] back as a scalar).
        dims = list(array.shape) if array.ndim else [0]
    for start in range(0, max(len(content), 1), CHUNK_BYTES):
        ckpt = Checkpoint()
        value = ckpt.value.add()
        value.tag = name
        value.tensor.dims.extend(dims)
        value.tensor.tensor_type = tensor_type
        value.tensor.tensor_content = content[start:start + CHUNK_BYTES]
        yield ckpt.SerializeToString()


def write_checkpoint(path: str, items: List[Tuple[str, np.ndarray]]) -> None:
    """
    Write tensors to a MindSpore ``.ckpt`` file, atomically (temporary file in the same folder, then rename).

    Args:
        path (str): Destination file name (written as given; no suffix is added).
        items (list[tuple[str, numpy.ndarray]]): (name, value) pairs, in file order. Values of numeric/bool
            dtypes, ``ml_dtypes.bfloat16``, or a 0-d numpy str array (MindSpore's 'str' entries).

    Raises:
        TypeError: If a name is not a str or a dtype has no MindSpore counterpart.
        ValueError: If a str entry is not 0-d.
        OSError: If the file cannot be written.
    """
    path = os.fspath(path)
    encoded = [chunk for name, array in items for chunk in _encode_item(name, array)]
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"For 'write_checkpoint', the folder of {path!r} does not exist.")

    def write(stream) -> None:
        for chunk in encoded:
            stream.write(chunk)

    atomic_write(path, write)


def _bfloat16_to_float32(content: bytes) -> np.ndarray:
    bits = np.frombuffer(content, dtype="<u2").astype(np.uint32) << 16
    return bits.view(np.float32)


def _decode_str(path: str, tag: str, content: bytes) -> np.ndarray:
    if len(content) % 4:
        raise InvalidCheckpointError(f"Checkpoint file {path!r}: the str entry {tag!r} has {len(content)} content "
                                     "bytes, not a multiple of 4 (UTF-32).")
    try:
        text = content.decode("utf-32-le")
    except UnicodeDecodeError as err:
        raise InvalidCheckpointError(f"Checkpoint file {path!r}: the str entry {tag!r} is not valid UTF-32 "
                                     f"({err.reason} at byte {err.start}).") from None
    return np.array(text.rstrip("\0"))  # numpy's str arrays drop trailing NULs, as MindSpore reads them


def _decode_tensor(path: str, tag: str, dims: List[int], tensor_type: str, content: bytes) -> np.ndarray:
    """The array of one entry; its declared size is checked against the content before numpy sees it."""
    tensor_type = _READ_ALIASES.get(tensor_type, tensor_type)
    if tensor_type == "str":
        return _decode_str(path, tag, content)
    if tensor_type == "BFloat16":
        dtype = np.dtype("<u2")
    elif tensor_type in TENSOR_TYPES:
        dtype = TENSOR_TYPES[tensor_type]
    else:
        raise InvalidCheckpointError(f"Checkpoint file {path!r}: the tensor {tag!r} has tensor_type {tensor_type!r}, "
                                     f"which is not supported; supported: "
                                     f"{sorted(TENSOR_TYPES) + ['BFloat16', 'str']}.")
    shape = tuple(int(d) for d in dims)
    if shape == (0,) and len(content) == dtype.itemsize:
        shape = ()  # MindSpore writes dims [0] for a scalar
    if any(d < 0 for d in shape):
        raise InvalidCheckpointError(f"Checkpoint file {path!r}: the tensor {tag!r} has negative dims {list(shape)}.")
    if len(shape) > MAX_DIMS:
        raise InvalidCheckpointError(f"Checkpoint file {path!r}: the tensor {tag!r} has {len(shape)} dims, "
                                     f"more than the {MAX_DIMS} supported.")
    if math.prod(d for d in shape if d) * dtype.itemsize > np.iinfo(np.intp).max:  # numpy refuses even 0-size ones
        raise InvalidCheckpointError(f"Checkpoint file {path!r}: the tensor {tag!r} has dims {list(shape)}, more "
                                     "elements than an array can hold.")
    expected = math.prod(shape) * dtype.itemsize  # Python ints: dims like [2**32, 2**32] do not wrap around
    if expected != len(content):
        raise InvalidCheckpointError(f"Checkpoint file {path!r}: the tensor {tag!r} has dims {list(dims)} and type "
                                     f"{tensor_type} ({expected} bytes), but its content has {len(content)} bytes.")
    if tensor_type == "BFloat16":
        return _bfloat16_to_float32(content).reshape(shape)
    return np.frombuffer(content, dtype=dtype).astype(dtype.newbyteorder("="), copy=True).reshape(shape)


def _parse(path: str) -> "Checkpoint":
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError as err:
        raise CheckpointNotFoundError(err.errno, f"The checkpoint file does not exist: {path!r}", path) from err
    except IsADirectoryError:
        raise InvalidCheckpointError(f"The checkpoint path {path!r} is a directory, not a file.") from None
    except OSError as err:
        raise InvalidCheckpointError(f"The checkpoint file {path!r} cannot be read ({err.strerror}).") from None
    ckpt = Checkpoint()
    try:
        ckpt.ParseFromString(data)
        if not ckpt.IsInitialized():
            raise DecodeError("missing required fields")
    except (DecodeError, RuntimeError, ValueError) as err:
        raise InvalidCheckpointError(f"The file {path!r} is not a valid MindSpore checkpoint (.ckpt): it is "
                                     f"truncated, corrupt or of another format ({err}).") from None
    return ckpt


def _text(path: str, what: str, value: "str | bytes") -> str:
    """A string field's value; protobuf hands back bytes when they are not valid UTF-8."""
    if isinstance(value, str):
        return value
    raise InvalidCheckpointError(f"Checkpoint file {path!r}: {what} {bytes(value)[:64]!r} is not valid UTF-8 "
                                 "(the file is corrupt).")


def read_checkpoint(path: str) -> Dict[str, np.ndarray]:
    """
    Read a MindSpore ``.ckpt`` file.

    Args:
        path (str): The checkpoint file.

    Returns:
        dict[str, numpy.ndarray], name -> value in file order. Scalars (dims [0] or []) are 0-d arrays,
        'BFloat16' tensors are converted to float32, 'str' entries are 0-d numpy str arrays. MindSpore's
        graph random state ('random_op') and map-parameter entries are skipped (with a warning for the latter).

    Raises:
        CheckpointNotFoundError: If the file does not exist (also a FileNotFoundError and a ValueError).
        InvalidCheckpointError: (a ValueError) If the path is a directory or unreadable, the file is not a valid
            checkpoint, or an entry is malformed: a name or type that is not UTF-8, an unknown type, negative or
            too many dims, or content bytes that differ from what the dims and type declare. The message names
            the file.
    """
    path = os.fspath(path)
    ckpt = _parse(path)
    result: Dict[str, np.ndarray] = {}
    values = ckpt.value
    tags = [_text(path, f"the name of entry {index}", value.tag) for index, value in enumerate(values)]
    pending: List[bytes] = []
    for index, (tag, value) in enumerate(zip(tags, values)):
        if not tag:
            raise InvalidCheckpointError(f"Checkpoint file {path!r}: entry {index} has an empty name.")
        kind = value.WhichOneof("value")
        if kind is None:
            raise InvalidCheckpointError(f"The file {path!r} is not a valid MindSpore checkpoint (.ckpt): the entry "
                                         f"{tag!r} holds no tensor.")
        if kind != "tensor":
            warnings.warn(f"Checkpoint file {path!r}: skipping {tag!r}, a MindSpore map parameter "
                          "(not supported).", stacklevel=2)
            continue
        tensor_type = _text(path, f"the tensor_type of {tag!r}", value.tensor.tensor_type)
        if tensor_type == "random_op":
            continue
        pending.append(value.tensor.tensor_content)
        last = index == len(values) - 1 or tags[index + 1] != tag
        if last:
            result[tag] = _decode_tensor(path, tag, list(value.tensor.dims), tensor_type, b"".join(pending))
            pending = []
    return result
