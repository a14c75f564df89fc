"""Import a script from tools/ (not a package) as a module for the duration of a test module."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def loaded_script(name: str) -> Iterator[ModuleType]:
    """Yield ``tools/<name>.py`` as module ``name``; a generator for a pytest fixture."""
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)
