"""Which files take a module-level apex.amp name from the file that imports it
(``amp_reexports``, APX270): by name, as the module's attribute, or through a star import
of it, and which do not, as the command reports them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict

from helpers_driver import run_cli

HOME = "try:\n    from apex import amp\nexcept ImportError:\n    amp = None\n"
CALL = "\n\ndef go(loss, opt):\n    with {}.scale_loss(loss, opt) as s:\n        s.backward()\n"


def takers(root: Path, files: Dict[str, str]) -> Dict[str, str]:
    """Home file -> the files APX270 says take its apex.amp name."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    result = run_cli(["--check", "--output-format", "json", "--allow-no-vcs", "."], root, rules=None)
    found = {}
    for finding in json.loads(result.stdout)["findings"]:
        if finding["code"] == "APX270":
            found[finding["path"]] = re.search(r"repository \(([^)]*)\)", finding["message"])[1]
    return found


def test_each_way_of_taking_the_name_is_found(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/utils.py": HOME,
        "pkg/other_home.py": HOME,
        "pkg/by_name.py": "from .utils import amp" + CALL.format("amp"),
        "pkg/as_attribute.py": "from . import utils" + CALL.format("utils.amp"),
        "pkg/starred.py": "from .utils import *" + CALL.format("amp"),
        "pkg/unrelated.py": "import json" + CALL.format("json"),
        "pkg/from_other.py": "from .other_home import amp" + CALL.format("amp"),
    }
    assert takers(tmp_path, files) == {
        "pkg/utils.py": "pkg/as_attribute.py, pkg/by_name.py, pkg/starred.py",
        "pkg/other_home.py": "pkg/from_other.py",
    }


def test_files_of_many_homes_are_each_matched_to_their_own(tmp_path):
    # each module a home, and a taker of the one before it: each taker is listed for its
    # own home only
    count = 12
    files = {"pkg/__init__.py": ""}
    for index in range(count):
        taker = f"from .m{index - 1} import amp as earlier\n" if index else ""
        files[f"pkg/m{index}.py"] = taker + HOME + ("\n\ndef use():\n    return earlier\n" if index else "")
    assert takers(tmp_path, files) == {f"pkg/m{index}.py": f"pkg/m{index + 1}.py" for index in range(count - 1)}
