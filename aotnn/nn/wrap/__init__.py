"""Wrapper cells: losses, gradients, training steps and loss scaling."""
from .cell_wrapper import *  # noqa: F401,F403
from .cell_wrapper import __all__ as _cell_wrapper_all
from .loss_scale import *  # noqa: F401,F403
from .loss_scale import __all__ as _loss_scale_all
from .jvp_vjp import *  # noqa: F401,F403
from .jvp_vjp import __all__ as _jvp_vjp_all
from .misc import *  # noqa: F401,F403
from .misc import __all__ as _misc_all
from .grad_reducer import *  # noqa: F401,F403
from .grad_reducer import __all__ as _grad_reducer_all
from .parallel_cells import *  # noqa: F401,F403
from .parallel_cells import __all__ as _parallel_cells_all
from .adasum import *  # noqa: F401,F403
from .adasum import __all__ as _adasum_all

__all__ = (_cell_wrapper_all + _loss_scale_all + _jvp_vjp_all + _misc_all + _grad_reducer_all + _parallel_cells_all
           + _adasum_all)
