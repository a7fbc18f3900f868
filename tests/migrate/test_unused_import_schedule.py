"""rules._unused_import_schedule schedules what LibCST's remove_unused_import_by_node does."""

from __future__ import annotations

from typing import List

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor
from libcst.metadata import MetadataWrapper, ScopeProvider

from migrate.rules._tree import walk
from migrate.rules._unused_import_schedule import schedule_unused_imports_of

SOURCE = '''
import apex
import apex.parallel as par
from apex.parallel import DistributedDataParallel as DDP, SyncBatchNorm
from apex import amp, optimizers
from . import local_thing
import torch

def build(model, local_rank):
    from apex.optimizers import FusedAdam
    model = DDP(model, delay_allreduce=True)
    opt = FusedAdam(model.parameters())
    norm = apex.parallel.SyncBatchNorm(3) if par else SyncBatchNorm(3)
    return amp.initialize(model, opt), optimizers.FusedLAMB, local_thing, torch.cuda
'''


def _scheduled(schedule, node: cst.CSTNode, wrapper: MetadataWrapper) -> List[tuple]:
    context = CodemodContext(wrapper=wrapper, full_package_name="pkg.mod")
    schedule(context, node)
    return list(context.scratch.get(RemoveImportsVisitor.CONTEXT_KEY, []))


@pytest.mark.parametrize("kind", [cst.Call, cst.Attribute, cst.Name, cst.Import, cst.ImportFrom, cst.Return])
def test_same_removals_in_the_same_order_as_libcst(kind: type) -> None:
    wrapper = MetadataWrapper(cst.parse_module(SOURCE), unsafe_skip_copy=True)
    wrapper.resolve(ScopeProvider)
    nodes = [n for n in walk(wrapper.module) if type(n) is kind]
    assert nodes
    scheduled_any = False
    for node in nodes:
        if kind is cst.ImportFrom and node.relative:
            continue  # LibCST needs a package to resolve these; the rules never forget them
        theirs = _scheduled(RemoveImportsVisitor.remove_unused_import_by_node, node, wrapper)
        assert _scheduled(schedule_unused_imports_of, node, wrapper) == theirs
        scheduled_any = scheduled_any or bool(theirs)
    assert scheduled_any
