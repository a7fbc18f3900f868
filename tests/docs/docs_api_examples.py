"""The code examples inside the docstrings that the API reference (docs/shim/api.md) renders.

``documented_objects()`` reads the autodoc directives of the page; ``literal_blocks(doc)``
returns the ``::`` literal blocks of a docstring that are Python (they compile); a block whose
first line is ``# not-run: <reason>`` is reported as such.  Run as a script
(``python docs_api_examples.py DOTTED.NAME``) it executes that object's examples in order in
one namespace and exits non-zero on the first failure.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path
from typing import List, Tuple

REPO_ROOT = Path(__file__).resolve().parents[2]
API_PAGE = REPO_ROOT / "docs" / "shim" / "api.md"
DIRECTIVE = re.compile(r"^\.\. auto(function|class|exception|module):: (\S+)\s*$")


def _resolve(dotted: str):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def documented_objects() -> List[str]:
    """Dotted names of every object whose docstring the API page renders."""
    names: List[str] = []
    lines = API_PAGE.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        match = DIRECTIVE.match(line.strip())
        if not match:
            continue
        kind, name = match.groups()
        names.append(name)
        options = []
        for following in lines[i + 1:]:
            if not following.strip().startswith(":"):
                break
            options.append(following.strip())
        members = next((o.split(":", 2)[2].strip() for o in options if o.startswith(":members:")), None)
        if members is None:
            continue
        if members:
            names += [f"{name}.{m.strip()}" for m in members.split(",")]
        elif kind == "module":
            module = _resolve(name)
            public = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
            names += [f"{name}.{n}" for n in public if callable(getattr(module, n, None))]
    return names


def literal_blocks(doc: str) -> List[Tuple[str, bool]]:
    """``(code, is_python)`` for each ``::`` literal block of a docstring."""
    doc = inspect.cleandoc(doc or "")
    lines = doc.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip().endswith("::"):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            body = []
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
                body.append(lines[j])
                j += 1
            code = textwrap.dedent("\n".join(body)).strip("\n")
            if code:
                try:
                    compile(code, "<docstring>", "exec")
                    blocks.append((code, True))
                except SyntaxError:
                    blocks.append((code, False))
            i = j
        else:
            i += 1
    return blocks


def main(name: str) -> int:
    namespace: dict = {"__name__": "__main__"}
    for code, is_python in literal_blocks(_resolve(name).__doc__):
        first = code.splitlines()[0].strip()
        if not is_python or first.startswith("# not-run:"):
            continue
        exec(compile(code, f"<docstring of {name}>", "exec"), namespace)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
