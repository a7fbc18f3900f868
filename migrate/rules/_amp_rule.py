"""Base class of the apex.amp rules: parent links, positions, planned statement edits and
node replacements applied on the way out of the tree, and TODO comments that are never
written twice."""

from __future__ import annotations

import threading
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import PositionProvider

from ..settings import Settings
from ._metadata import ParentProvider, QualifiedNameProvider
from ._tree import children
from ._edits import StatementEdits, block_body, code_of, read_todos, todo_lines, with_leading
from .base import Rule


_last_code = threading.local()


def _code_of_module(tree: cst.Module) -> str:
    """``tree.code``, remembered (per thread) for the last tree: rules that skip pass the same
    object on."""
    if getattr(_last_code, "tree", None) is not tree:
        _last_code.tree = tree
        _last_code.code = tree.code
    return _last_code.code


def _is_pass_only(body: Sequence[Any]) -> bool:
    return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body) for s in body)


#: TODO comments the apex.amp rules write: a text fragment -> (code, severity, fixed); used
#: to report them again on later runs (the site is no longer apex code then)
KNOWN_TODOS = {
    "this file keeps apex.amp semantics through apexcompat.amp": ("APX220", "error", False),
    "is chosen at run time; the GradScaler is dynamic": ("APX205", "error", False),
    "the GradScaler keeps this scale, but unlike apex": ("APX204", "warning", True),
    "O3 inference: the model is now float16": ("APX206", "warning", True),
    "inference without optimizers: wrap the forward pass": ("APX206", "warning", True),
    "the forward pass and loss are not next to this amp.scale_loss": ("APX210", "warning", True),
    "misses inf: GradScaler skips steps": ("APX323", "warning", False),
    "native autocast does not. Where that matters": ("APX503", "error", False),
    "apex promoted mixed fp16/fp32 inputs": ("APX505", "error", False),
}


