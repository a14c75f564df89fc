"""Saving and loading parameters: MindSpore's ``save_checkpoint``, ``load_checkpoint``, ``load_param_into_net``.

Files are MindSpore ``.ckpt`` files (see :mod:`aotnn.train.checkpoint_format`), readable by MindSpore and
the other way round. Parameters of a Cell are keyed by the names ``Cell.parameters_and_names()`` yields.
"""
from __future__ import annotations

import logging
import numbers
import os
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .checkpoint_format import CheckpointNotFoundError, read_checkpoint, write_checkpoint

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]

logger = logging.getLogger("aotnn")

_FLOAT_NAMES = frozenset(("float16", "float32", "float64", "bfloat16"))
_INT_NAMES = frozenset(("int8", "int16", "int32", "int64"))
_ASYNC_THREADS: List[threading.Thread] = []


class _LoadParamError(ValueError, RuntimeError):
    """A checkpoint value does not fit a network parameter (ValueError; RuntimeError as MindSpore raises)."""


def _tensor_types():
    from aotnn.common.parameter import Parameter
    from aotnn.common.tensor import Tensor
    return Tensor, Parameter


def _check_bool(value: Any, arg_name: str, func: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{func}', the argument '{arg_name}' must be bool, but got {type(value).__name__}.")
    return value


def _file_name(ckpt_file_name: Any, func: str) -> str:
    if isinstance(ckpt_file_name, os.PathLike):
        ckpt_file_name = os.fspath(ckpt_file_name)
    if not isinstance(ckpt_file_name, str):
        raise TypeError(f"For '{func}', the argument 'ckpt_file_name' must be str, "
                        f"but got {type(ckpt_file_name).__name__}.")
    return os.path.abspath(ckpt_file_name)


def _is_cell(obj: Any) -> bool:
    return callable(getattr(obj, "parameters_and_names", None))


def _net_parameters(net: Any) -> List[Tuple[str, Any]]:
    """(name, Parameter) pairs of a Cell, each parameter once, named by ``Parameter.name`` as MindSpore saves
    them (a TrainOneStepCell's ``moments.fc.weight``, not its attribute path ``optimizer.moments.fc.weight``).
    Parameters whose names collide keep their ``parameters_and_names()`` key instead."""
    seen, found = set(), []
    for key, param in net.parameters_and_names():
        if id(param) not in seen:
            seen.add(id(param))
            found.append((key, param))
    names = [param.name for _, param in found]
    taken = {name for name in names if names.count(name) == 1}
    return [(param.name if param.name in taken else key, param) for key, param in found]


def _as_array(name: str, value: Any) -> np.ndarray:
    """numpy value of a Tensor/Parameter/array/number/str (MindSpore's Tensor defaults for Python numbers)."""
    tensor_cls, _ = _tensor_types()
    if isinstance(value, tensor_cls):
        return value.asnumpy()
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, str):
        return np.array(value)
    if isinstance(value, bool):
        return np.array(value, dtype=np.bool_)
    if isinstance(value, np.generic):
        return np.array(value)
    if isinstance(value, numbers.Integral):
        return np.array(value, dtype=np.int64)
    if isinstance(value, numbers.Real):
        return np.array(value, dtype=np.float32)
    raise TypeError(f"For 'save_checkpoint', the value of {name!r} must be a Parameter, Tensor, numpy array, "
                    f"number or str, but got {type(value).__name__}.")


