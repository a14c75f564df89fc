"""TinyMS's ``layers`` names for aotnn's nn: Layer, SequentialLayer, LayerList and the layers."""
from ..nn import *  # noqa: F401,F403
from ..nn import Cell as Layer
from ..nn import CellList as LayerList
from ..nn import SequentialCell as SequentialLayer
