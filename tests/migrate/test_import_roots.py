"""``_neighbour_base._import_roots``: the names an import may bind, read from the text, must
hold every name any import binds (``names_of`` answers empty, without scopes, for the others)."""

import ast

import pytest

from migrate.rules._neighbour_base import _import_roots

TEXTS = [
    "import a.b as c, d.e\nx = 1\n",
    "from x import (y,  # a comment that closes) early\n    w as v)\n",
    "from q import \\\r\n    r\r\nimport s\r\n",
    "def f():\n    import torch.cuda.amp\n    from apex import parallel as par; z = 1\n",
    "try:\n    from apex.parallel import DistributedDataParallel as DDP\nexcept ImportError:\n    DDP = None\n",
    '"""A docstring that says import (and opens a bracket."""\nfrom m import n\n',
    "from . import(sibling)\nfrom .pkg import a as b, c\n",
]


def _bound_roots(text: str) -> set:
    """What the stdlib parser says the imports bind (first names)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found.add((alias.asname or alias.name).split(".")[0])
    return found


@pytest.mark.parametrize("text", TEXTS)
def test_import_roots_hold_every_bound_name(text: str) -> None:
    assert _bound_roots(text) <= _import_roots(text)


def test_import_roots_leave_other_names_out() -> None:
    roots = _import_roots("import torch\n\nmodel = build()\nloss = model(x)\n")
    assert "torch" in roots and not {"model", "build", "loss", "x"} & roots