def _collect(save_obj: Any, choice_func: Optional[Callable[[str], bool]]) -> List[Tuple[str, Any]]:
    """(name, value) pairs to save from a Cell, a list or a dict."""
    _, param_cls = _tensor_types()
    keep = (lambda name: True) if choice_func is None else choice_func
    if isinstance(save_obj, list):
        pairs = []
        for index, item in enumerate(save_obj):
            if isinstance(item, dict):
                if "name" not in item or "data" not in item:
                    raise TypeError(f"For 'save_checkpoint', the element {index} of 'save_obj' must be a dict with "
                                    f"keys 'name' and 'data', but got keys {sorted(item)}.")
                pairs.append((item["name"], item["data"]))
            elif isinstance(item, param_cls):
                pairs.append((item.name, item))
            else:
                raise TypeError(f"For 'save_checkpoint', when 'save_obj' is a list its elements must be dicts "
                                f"{{'name': ..., 'data': ...}} or Parameters, but element {index} is "
                                f"{type(item).__name__}.")
    elif isinstance(save_obj, dict):
        pairs = list(save_obj.items())
    elif _is_cell(save_obj):
        pairs = _net_parameters(save_obj)
    else:
        raise TypeError("For 'save_checkpoint', the argument 'save_obj' must be nn.Cell, list or dict, "
                        f"but got {type(save_obj).__name__}.")
    for name, _ in pairs:
        if not isinstance(name, str):
            raise TypeError(f"For 'save_checkpoint', parameter names must be str, but got {type(name).__name__}.")
    return [(name, value) for name, value in pairs if keep(name)]


def _check_append_dict(append_dict: Any) -> Dict[str, Any]:
    if append_dict is None:
        return {}
    if not isinstance(append_dict, dict):
        raise TypeError(f"For 'save_checkpoint', the argument 'append_dict' must be dict, "
                        f"but got {type(append_dict).__name__}.")
    tensor_cls, _ = _tensor_types()
    for key, value in append_dict.items():
        if not isinstance(key, str) or not isinstance(value, (int, float, bool, str, np.ndarray, tensor_cls)):
            raise TypeError("For 'save_checkpoint', 'append_dict' must map str to int, float, bool, str, "
                            f"Parameter or Tensor, but got key {type(key).__name__}, value {type(value).__name__}.")
    return append_dict


def save_checkpoint(save_obj: Any, ckpt_file_name: str, integrated_save: bool = True, async_save: bool = False,
                    append_dict: Optional[Dict[str, Any]] = None, enc_key: Optional[bytes] = None,
                    enc_mode: str = "AES-GCM", choice_func: Optional[Callable[[str], bool]] = None,
                    **kwargs) -> None:
    """
    Save parameters to a MindSpore checkpoint file.

    Args:
        save_obj (Union[Cell, list, dict]): A Cell (its ``parameters_and_names()``), a list of Parameters or of
            dicts ``{"name": str, "data": Parameter/Tensor/numpy array}``, or a dict name -> Parameter/Tensor/str
            (such as the result of :func:`load_checkpoint`).
        ckpt_file_name (str): File name; '.ckpt' is appended when missing. An existing file is replaced.
        integrated_save (bool): Parallel-training option of MindSpore; no effect on one device. Default: ``True``.
        async_save (bool): Write the file in a background thread. Default: ``False``.
        append_dict (dict): Extra entries, str -> int/float/bool/str/Parameter/Tensor. Python ints are saved as
            Int64 scalars, floats as Float32 scalars. Default: ``None``.
        enc_key (bytes): Encryption key; encryption is not supported, only ``None`` is accepted.
        enc_mode (str): Encryption mode, unused. Default: ``"AES-GCM"``.
        choice_func (Callable[[str], bool]): Keeps the parameters whose name it returns True for (not applied
            to `append_dict`). Default: ``None``.
        kwargs (dict): ``format`` ('ckpt' only); other MindSpore options are ignored.

    Raises:
        TypeError: If `save_obj`, `ckpt_file_name`, `integrated_save`, `async_save`, `append_dict` or a value
            has the wrong type.
        IsADirectoryError: If `ckpt_file_name` is a directory.
        NotImplementedError: If `enc_key` is given or `format` is not 'ckpt'.
    """
    path = _file_name(ckpt_file_name, "save_checkpoint")
    if os.path.isdir(path):
        raise IsADirectoryError(f"For 'save_checkpoint', the argument 'ckpt_file_name' {path!r} is a directory, "
                                "it must be a file name.")
    if not path.endswith(".ckpt"):
        path += ".ckpt"
    _check_bool(integrated_save, "integrated_save", "save_checkpoint")
    _check_bool(async_save, "async_save", "save_checkpoint")
    append_dict = _check_append_dict(append_dict)
    if enc_key is not None:
        raise NotImplementedError("For 'save_checkpoint', encrypted checkpoints ('enc_key') are not supported "
                                  "by aotnn; pass enc_key=None.")
    if not isinstance(enc_mode, str):
        raise TypeError(f"For 'save_checkpoint', the argument 'enc_mode' must be str, but got "
                        f"{type(enc_mode).__name__}.")
    if kwargs.get("format", "ckpt") != "ckpt":
        raise NotImplementedError(f"For 'save_checkpoint', only format='ckpt' is supported, "
                                  f"but got {kwargs['format']!r}.")
    entries: Dict[str, np.ndarray] = {}
    for name, value in _collect(save_obj, choice_func) + list(append_dict.items()):
        if name == "random_op":
            continue
        entries[name] = _as_array(name, value)
    items = list(entries.items())
    if async_save:
        thread = threading.Thread(target=write_checkpoint, args=(path, items), name="aotnn_async_save_ckpt")
        _ASYNC_THREADS.append(thread)
        thread.start()
    else:
        write_checkpoint(path, items)


