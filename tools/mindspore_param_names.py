"""Record MindSpore's parameter names for tests/nn/naming_scenarios.py (run with a MindSpore 2.x python).

    python tools/mindspore_param_names.py   # writes tests/nn/fixtures/mindspore_param_names.json

Each scenario network is built on MindSpore and its ``(key, Parameter.name)`` pairs are saved;
tests/nn/test_param_names.py checks that aotnn names the same networks identically.
"""
from __future__ import annotations

import os
import sys

from fixture_files import save_json  # tools/ is on sys.path when a tool runs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "nn", "fixtures", "mindspore_param_names.json")


def main() -> None:
    sys.path.insert(0, os.path.join(ROOT, "tests", "nn"))
    import mindspore
    import naming_scenarios

    record = {"mindspore": mindspore.__version__, "scenarios": {}}
    for name, build in naming_scenarios.scenarios().items():
        record["scenarios"][name] = naming_scenarios.names_of(build())
    save_json(OUT, record)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
