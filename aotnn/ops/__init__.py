"""``aotnn.ops``: MindSpore's functional ops and primitive classes.

Functions live in ``functional.py`` and in one ``*_ops.py`` module per op family; primitive
classes in ``primitives.py`` and ``*_primitives.py``. Every public name of those modules is
re-exported here.
"""
import importlib as _importlib
import pkgutil as _pkgutil

from . import functional, primitives
from . import primitives as operations
from . import functional as function  # MindSpore 2.x's ops.function namespace
from .functional import *  # noqa: F401,F403
from .primitives import *  # noqa: F401,F403
from .primitives import Primitive, PrimitiveWithInfer

for _module in _pkgutil.iter_modules(__path__):
    if _module.name.endswith("_ops") or _module.name.endswith("_primitives"):
        _loaded = _importlib.import_module(f"{__name__}.{_module.name}")
        for _name in getattr(_loaded, "__all__", [n for n in dir(_loaded) if not n.startswith("_")]):
            globals()[_name] = getattr(_loaded, _name)
            if _module.name.endswith("_primitives"):
                setattr(operations, _name, getattr(_loaded, _name))
