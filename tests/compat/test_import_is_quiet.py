"""``from apexcompat import amp`` prints nothing, not even a warning shown only with
``-W default``.

The case that matters is a fresh environment without numpy: there ``import torch`` itself
(torch 2.13, in ``torch/_subclasses/functional_tensor.py``) warns ``Failed to initialize
NumPy: No module named 'numpy'``, whatever imports it; apexcompat never touches numpy.  torch
does not depend on numpy, so apexcompat does (pyproject.toml), which the second test pins.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_import_prints_no_warning():
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, "-W", "default", "-c", "from apexcompat import amp"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == "", proc.stderr


def test_numpy_is_a_runtime_dependency():
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    dependencies = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.M | re.S).group(1)
    assert re.search(r'^\s*"numpy[">=<]', dependencies, re.M), "without numpy, `import torch` warns"
