"""``aotnn.export``: write a network as a self-contained artifact (kernels, plan, weights)."""
from __future__ import annotations

import os
from typing import Any

import schedules
from schedules.output_dir import check_output

from ..common.tensor import Tensor
from .cell_call import _input_names
from .compiled import capture_function

FORMATS = ("AOT", "BUNDLE", "ONNX")


def export(net, *inputs: Any, file_name: str, file_format: str = "AOT", target: Any = None, **kwargs: Any) -> str:
    """Export ``net`` compiled for ``inputs``' shapes and dtypes, MindSpore's ``export``.

    Args:
        net: the Cell to export.
        inputs: example Tensors (or numpy arrays) fixing the input signature.
        file_name: output path; '.aot' is appended for the AOT and BUNDLE formats if missing, '.onnx'
            for ONNX. An aotnn artifact (or a file, for ONNX) already there is replaced, as MindSpore
            replaces its own output file; a directory that is not an aotnn artifact is never replaced.
        file_format: 'AOT' (an artifact the Python runtime loads), 'BUNDLE' (C sources, kernel
            objects and weights for the embedded C runtime; chosen automatically for cross targets)
            or 'ONNX' (a '.onnx' file, opset 17; ``opset=`` picks another).
        target: target name or TVM target dict (default: this host's CPU).
        tuning_db: (keyword) a tuning database directory from ``aotnn tune``; its best records are
            used where they beat the default schedules (host artifacts).

    A network that updates parameters when called (``nn.TrainOneStepCell(nn.WithLossCell(net,
    loss), optimizer)``: weights, optimizer moments, BatchNorm statistics) becomes a training
    artifact with one entry point, ``train_step``: ``aotnn_runtime.load(path).run(data, label)``
    performs one step, writes every update back into the module's weights and returns the loss.
    As a BUNDLE (e.g. ``target='cortex-m4'``) the updated parameters and optimizer state live in
    static RAM and each ``aotnn_model_run`` is one step; frozen parameters (``requires_grad=False``,
    left out of the optimizer) stay const weights.

    Returns:
        the path written.
    Raises:
        ValueError: unknown file_format, or no inputs;
            a network that draws random numbers (Dropout in training mode).
        TypeError: an input that is not a Tensor or numpy array.
        FileExistsError: the path exists and is not an aotnn artifact (AOT, BUNDLE).
        IsADirectoryError: the ONNX path is a directory.
    """
    if file_format not in FORMATS:
        raise ValueError(f"file_format: expected one of {FORMATS}, got {file_format!r}")
    path = os.fspath(file_name)
    suffix = ".onnx" if file_format == "ONNX" else ".aot"
    if not path.endswith(suffix):
        path += suffix
    return export_to_path(net, *inputs, path=path, file_format=file_format, target=target, **kwargs)


def export_to_path(net, *inputs: Any, path: str, file_format: str = "AOT", target: Any = None,
                   **kwargs: Any) -> str:
    """:func:`export` to exactly ``path`` (no suffix added): what ``aotnn compile/export -o PATH`` write.

    Args and Raises: as :func:`export`, with ``path`` for ``file_name``.
    Returns:
        ``path``.
    """
    if file_format not in FORMATS:
        raise ValueError(f"file_format: expected one of {FORMATS}, got {file_format!r}")
    if file_format == "ONNX":
        from ..onnx import to_onnx_model, write_onnx
        if os.path.isdir(path):  # before the capture, which may take a while
            raise IsADirectoryError(f"file_name: {path!r} is a directory; expected a path for the .onnx file")
        return write_onnx(to_onnx_model(net, *inputs, opset=kwargs.get("opset")), path)
    check_output(path)  # before the capture and compilation
    if not inputs:
        raise ValueError("inputs: export needs at least one example input")
    tensors = []
    for i, value in enumerate(inputs):
        if not isinstance(value, Tensor):
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                value = Tensor(value)
            else:
                raise TypeError(f"inputs[{i}]: expected a Tensor or numpy array, got {type(value).__name__}")
        tensors.append(value)
    names = _input_names(net, len(tensors))
    specs = [(name, t.shape, t.dtype.name) for name, t in zip(names, tensors)]
    mod, capture, _, _ = capture_function(lambda *xs: net._construct_with_precision(xs, {}), specs)
    if capture.random_inputs:
        raise ValueError(f"net: {type(net).__name__} draws random numbers when called (e.g. Dropout in training "
                         f"mode); an artifact takes no random inputs: call net.set_train(False) or remove them")
    weights = {name: param.asnumpy() for name, param in zip(capture.param_names, capture.param_keys)}
    target_dict = schedules.resolve(target)
    gpu_target = target_dict.get("kind") in ("vulkan", "webgpu", "cuda")  # built by schedules.build
    if file_format == "BUNDLE" or not (schedules.target.is_host(target_dict) or gpu_target):
        updated = [index for index, _ in capture.param_updates]
        return schedules.build_bundle(mod, names, capture.param_names, target=target_dict, output_dir=path,
                                      weights=weights, metadata={"network": type(net).__name__},
                                      entry="train_step" if updated else "predict", param_updates=updated)
    # A training step (TrainOneStepCell...) records which parameters each trailing output updates, so
    # aotnn_runtime writes them back after every call: stepping the artifact trains on device.
    updated = [index for index, _ in capture.param_updates]
    schedules.build(mod, names, capture.param_names, target=target_dict, output_dir=path, weights=weights,
                    num_param_updates=updated, entry="train_step" if updated else "predict",
                    tuning_db=kwargs.get("tuning_db"), metadata={"network": type(net).__name__})
    return path