class AmpRule(Rule):
    """A rule over apex.amp sites: plan in ``plan(module)``, the base applies the plan."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentProvider)  # type: ignore[assignment]
    #: only the imports rule also works for ``--to shim``
    NATIVE_ONLY = True
    #: text of which one must be in the file *as the earlier rules left it* for this rule to
    #: have work; checked before LibCST resolves any metadata (the expensive part)
    LIVE_TRIGGERS: Tuple[str, ...] = ()
    #: the planned edits' nodes and their ancestors, once planned (the transform descends
    #: only into these)
    _spine: Optional[Set[cst.CSTNode]] = None

    def transform_module(self, tree: cst.Module) -> cst.Module:
        if self.LIVE_TRIGGERS and not any(t in _code_of_module(tree) for t in self.LIVE_TRIGGERS):
            return tree
        return super().transform_module(tree)

    @classmethod
    def applies_to(cls, settings: Settings) -> bool:
        if cls.NATIVE_ONLY and settings.target != "native":
            return False
        return super().applies_to(settings)

    # --- helpers for subclasses -----------------------------------------------------------

    def line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def statement_of(self, node: Any) -> Any:
        cur: Any = node
        while cur is not None and not isinstance(cur, cst.BaseStatement):
            cur = self.parents.get(cur)
        return cur

    def need_torch(self) -> None:
        AddImportsVisitor.add_needed_import(self.context, "torch")

    def replace_node(self, node: Any, new: Any) -> None:
        self.node_replacements[node] = new

    def todo(self, node: cst.CSTNode, code: str, message: str, *, severity: str = "error", fixed: bool = False) -> None:
        """Report ``message`` at ``node`` and put it above node's statement as a TODO comment."""
        self.report(node, code, message, severity=severity, fixed=fixed)
        stmt = self.statement_of(node)
        if stmt is not None:
            self.todos.setdefault(stmt, []).append(message)

    def report_earlier_todos(self, module: cst.Module) -> None:
        """Report the TODO comments an earlier run wrote (and this run did not write again),
        so a second run lists the same manual work."""
        from ..findings import Finding

        fresh = {f.message for f in self.findings}
        for node in _walk_statements(module):
            for message in read_todos(getattr(node, "leading_lines", ())):
                if message in fresh:
                    continue
                for fragment, (code, severity, fixed) in KNOWN_TODOS.items():
                    if fragment in message and self.settings.code_enabled(code):
                        pos = self.get_metadata(PositionProvider, node).start
                        self.findings.append(
                            Finding(
                                self.context.filename or "<string>",
                                pos.line,
                                pos.column + 1,
                                code,
                                message,
                                fixed,
                                severity,
                            )
                        )
                        fresh.add(message)
                        break

    def plan(self, module: cst.Module) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # --- visitor plumbing -----------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        self.tree = node
        self.parents: Any = self.metadata[ParentProvider]
        self.edits = StatementEdits()
        self.node_replacements: Dict[cst.CSTNode, object] = {}
        self.todos: Dict[cst.CSTNode, List[str]] = {}
        self.plan(node)
        self._spine = self._ancestors_of(self.edited_nodes())
        return True

    def edited_nodes(self) -> Iterator[cst.CSTNode]:
        """Every node of the original tree that a planned edit is keyed by.  A subclass that
        keys edits of its own must add them here: the transform skips other subtrees."""
        edits = self.edits
        yield from self.node_replacements
        yield from self.todos
        yield from edits.replacements
        yield from edits.before
        yield from edits.after
        for members, _ in edits.groups.values():
            yield from members

    def _ancestors_of(self, nodes: Iterable[cst.CSTNode]) -> Set[cst.CSTNode]:
        spine: Set[cst.CSTNode] = set()
        for node in nodes:
            while node is not None and node not in spine:
                spine.add(node)
                node = self.parents.get(node)
        return spine

    def on_visit(self, node: cst.CSTNode) -> bool:
        # a subtree without planned edits comes out as it went in: LibCST would rebuild
        # every node of it (most of a file) only to produce the same text
        spine = self._spine
        if spine is not None and node not in spine:
            return False
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        result: Any = super().on_leave(original_node, updated_node)
        if not isinstance(result, cst.CSTNode) or not hasattr(self, "node_replacements"):
            return result
        new = self.node_replacements.get(original_node)
        if new is not None:
            result = new(result) if callable(new) else new
        todos = self.todos.get(original_node)
        if todos and hasattr(result, "leading_lines"):
            result = with_leading(result, [line for t in todos for line in todo_lines(t)])
        return result

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> Any:
        if not self.edits:
            return updated_node
        return block_body(updated_node, self.edits.apply(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.edits:
            return updated_node
        return updated_node.with_changes(body=self.edits.apply(original_node.body, updated_node.body))

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        return self._small_after(original_node, updated_node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return self._small_after(original_node, updated_node)

    def _small_after(self, original_node: Any, updated_node: Any) -> Any:
        if not self.edits.after:
            return updated_node
        body: List[Any] = []
        for orig, upd in zip(original_node.body, updated_node.body):
            body.append(upd)
            for extra in self.edits.after.get(orig, []):
                body.extend(extra.body)
        if len(body) == len(updated_node.body):
            return updated_node
        body = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body]
        return updated_node.with_changes(body=body)


def _walk_statements(node: cst.CSTNode):
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.BaseStatement):
            yield cur
        if isinstance(cur, (cst.BaseExpression,)):
            continue
        stack.extend(reversed(children(cur)))


def is_empty_shell(stmt: Any) -> bool:
    """An ``if`` without ``else`` whose body holds only ``pass`` (or such shells)."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return False
    body: Any = stmt.body.body
    if not isinstance(stmt.body, cst.IndentedBlock):
        body = [cst.SimpleStatementLine(list(body))]
    return all(is_empty_shell(s) or _is_pass_only([s]) for s in body)


__all__ = ["AmpRule", "is_empty_shell", "code_of"]
