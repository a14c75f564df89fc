"""``aotnn.nn``: Cell, containers and layers."""
from ..common.buffer import Buffer
from .cell import Cell
from .container import CellList, SequentialCell
from .graph_cell import GraphCell
from .layer import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .learning_rate_schedule import *  # noqa: F401,F403
from .dynamic_lr import *  # noqa: F401,F403
from .metrics import *  # noqa: F401,F403
from .optim import *  # noqa: F401,F403
from .wrap import *  # noqa: F401,F403
