"""migrate.import_edits removes scheduled imports without scope analysis only when LibCST's
own RemoveImportsVisitor would remove them too, with the same text."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

import run_modes

from migrate.import_edits import (
    _KnownUnusedLineEdits,
    _KnownUnusedRemoval,
    certainly_unused_aliases,
    certainly_used_roots,
    remove_imports_without_scopes,
)

within_a_run = run_modes.within_a_run  # the fixture, both ways


def _context(*scheduled: tuple) -> CodemodContext:
    context = CodemodContext()
    for module, obj, alias in scheduled:
        RemoveImportsVisitor.remove_unused_import(context, module, obj, alias)
    return context


def _libcst(source: str, scheduled: tuple) -> str:
    return RemoveImportsVisitor(_context(*scheduled)).transform_module(cst.parse_module(source)).code


DDP = ("apex.parallel", "DistributedDataParallel", "DDP")
AMP = ("apex", "amp", None)
FUSED = ("apex.optimizers", "FusedAdam", None)

UNUSED = [
    ("from apex.parallel import DistributedDataParallel as DDP\nimport torch\nm = torch.nn.parallel.DistributedDataParallel(m)\n", (DDP,)),
    ("from apex.parallel import (\n    DistributedDataParallel as DDP,  # wrap\n    SyncBatchNorm,\n)\nSyncBatchNorm(3)\n", (DDP,)),
    ("from apex.parallel import SyncBatchNorm, DistributedDataParallel as DDP\nSyncBatchNorm(3)\n", (DDP,)),
    ("from apex import amp\nscaler = torch.amp.GradScaler('cuda')\nf(amp=True)\nsave({'amp': 1})\n", (AMP,)),
    ("import os\nfrom apex import amp\nfrom apex.optimizers import FusedAdam\n\n\ndef f():\n    from apex import amp\n", (AMP, FUSED)),
    ("import apex.amp\nx = 1\n", (("apex.amp", None, None),)),
    ("# apex mixed precision\nfrom apex import amp  # apex\n\nx = 1\n", (AMP,)),  # its apex comments go with it
    ("import os; from apex import amp\nx = os\n", (AMP,)),  # not alone on its line: full visit
    ("if True:\n    from apex import amp\nx = 1\n", (AMP,)),  # nested: full visit
    ("from apex.optimizers import FusedAdam as Adam\nx: 'int' = 1\n", (("apex.optimizers", "FusedAdam", "Adam"),)),
]

STILL_UNDECIDED = [
    ("from apex import amp\n__all__ = ['amp']\n", (AMP,)),  # exported
    ("from apex import amp\ndef f(x: 'amp.Thing'): pass\n", (AMP,)),  # string annotation
    ("from apex import amp\nT = typing.TypeVar('T', bound='amp')\n", (AMP,)),
    ("from apex import amp\ndef amp(): pass\n", (AMP,)),  # any other Name counts
    ("from apex import amp\ndef f(amp):\n    return amp\n", (AMP,)),  # read only where a parameter binds it
    ("from apex import amp\ndef f():\n    amp = 1\n    return amp\n", (AMP,)),
    ("from apex import amp\nclass C:\n    amp = 1\n    x = amp\n", (AMP,)),
    # LibCST tells the bindings of ``import a.b`` and ``import a.c`` apart: a read of a.c is not a use of a.b
    ("import apex.amp\nimport apex.parallel\napex.parallel.x()\n", (("apex.amp", None, None),)),
    ("import torch\ndef f():\n    import torch\n    return torch.autocast('cuda')\n", (("torch", None, None),)),
    # every read of torch goes through ``import torch.utils.data``: LibCST removes ``import torch``
    ("import torch\nimport torch.utils.data\nloader = torch.utils.data.DataLoader(x)\n", (("torch", None, None),)),
    ("import torch\nimport torch.utils.data\nloader = torch.utils.DataLoader(x)\n", (("torch", None, None),)),
]

#: a scheduled name read as a global somewhere and bound nowhere else: LibCST keeps the import
CERTAINLY_USED = [
    ("from apex import amp\nmodel = amp.initialize(model)\n", (AMP,)),
    ("import torch\n\ndef train(x):\n    with torch.autocast('cuda'):\n        return x\n", (("torch", None, None),)),
    ("import torch\n\nclass T:\n    def f(self):\n        return [torch.zeros(i) for i in range(2)]\n",
     (("torch", None, None),)),
    ("import torch\nfrom apex import amp\nscaler = torch.amp.GradScaler()\n", (("torch", None, None), AMP)),  # mixed
    # a dotted import binds torch too; a read it does not take (torch.amp, torch alone) uses both
    ("import torch\nimport torch.utils.data\nscaler = torch.amp.GradScaler()\nd = torch.utils.data.x\n",
     (("torch", None, None),)),
    ("import torch\nimport torch.utils.data.distributed\n\ndef f():\n    return g(torch)\n", (("torch", None, None),)),
]


@pytest.mark.parametrize("source, scheduled", UNUSED)
def test_same_removal_as_libcst_without_scopes(source: str, scheduled: tuple, within_a_run) -> None:
    tree = cst.parse_module(source)
    assert certainly_unused_aliases(tree, scheduled) is not None
    assert certainly_unused_aliases(tree, scheduled) is not None  # asked again: kept facts
    fast = remove_imports_without_scopes(_context(*scheduled), tree)
    assert fast is not None
    assert fast.code == _libcst(source, scheduled)
    assert fast.code != source


@pytest.mark.parametrize("source, scheduled", STILL_UNDECIDED)
def test_left_to_libcst_when_a_scheduled_name_occurs(source: str, scheduled: tuple, within_a_run) -> None:
    assert certainly_unused_aliases(cst.parse_module(source), scheduled) is None
    assert not certainly_used_roots(source, [entry[0].split(".")[0] if entry[1] is None else entry[1]
                                             for entry in scheduled])
    assert remove_imports_without_scopes(_context(*scheduled), cst.parse_module(source)) is None


@pytest.mark.parametrize("source, scheduled", CERTAINLY_USED)
def test_a_name_read_as_a_global_keeps_its_import_without_scopes(source: str, scheduled: tuple) -> None:
    fast = remove_imports_without_scopes(_context(*scheduled), cst.parse_module(source))
    assert fast is not None
    assert fast.code == _libcst(source, scheduled)


def test_comments_above_a_removed_import_stay_unless_they_name_apex() -> None:
    source = (
        "import torch\n\n# third-party\n#from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from apex.parallel import DistributedDataParallel as DDP\n# apex optimizer\n"
        "from apex.optimizers import FusedAdam\nx = 1\n"
    )
    removed = remove_imports_without_scopes(_context(DDP, FUSED), cst.parse_module(source))
    assert removed is not None
    assert removed.code == (
        "import torch\n\n# third-party\n#from torch.nn.parallel import DistributedDataParallel as DDP\nx = 1\n"
    )


def test_comments_above_a_removed_last_import_stay_in_the_footer() -> None:
    removed = remove_imports_without_scopes(_context(AMP), cst.parse_module("x = 1\n# end\nfrom apex import amp\n"))
    assert removed is not None and removed.code == "x = 1\n# end\n"


def test_line_edits_have_the_state_of_libcsts_removal_but_its_matcher_tables() -> None:
    context = CodemodContext(scratch={RemoveImportsVisitor.CONTEXT_KEY: [("apex", None, None)]})
    full, lean = _KnownUnusedRemoval(context, {}), _KnownUnusedLineEdits(context, {})
    missing = set(vars(full)) - set(vars(lean))
    assert missing == {"_extra_visit_funcs", "_extra_leave_funcs", "_MatcherDecoratableTransformer__matchers"}
    assert all(full.__dict__[name] == lean.__dict__[name] for name in vars(lean))
    assert lean.unused_module_imports == {"apex": None}
