"""``aotnn.nn``: Cell, containers and layers."""
from .cell import Buffer, Cell
from .container import CellList, SequentialCell
from .layer import *  # noqa: F401,F403
