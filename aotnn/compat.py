"""Run unmodified MindSpore / TinyMS scripts on aotnn: ``import mindspore`` gives aotnn.

    from aotnn.compat import install_mindspore_aliases
    install_mindspore_aliases()
    import mindspore.nn as nn          # aotnn.nn
    from mindspore.ops import operations as P   # aotnn's primitives

``mindspore.X.Y`` resolves to ``aotnn.X.Y`` wherever aotnn has that module; a few MindSpore paths
that aotnn names differently are mapped explicitly. TinyMS's ``tinyms``, ``tinyms.layers``,
``tinyms.primitives`` and ``tinyms.optimizers`` resolve to aotnn's TinyMS names. A name aotnn
lacks stays an ordinary ImportError.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

__all__ = ['install_mindspore_aliases', 'uninstall_mindspore_aliases']

# alias -> aotnn module, where the path differs
_EXPLICIT = {
    "mindspore": "aotnn",
    "mindspore.ops.operations": "aotnn.ops.primitives",
    "mindspore.ops.composite": "aotnn.ops",
    "mindspore.nn.optim": "aotnn.nn.optim",
    "tinyms.layers": "aotnn.layers",
    "tinyms.primitives": "aotnn.ops",
    "tinyms.optimizers": "aotnn.optimizers",
}
_PREFIXES = (("mindspore.", "aotnn."),)


def _target(name: str) -> str | None:
    if name in _EXPLICIT:
        return _EXPLICIT[name]
    for alias, real in _PREFIXES:
        if name.startswith(alias):
            return real + name[len(alias):]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType):
        self.module = module
        self.original_spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import system stamps the alias spec on the module: give the real module its own back
        module.__spec__ = self.original_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``mindspore.*`` (and ``tinyms.*``) imports not registered yet to aotnn modules."""

    def find_spec(self, fullname, path=None, target=None):
        real = _target(fullname)
        if real is None:
            return None
        try:
            module = importlib.import_module(real)
        except ImportError:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module))


_FINDER = _AliasFinder()
_INSTALLED: list[str] = []


def _tinyms_module() -> types.ModuleType:
    """``tinyms``: aotnn's top level, falling back to aotnn.ops for TinyMS's ``ts.ones`` and friends."""
    import aotnn
    from aotnn import layers, ops, optimizers

    module = types.ModuleType("tinyms", "TinyMS names served by aotnn.")
    module.__dict__.update({k: v for k, v in vars(aotnn).items() if not k.startswith("__")})
    module.layers, module.primitives, module.optimizers = layers, ops, optimizers

    def __getattr__(name: str):
        try:
            return getattr(ops, name)
        except AttributeError:
            raise AttributeError(f"module 'tinyms' has no attribute {name!r}") from None

    module.__getattr__ = __getattr__
    return module


def install_mindspore_aliases(force: bool = False) -> None:
    """Make ``import mindspore`` / ``import tinyms`` (and their submodules) load aotnn.

    Args:
        force (bool): replace a real ``mindspore`` or ``tinyms`` module that is already imported.
            Default: False.
    Raises:
        RuntimeError: a real mindspore/tinyms is already imported and ``force`` is False.
    """
    import aotnn  # noqa: F401  (loads the package and its submodules)

    for root in ("mindspore", "tinyms"):
        present = sys.modules.get(root)
        if present is not None and root not in _INSTALLED and not force:
            raise RuntimeError(f"install_mindspore_aliases: a real {root!r} module is already imported; "
                               f"pass force=True to replace it")
    aliases: dict[str, types.ModuleType] = {}
    for name, module in list(sys.modules.items()):
        if name == "aotnn" or name.startswith("aotnn."):
            aliases["mindspore" + name[len("aotnn"):]] = module
    for alias, real in _EXPLICIT.items():
        aliases[alias] = importlib.import_module(real)
    aliases["tinyms"] = _tinyms_module()
    for alias, module in aliases.items():
        sys.modules[alias] = module
        if alias not in _INSTALLED:
            _INSTALLED.append(alias)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall_mindspore_aliases() -> None:
    """Remove every ``mindspore*`` / ``tinyms*`` alias that :func:`install_mindspore_aliases` added."""
    for name in list(sys.modules):
        if name in ("mindspore", "tinyms") or name.startswith(("mindspore.", "tinyms.")):
            if name in _INSTALLED or _target(name) is not None:
                sys.modules.pop(name, None)
    _INSTALLED.clear()
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
