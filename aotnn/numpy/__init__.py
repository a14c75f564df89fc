"""``aotnn.numpy``: MindSpore's ``mindspore.numpy``, the numpy-style functions model code uses.

Creation functions make plain data (values known ahead of time); every other function dispatches to
``aotnn.ops``, so on concrete tensors it runs eagerly through the compiled path and inside ``construct`` it is
captured into the graph. Python ints default to int32 and floats to float32, as in MindSpore.
"""
import math as _math

from ..common.dtype import (bool_, float16, float32, float64, int8, int16, int32, int64, uint8, uint16,  # noqa: F401
                            uint32, uint64)
from . import array_creations, array_ops, extra_ops, logic_ops, math_ops
from .array_creations import *  # noqa: F401,F403
from .array_ops import *  # noqa: F401,F403
from .extra_ops import *  # noqa: F401,F403
from .logic_ops import *  # noqa: F401,F403
from .math_ops import *  # noqa: F401,F403

float_ = float32
int_ = int32
inf = _math.inf
PINF = _math.inf
NINF = -_math.inf
nan = _math.nan
pi = _math.pi
e = _math.e

__all__ = (array_creations.__all__ + array_ops.__all__ + extra_ops.__all__ + logic_ops.__all__ + math_ops.__all__
           + ['bool_', 'float16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
              'uint32', 'uint64', 'float_', 'int_', 'inf', 'PINF', 'NINF', 'nan', 'pi', 'e'])