def _wait_async_saves() -> None:
    """Wait for the checkpoints being written by ``save_checkpoint(..., async_save=True)``."""
    while _ASYNC_THREADS:
        _ASYNC_THREADS.pop().join()


def _check_prefix(prefix: Any, arg_name: str) -> Optional[Tuple[str, ...]]:
    if prefix is None:
        return None
    if isinstance(prefix, str):
        prefix = (prefix,)
    if not isinstance(prefix, (list, tuple)):
        raise TypeError(f"For 'load_checkpoint', the argument '{arg_name}' must be str, list[str] or tuple[str], "
                        f"but got {type(prefix).__name__}.")
    if not prefix:
        raise ValueError(f"For 'load_checkpoint', the argument '{arg_name}' can't be empty.")
    for index, item in enumerate(prefix):
        if not isinstance(item, str):
            raise TypeError(f"For 'load_checkpoint', the elements of '{arg_name}' must be str, but got "
                            f"{type(item).__name__} at index {index}.")
        if item == "":
            raise ValueError(f"For 'load_checkpoint', the argument '{arg_name}' can't include ''.")
    return tuple(prefix)


def load_checkpoint(ckpt_file_name: str, net: Any = None, strict_load: bool = False,
                    filter_prefix: Union[str, Sequence[str], None] = None, dec_key: Optional[bytes] = None,
                    dec_mode: str = "AES-GCM", specify_prefix: Union[str, Sequence[str], None] = None,
                    choice_func: Optional[Callable[[str], bool]] = None) -> Dict[str, Any]:
    """
    Load a MindSpore checkpoint file.

    Args:
        ckpt_file_name (str): Checkpoint file name, ending with '.ckpt'.
        net (Cell): If given, the parameters are loaded into it with :func:`load_param_into_net`.
            Default: ``None``.
        strict_load (bool): Passed to :func:`load_param_into_net`. Default: ``False``.
        filter_prefix (Union[str, list[str], tuple[str]]): Entries whose name starts with one of these are not
            loaded. Default: ``None``.
        dec_key (bytes): Decryption key; only ``None`` is supported.
        dec_mode (str): Decryption mode, unused. Default: ``"AES-GCM"``.
        specify_prefix (Union[str, list[str], tuple[str]]): Only entries whose name starts with one of these are
            loaded. Default: ``None``.
        choice_func (Callable[[str], bool]): Keeps the entries it returns True for; ignored when `filter_prefix`
            or `specify_prefix` is given (as in MindSpore). Default: ``None``.

    Returns:
        dict, name -> Parameter (named by its key); 'str' entries of the file are returned as Python str.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If the file does not exist, does not end with '.ckpt', is not a valid checkpoint, or no
            entry is left after filtering.
        NotImplementedError: If `dec_key` is given.
    """
    path = _file_name(ckpt_file_name, "load_checkpoint")
    if not path.endswith(".ckpt"):
        raise ValueError(f"For 'load_checkpoint', the checkpoint file should end with '.ckpt', but got {path!r}.")
    specify_prefix = _check_prefix(specify_prefix, "specify_prefix")
    filter_prefix = _check_prefix(filter_prefix, "filter_prefix")
    if dec_key is not None:
        raise NotImplementedError("For 'load_checkpoint', encrypted checkpoints ('dec_key') are not supported "
                                  "by aotnn; pass dec_key=None.")
    if not isinstance(dec_mode, str):
        raise TypeError(f"For 'load_checkpoint', the argument 'dec_mode' must be str, but got "
                        f"{type(dec_mode).__name__}.")
    if not os.path.isfile(path):
        raise CheckpointNotFoundError(2, f"For 'load_checkpoint', the checkpoint file {path!r} does not exist, "
                                         "please check whether the 'ckpt_file_name' is correct.", path)
    _, param_cls = _tensor_types()
    use_choice = choice_func is not None and specify_prefix is None and filter_prefix is None
    parameter_dict: Dict[str, Any] = {}
    for name, array in read_checkpoint(path).items():
        if specify_prefix and not name.startswith(specify_prefix):
            continue
        if filter_prefix and name.startswith(filter_prefix):
            continue
        if use_choice and not choice_func(name):
            continue
        parameter_dict[name] = str(array) if array.dtype.kind == "U" else param_cls(array, name=name)
    if not parameter_dict:
        raise ValueError(f"For 'load_checkpoint', the loaded parameter dict of {path!r} is empty after filter or "
                         "specify, please check whether 'filter_prefix', 'specify_prefix' or 'choice_func' are "
                         "set correctly.")
    if net is not None:
        load_param_into_net(net, parameter_dict, strict_load)
    return parameter_dict


