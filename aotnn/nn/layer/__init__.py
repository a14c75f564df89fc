"""Layers, one family per module; each module's ``__all__`` is re-exported here."""
import importlib as _importlib
import pkgutil as _pkgutil

__all__ = []
for _module in _pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        _loaded = _importlib.import_module(f"{__name__}.{_module.name}")
        for _name in getattr(_loaded, "__all__", []):
            globals()[_name] = getattr(_loaded, _name)
            __all__.append(_name)
