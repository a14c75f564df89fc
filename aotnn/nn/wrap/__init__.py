"""Wrapper cells: losses, gradients, training steps and loss scaling."""
from .cell_wrapper import *  # noqa: F401,F403
from .cell_wrapper import __all__ as _cell_wrapper_all
from .loss_scale import *  # noqa: F401,F403
from .loss_scale import __all__ as _loss_scale_all
from .jvp_vjp import *  # noqa: F401,F403
from .jvp_vjp import __all__ as _jvp_vjp_all
from .misc import *  # noqa: F401,F403
from .misc import __all__ as _misc_all

__all__ = _cell_wrapper_all + _loss_scale_all + _jvp_vjp_all + _misc_all