def _value_array(value: Any) -> np.ndarray:
    tensor_cls, _ = _tensor_types()
    return value.asnumpy() if isinstance(value, tensor_cls) else np.asarray(value)


def _update_param(name: str, param: Any, value: Any, strict_load: bool) -> None:
    """Set a checkpoint value into a net parameter, checking shape and dtype as MindSpore does."""
    from aotnn.common import dtype as mstype
    tensor_cls, _ = _tensor_types()
    array = _value_array(value)
    shape, new_shape = tuple(param.shape), tuple(array.shape)
    if shape != new_shape:
        # MindSpore's special case: trailing dims of 1 dropped, like (12, 2048, 1, 1) -> (12, 2048).
        extra = new_shape[len(shape):]
        if len(new_shape) > len(shape) and new_shape[:len(shape)] == shape and all(d == 1 for d in extra):
            array = array.reshape(shape)
        else:
            raise _LoadParamError(f"For 'load_param_into_net', the parameter {name!r} in the argument 'net' has "
                                  f"shape {shape}, but the value in the argument 'parameter_dict' has shape "
                                  f"{new_shape}; they must be the same.")
    target = mstype.to_numpy(param.dtype)
    if array.dtype != target:
        pair = {array.dtype.name, target.name}
        if strict_load or not (pair <= _FLOAT_NAMES or pair <= _INT_NAMES):
            raise _LoadParamError(f"For 'load_param_into_net', the parameter {name!r} in the argument 'net' has "
                                  f"dtype {target.name}, but the value in the argument 'parameter_dict' has dtype "
                                  f"{array.dtype.name}" + ("; strict_load=True forbids conversion." if strict_load
                                                           else "; only float<->float and int<->int convert."))
        logger.warning("load_param_into_net: converting %s from %s to %s.", name, array.dtype.name, target.name)
        array = array.astype(target)
    param.set_data(tensor_cls(array))


