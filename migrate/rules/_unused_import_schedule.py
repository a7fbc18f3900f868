"""``RemoveImportsVisitor.remove_unused_import_by_node`` without its visitor's set-up cost.

For a node that is not an import, LibCST schedules the imports its names come from with a
``RemovedNodeVisitor``: a matcher-aware visitor that builds LibCST's matcher-decorator
tables for every new instance by inspecting each of its attributes (40 ms, more than the
visit), and then visits the node through LibCST's traversal.  That visitor has no matcher
decorators, so its own ``visit_Name``/``visit_Attribute`` are called here on the node's
names and attributes, in the order LibCST's visit meets them: the same removals are
scheduled, in the same order.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor
from libcst.codemod.visitors._remove_imports import RemovedNodeVisitor

from ._tree import walk


class _PlainRemovedNodeVisitor(RemovedNodeVisitor):
    """LibCST's visitor, set up without matcher tables (it never visits by itself here)."""

    def __init__(self, context: CodemodContext) -> None:  # no base set-up, on purpose
        self.context = context


def schedule_unused_imports_of(context: CodemodContext, node: cst.CSTNode) -> None:
    """Schedule for removal (if unused after the rule) the imports ``node``'s names refer to,
    as ``RemoveImportsVisitor.remove_unused_import_by_node`` does."""
    if isinstance(node, (cst.Import, cst.ImportFrom)):
        RemoveImportsVisitor.remove_unused_import_by_node(context, node)
        return
    visitor = _PlainRemovedNodeVisitor(context)
    for part in walk(node):
        kind = type(part)
        if kind is cst.Name:
            visitor.visit_Name(part)  # type: ignore[arg-type]
        elif kind is cst.Attribute:
            visitor.visit_Attribute(part)  # type: ignore[arg-type]
