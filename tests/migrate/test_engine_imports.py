"""The engine skips LibCST's AddImportsVisitor only when it would change nothing."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from migrate.import_edits import imports_present as _imports_present


def _check(source: str, *imports: tuple) -> bool:
    context = CodemodContext()
    for module, obj in imports:
        AddImportsVisitor.add_needed_import(context, module, obj)
    tree = cst.parse_module(source)
    present = _imports_present(context, tree)
    if present:  # the visitor itself agrees: nothing to add
        assert AddImportsVisitor(context).transform_module(tree).code == source
    return present


@pytest.mark.parametrize(
    "source, imports, expected",
    [
        ("import os\nimport torch\n", [("torch", None)], True),
        ("import os, torch.nn\nimport torch\n", [("torch", None), ("torch", None)], True),
        ("import torch as th\n", [("torch", None)], False),
        ("from torch import nn\n", [("torch", None)], False),
        ("def f():\n    import torch\n", [("torch", None)], False),
        ("try:\n    import torch\nexcept ImportError:\n    pass\n", [("torch", None)], False),
        ("import torch\n", [("torch", None), ("functools", None)], False),
        ("import torch\n", [("torch", "nn")], False),
    ],
)
def test_imports_present(source, imports, expected):
    assert _check(source, *imports) is expected