def _load_with_prefix(net_params: List[Tuple[str, Any]], parameter_dict: Dict[str, Any], param_not_load: List[str],
                      ckpt_not_load: List[str], strict_load: bool) -> None:
    """MindSpore's fallback: find a prefix p with p + net_name in the checkpoint and load those parameters."""
    while param_not_load:
        prefix = None
        for net_name in param_not_load:
            prefix = next((key[:-len(net_name)] for key in parameter_dict
                           if key != net_name and key.endswith(net_name)), None)
            if prefix is not None:
                break
        if prefix is None:
            return
        loaded = False
        for net_name, param in net_params:
            key = prefix + net_name
            if net_name in param_not_load and key in parameter_dict and not isinstance(parameter_dict[key], str):
                _update_param(net_name, param, parameter_dict[key], strict_load)
                param_not_load.remove(net_name)
                if key in ckpt_not_load:
                    ckpt_not_load.remove(key)
                loaded = True
        if not loaded:
            return
        logger.warning("load_param_into_net: removed the checkpoint name prefix %r to load parameters.", prefix)


def load_param_into_net(net: Any, parameter_dict: Dict[str, Any],
                        strict_load: bool = False) -> Tuple[List[str], List[str]]:
    """
    Load parameters into a network.

    Each parameter of `net` (named as ``net.parameters_and_names()`` yields, or by its own ``name``) takes the
    value of the same key in `parameter_dict`. When `strict_load` is False, float values convert to the
    parameter's float dtype (and int to int), and parameters still missing are looked up under a common name
    prefix of the checkpoint (MindSpore's rule, for checkpoints saved from a wrapping Cell).

    Args:
        net (Cell): The network.
        parameter_dict (dict): name -> Parameter/Tensor/numpy array, as :func:`load_checkpoint` returns.
        strict_load (bool): Exact names and dtypes only. Default: ``False``.

    Returns:
        - param_not_load (list[str]), names of the network parameters that were not loaded.
        - ckpt_not_load (list[str]), keys of `parameter_dict` that were not used.

    Raises:
        TypeError: If `net` is not a Cell, `parameter_dict` is not a dict of such values, or `strict_load` is
            not bool.
        ValueError: If a value's shape differs from its parameter's, or its dtype cannot be converted (the error
            is also a RuntimeError, which MindSpore raises).
    """
    if not _is_cell(net):
        raise TypeError(f"For 'load_param_into_net', the argument 'net' should be a Cell, but got "
                        f"{type(net).__name__}.")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"For 'load_param_into_net', the argument 'parameter_dict' should be a dict, but got "
                        f"{type(parameter_dict).__name__}.")
    tensor_cls, _ = _tensor_types()
    for key, value in parameter_dict.items():
        if not isinstance(key, str) or not isinstance(value, (tensor_cls, np.ndarray, str)):
            raise TypeError("For 'load_param_into_net', the elements of 'parameter_dict' should be str -> "
                            f"Parameter, but got {type(key).__name__} -> {type(value).__name__}.")
    _check_bool(strict_load, "strict_load", "load_param_into_net")
    net_params = _net_parameters(net)
    param_not_load: List[str] = []
    ckpt_not_load = [key for key in parameter_dict if key != "random_op"]
    for name, param in net_params:
        own_name = getattr(param, "name", None)
        key = name if name in parameter_dict else own_name if own_name in parameter_dict else None
        if key is None:
            param_not_load.append(name)
            continue
        if isinstance(parameter_dict[key], str):
            continue
        _update_param(name, param, parameter_dict[key], strict_load)
        if key in ckpt_not_load:
            ckpt_not_load.remove(key)
    if param_not_load and not strict_load:
        _load_with_prefix(net_params, parameter_dict, param_not_load, ckpt_not_load, strict_load)
    if param_not_load:
        logger.warning("load_param_into_net: %d parameters of the net are not loaded: %s",
                       len(param_not_load), param_not_load)
    return param_not_load, ckpt_not_load
