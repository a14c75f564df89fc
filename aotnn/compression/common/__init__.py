"""Shared definitions of the compression package: :class:`QuantDtype`."""
from .constant import QuantDtype

__all__ = ['QuantDtype']
