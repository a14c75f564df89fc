"""TinyMS's ``tinyms.optimizers`` names: the optimizers of :mod:`aotnn.nn.optim`."""
from .nn.optim import *  # noqa: F401,F403
from .nn.optim import __all__  # noqa: F401
