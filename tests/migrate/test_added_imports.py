"""migrate.added_imports makes the edits LibCST's AddImportsVisitor makes, to the byte,
without visiting the tree, and keeps every statement it does not edit."""

from __future__ import annotations

import itertools

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from migrate.added_imports import add_imports

MODULES = [
    "",
    "x = 1\n",
    '"""Doc."""\nimport os\n\nx = 1\n',
    '"""Doc."""\n\nx = 1\n',
    "__strict__ = True\nimport os\nx = 1\n",
    "__strict__ = True\nx = 1\n",
    "# comment\nimport os\nimport sys\n# above x\nx = 1\n",
    "import os\nimport sys\n\n\ndef f():\n    import torch\n    return torch.zeros(1)\n",
    "import os, sys\nfrom torch import nn\nx = 1\n",
    "from torch import nn\nfrom torch import optim as o\nimport torch as t\nx = nn\n",
    "from torch import *\nx = 1\n",
    "from torch import (\n    nn,  # layers\n    optim,\n)\nx = 1\n",
    "from . import sibling\nfrom .pkg import thing\nx = 1\n",
    "from __future__ import annotations\nimport os\nx = 1\n",
    "import os\nx = 1\nimport torch\nfrom torch import nn\n",
    "import os; import sys\nx = 1\n",
    "if True:\n    import torch\nimport os\n",
    "import torch\nfrom torch.nn import functional as F\n\nclass A:\n    pass\n",
    "x = 1  # first\n",
    "import os\n",
]

WANTED = [
    [("torch", None, None)],
    [("functools", None, None), ("torch", None, None)],
    [("torch", "nn", None)],
    [("torch", "autocast", None), ("torch", "nn", None), ("torch", "amp", None)],
    [("torch", "optim", "o")],
    [("torch", None, "t")],
    [("torch.nn.parallel", "DistributedDataParallel", "DDP"), ("torch.nn.parallel", "DataParallel", None)],
    [("apexcompat", "amp", None), ("os", None, None)],
    [("__future__", "annotations", None), ("math", None, None)],
    [("torch.nn", "functional", "F"), ("torch.nn", "LayerNorm", None)],
    [("os", None, None), ("sys", None, None)],
    [("torch", "nn", None), ("torch", "nn", None)],
]


def _context(wanted) -> CodemodContext:
    context = CodemodContext()
    for module, obj, alias in wanted:
        AddImportsVisitor.add_needed_import(context, module, obj, alias)
    return context


@pytest.mark.parametrize("source, wanted", list(itertools.product(MODULES, WANTED)))
def test_same_text_as_libcsts_visitor(source: str, wanted: list) -> None:
    tree = cst.parse_module(source)
    expected = AddImportsVisitor(_context(wanted)).transform_module(tree).code
    ours = add_imports(_context(wanted), tree)
    assert ours is not None
    assert ours.code == expected


def test_statements_it_does_not_edit_are_kept() -> None:
    tree = cst.parse_module("import os\nfrom torch import nn\n\n\ndef train():\n    pass\n\n\nx = 1\n")
    ours = add_imports(_context([("torch", "optim", None), ("math", None, None)]), tree)
    assert ours is not None
    assert ours.body[0] is tree.body[0]
    assert ours.body[1] is not tree.body[1]  # the merged from-import
    assert ours.body[-1] is tree.body[-1]
    assert ours.code.startswith("import os\nfrom torch import optim, nn\nimport math\n")


def test_nothing_wanted_or_all_present_gives_the_same_tree() -> None:
    tree = cst.parse_module("import torch\nx = 1\n")
    assert add_imports(_context([]), tree) is tree
    assert add_imports(_context([("torch", None, None)]), tree) is tree


@pytest.mark.parametrize("wanted", [[("sibling", None, None, 1)], [("__future__", None, None, 0)]])
def test_left_to_libcst_for_relative_or_future_modules(wanted: list) -> None:
    context = CodemodContext()
    context.scratch[AddImportsVisitor.CONTEXT_KEY] = [
        __import__("libcst.codemod.visitors", fromlist=["ImportItem"]).ImportItem(*w) for w in wanted
    ]
    assert add_imports(context, cst.parse_module("x = 1\n")) is None


def test_a_dotted_import_of_the_top_block_already_binds_its_root() -> None:
    """``import torch.utils.data`` binds ``torch``: a wanted ``import torch`` adds nothing
    (LibCST's visitor would write it all the same), a wanted submodule still comes."""
    tree = cst.parse_module("import torch.utils.data\nfrom torch import nn\n\nx = torch.zeros(1)\n")
    ours = add_imports(_context([("torch", None, None)]), tree)
    assert ours is not None and ours.code == tree.code
    ours = add_imports(_context([("torch.distributed", None, None)]), tree)
    assert ours is not None and "import torch.distributed\n" in ours.code
