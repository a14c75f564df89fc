"""The README's quick start runs as pasted."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_quick_start_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    (tmp_path / "quick_start.py").write_text(code)
    done = subprocess.run([sys.executable, "quick_start.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "['fc.weight', 'fc.bias']" in done.stdout
    assert (tmp_path / "net.ckpt").is_file() and (tmp_path / "net.aot" / "manifest.json").is_file()
