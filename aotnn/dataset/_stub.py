"""Dataset names aotnn accepts but does not implement: importable, raising NotImplementedError when used."""
from __future__ import annotations


def unimplemented(name: str, module: str, hint: str = "") -> type:
    """A class ``name`` whose construction raises NotImplementedError naming the MindSpore API."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"{module}.{name} is not implemented by aotnn's dataset package (pure "
                                  f"Python + numpy){'; ' + hint if hint else ''}")

    return type(name, (), {"__init__": __init__, "__module__": module,
                           "__doc__": f"Not implemented: ``{module}.{name}`` raises NotImplementedError."})
