"""``aotnn.ops``: MindSpore's functional ops and primitive classes."""
from . import functional, primitives
from . import primitives as operations
from .functional import *  # noqa: F401,F403
from .primitives import *  # noqa: F401,F403
from .primitives import Primitive, PrimitiveWithInfer
