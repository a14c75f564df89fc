"""The generated model.c of a bundle (schedules.embedded.generate_model_c): tensors of one shape share one
const shape array (flash on a microcontroller), each descriptor pointing at the array of its own shape."""
from __future__ import annotations

import re

from schedules.embedded import generate_model_c


def _spec(name: str, shape: list[int], **extra) -> dict:
    return {"name": name, "shape": shape, "dtype": "float32", **extra}


def test_tensors_of_one_shape_share_one_shape_array():
    record = {
        "inputs": [_spec("x", [1, 4])],
        "outputs": [_spec("y", [1, 4])],
        "params": [_spec("w", [1, 4]), _spec("s", [])],
        "buffers": [_spec("t", [2, 3], offset=0, nbytes=24)],
        "prepared": [],
        "prepare_steps": [],
        "steps": [{"kernel": "mul", "args": [{"kind": "input", "index": 0}, {"kind": "param", "index": 0},
                                             {"kind": "buffer", "index": 0}]},
                  {"kernel": "add", "args": [{"kind": "buffer", "index": 0}, {"kind": "param", "index": 1},
                                             {"kind": "output", "index": 0}]}],
        "output_refs": [{"kind": "output", "index": 0}],
        "arena_bytes": 64,
    }
    source = generate_model_c(record, {"w": 0, "s": 64}, 128, 0)
    arrays = dict(re.findall(r"static const int64_t (\w+)\[\] = \{([^}]*)\};", source))
    assert sorted(arrays.values()) == ["1", "1, 4", "2, 3"]
    by_shape = {shape: name for name, shape in arrays.items()}
    descriptors = dict(re.findall(r"AotnnDLTensor (\w+) = \{[^;]*\(int64_t\*\)(\w+), 0, 0\};", source))
    assert descriptors == {"input0": by_shape["1, 4"], "output0": by_shape["1, 4"], "param0": by_shape["1, 4"],
                           "param1": by_shape["1"], "buffer0": by_shape["2, 3"]}
