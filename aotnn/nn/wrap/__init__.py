"""Wrapper cells: losses, gradients and training steps."""
from .cell_wrapper import *  # noqa: F401,F403
from .cell_wrapper import __all__
