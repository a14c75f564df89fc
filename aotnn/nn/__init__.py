"""``aotnn.nn``: Cell, containers and layers."""
from ..common.buffer import Buffer
from .cell import Cell
from .container import CellList, SequentialCell
from .layer import *  # noqa: F401,F403
from .wrap import *  # noqa: F401,F403
