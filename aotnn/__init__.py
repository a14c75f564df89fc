"""aotnn: MindSpore's nn.Cell API, compiled ahead of time with Apache TVM.

    import aotnn as ms
    from aotnn import nn, ops, Tensor, Parameter
"""
from . import common, context, ops
from .common import dtype
from .common.dtype import (bool_, double, float16, float32, float64, half, int8, int16, int32, int64, single,
                           uint8, uint16, uint32, uint64)
from .common.initializer import initializer
from .common.parameter import Parameter, ParameterTuple
from .common.seed import get_seed, set_seed
from .common.row_tensor import RowTensor
from .common.sparse_tensor import COOTensor, CSRTensor
from .common.tensor import Tensor, tensor
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context
from .context import (ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,  # noqa: E402
                      set_auto_parallel_context)
from . import nn  # noqa: E402  (nn needs ops)
from . import layers, models  # noqa: E402
from .jit.export import export  # noqa: E402
from .jit.load import load  # noqa: E402
from .onnx import load_onnx  # noqa: E402
from .train.model import Model  # noqa: E402
from .train.loss_scale_manager import (DynamicLossScaleManager, FixedLossScaleManager,  # noqa: E402
                                      LossScaleManager)
from . import amp  # noqa: E402
from . import numpy  # noqa: E402  (MindSpore's mindspore.numpy)
from .ops.grad_ops import grad, value_and_grad  # noqa: E402
from .train.serialization import load_checkpoint, load_param_into_net, save_checkpoint  # noqa: E402
from .train import (Callback, CheckpointConfig, LossMonitor, ModelCheckpoint, RunContext,  # noqa: E402
                    SummaryRecord, TimeMonitor)
from . import dataset  # noqa: E402

mstype = dtype
__version__ = "0.1.0"

__all__ = ["Tensor", "tensor", "COOTensor", "CSRTensor", "RowTensor", "numpy", "Parameter", "ParameterTuple", "nn", "ops", "layers", "models", "dtype",
           "mstype", "initializer", "set_seed", "get_seed", "set_context", "get_context", "context",
           "GRAPH_MODE", "PYNATIVE_MODE", "ParallelMode", "set_auto_parallel_context", "get_auto_parallel_context",
           "reset_auto_parallel_context", "export", "load", "load_onnx", "Model", "amp", "LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager", "grad", "value_and_grad", "save_checkpoint", "load_checkpoint", "load_param_into_net", "Callback", "CheckpointConfig", "LossMonitor", "ModelCheckpoint", "RunContext", "SummaryRecord", "TimeMonitor", "dataset",
           "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "bool_", "half", "single", "double"]
