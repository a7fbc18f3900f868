"""Base class of the apex.amp rules: parent links, positions, planned statement edits and
node replacements applied on the way out of the tree, and TODO comments that are never
written twice."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import ScopeProvider

from ..repo_plan import FILE_STATE_KEY, REPO_PLAN_KEY
from ..settings import Settings
from ._metadata import ParentProvider, QualifiedNameProvider
from ._tree import children, module_code, walk_of
from ._edits import StatementEdits, block_body, code_of, read_todos, todo_key, todo_lines, with_leading
from .base import Rule


def _is_pass_only(body: Sequence[Any]) -> bool:
    return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body) for s in body)


#: the ``NAMESPACES`` of the rules whose every site is an apex.amp name (``Rule.NAMESPACES``)
APEX_AMP = ("apex.amp",)

#: the end every APX220 message has: the file stays on the shim (``amp_initialize`` and the
#: blockers of ``_amp_sites`` write it after the reason)
SHIM_FALLBACK_TODO = "this file keeps apex.amp semantics through apexcompat.amp"

#: the file state's mark that the initialize rule left the file on the shim (it reported
#: blockers): the rules after it find no GradScaler for any site of it (``find_scalers``), so
#: they write their notes but rewrite nothing, with or without an amp.initialize in the file
LEFT_ON_SHIM = "left on the shim"

#: TODO comments the apex.amp rules write: a text fragment -> (code, severity, fixed), the
#: same three the rule reported when it wrote the comment.  A later run reports every such
#: comment again (the site is no longer apex code then), so it lists the same manual work.
#: tests/migrate/test_realworld_reports.py derives the table from what the rules write (every
#: documented example's TODO comments and findings) and fails on a message missing here or
#: one whose code or severity differs; the fragments are the fixed parts of each message.
KNOWN_TODOS: Dict[str, Tuple[str, str, bool]] = {
    SHIM_FALLBACK_TODO: ("APX220", "error", False),
    "is chosen at run time; the GradScaler is dynamic": ("APX205", "error", False),
    "the GradScaler keeps this scale, but unlike apex": ("APX204", "warning", True),
    "O3 inference: the model is now float16": ("APX206", "warning", True),
    "inference without optimizers: wrap the forward pass": ("APX206", "error", False),
    "the forward pass and loss are not next to this amp.scale_loss": ("APX210", "error", False),
    "misses inf: GradScaler skips steps": ("APX323", "warning", False),
    # checkpoints: amp state saved/loaded in a file without amp.initialize
    "needs the GradScaler that replaces amp.initialize, which is created in another file": ("APX403", "error", False),
    # imports: a star import of a removed module that is still used stays (found again each run)
    "was removed from apex; replace those names": ("APX104", "error", False),
    "was removed from apex: without apex this import fails": ("APX104", "error", False),
    "is no longer part of apex (NVIDIA moved it": ("APX104", "error", False),
    # imports: apex asked for by name (importlib.import_module); apex.amp is pointed at the shim
    "imports apex by name at run time: the tool follows import statements only": ("APX107", "error", False),
    "imports apex.amp by name at run time: it now imports apexcompat.amp": ("APX107", "error", False),
    # casting_hooks: its messages are built from these
    "native autocast does not cast it. Where that matters": ("APX503", "error", False),
    "native autocast does not. Where that matters": ("APX503", "error", False),  # written before 2026-11-21
    "apex promoted mixed fp16/fp32 inputs": ("APX505", "error", False),
}


def known_todo(message: str) -> Optional[Tuple[str, str, bool]]:
    """(code, severity, fixed) of a TODO message an apex.amp rule writes, else ``None``: from
    the ``KNOWN`` table a rule declares next to its own messages (a fragment -> the same
    three; it wins, so a rule that changes a TODO's severity says so in its own file), else
    from KNOWN_TODOS."""
    for rule in _amp_rule_classes():
        for fragment, known in getattr(rule, "KNOWN", {}).items():
            if fragment in message:
                return known
    for fragment, known in KNOWN_TODOS.items():
        if fragment in message:
            return known
    return None


def _amp_rule_classes() -> List[type]:
    found: List[type] = []
    stack = list(AmpRule.__subclasses__())
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


class AmpRule(Rule):
    """A rule over apex.amp sites: plan in ``plan(module)``, the base applies the plan."""

    METADATA_DEPENDENCIES = (  # type: ignore[assignment]
        QualifiedNameProvider,
        ParentProvider,
        ScopeProvider,  # resolved for the qualified names anyway; the device needs it too
    )
    #: only the imports rule also works for ``--to shim``
    NATIVE_ONLY = True
    #: text of which one must be in the file *as the earlier rules left it* for this rule to
    #: have work; checked before LibCST resolves any metadata (the expensive part)
    LIVE_TRIGGERS: Tuple[str, ...] = ()
    #: fields of the file's part of the cross-file plan (``repo_plan.FilePlan``) that give
    #: this rule work when set, whatever the triggers (a launcher whose calls of another
    #: file's backward helper are followed by steps names no ``scale_loss``)
    PLANNED_WORK: Tuple[str, ...] = ()
    #: the planned edits' nodes and their ancestors, once planned (the transform descends
    #: only into these)
    _spine: Optional[Set[cst.CSTNode]] = None

    def transform_module(self, tree: cst.Module) -> cst.Module:
        plan = self.repo_plan()
        given_amp = plan is not None and bool(plan.amp_value_parameters)  # no apex name in the file
        given_amp = given_amp or planned_work(type(self), plan)
        if self.LIVE_TRIGGERS and not given_amp and not any(t in module_code(tree) for t in self.LIVE_TRIGGERS):
            return tree
        if self.NAMESPACES and self.repo_plan() is None:
            gate = self.namespace_gate(tree)
            if gate is not None and not gate.kept:
                return tree
        return super().transform_module(tree)

    @classmethod
    def applies_to(cls, settings: Settings) -> bool:
        if cls.NATIVE_ONLY and settings.target != "native":
            return False
        return super().applies_to(settings)

    # --- helpers for subclasses -----------------------------------------------------------

    def repo_plan(self) -> Any:
        """This file's part of the cross-file plan (``repo_plan.FilePlan``), None without one."""
        return self.context.scratch.get(REPO_PLAN_KEY)

    def file_state(self) -> Dict[str, Any]:
        """What the rules that ran before this one on the same file left for it (the name of
        the GradScaler the initialize rule created: ``"scaler"``)."""
        return self.context.scratch.setdefault(FILE_STATE_KEY, {})

    def line_of(self, node: cst.CSTNode) -> int:
        return self.position(node).start.line

    def qualified_names(self, node: cst.CSTNode) -> Set[str]:
        """``Rule.qualified_names``; empty at once for an attribute's member (the ``amp`` of
        ``torch.amp``): the scope analysis never visits one, so it names nothing, and asking
        would resolve the scopes of the whole text (the imports rule asked of every name
        spelled like an apex binding, and paid an analysis for a file left with members)."""
        parents = getattr(self, "parents", None)
        if parents is not None and isinstance(node, cst.Name):
            holder = parents.get(node)
            if isinstance(holder, cst.Attribute) and holder.attr is node:
                return set()
        return super().qualified_names(node)

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
        """Report ``message`` at ``node`` and put it above node's statement as a TODO comment;
        once, however many of the rule's sites lead to the same node (two clip calls, one in
        each branch, feeding one ``isnan`` check)."""
        stmt = self.statement_of(node)
        if stmt is not None and message in self.todos.get(stmt, ()):
            return
        self.report(node, code, message, severity=severity, fixed=fixed)
        if stmt is not None:
            self.todos.setdefault(stmt, []).append(message)

    def report_earlier_todos(self, module: cst.Module, only: Iterable[str] = ()) -> None:
        """Report the TODO comments an earlier run wrote (those starting with one of ``only``,
        when given), each once, at the statement it sits on, with the code and severity it
        was written with; so a second run lists the same manual work.  A comment this run
        reported already (a rule found the site again and did not write the comment twice) is
        not reported again: the findings of the run so far say how many of the comments with
        that message are accounted for."""
        from ..findings import Finding

        prefixes = tuple(only)
        sites: Dict[str, List[cst.CSTNode]] = {}
        for node in walk_of(module, cst.BaseStatement):
            for message in read_todos(getattr(node, "leading_lines", ())):
                if known_todo(message) is not None and (not prefixes or message.startswith(prefixes)):
                    sites.setdefault(message, []).append(node)
        if not sites:
            return
        # keyed without line numbers: a site found again may name lines the first run moved
        keys = {todo_key(message) for message in sites}
        reported = Counter(todo_key(f.message) for f in self.findings if todo_key(f.message) in keys)
        for message, nodes in sites.items():
            code, severity, fixed = known_todo(message) or ("", "", False)
            if not self.settings.code_enabled(code):
                continue
            found_again = reported[todo_key(message)]
            if found_again:
                # the comments on sites that are still apex code are the ones found again
                nodes = sorted(nodes, key=lambda n: not self._mentions_apex(n))[found_again:]
            for node in nodes:
                pos = self.position(node).start
                path = self.context.filename or "<string>"
                self.findings.append(Finding(path, pos.line, pos.column + 1, code, message, fixed, severity))

    def _mentions_apex(self, stmt: cst.CSTNode) -> bool:
        for node in _walk_statements_and_names(stmt):
            names = self.get_metadata(QualifiedNameProvider, node, set())
            if any(q.name == "apex" or q.name.startswith("apex.") for q in names):
                return True
        return False

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
        known = getattr(self, "KNOWN", {})
        if known and any(prefix in module_code(node) for prefix in known):
            # a rule that declares its own TODOs reports those an earlier run wrote
            self.report_earlier_todos(node, only=known)
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


def _walk_statements_and_names(node: cst.CSTNode):
    """The names and attribute chains in ``node`` (its leading comments aside)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (cst.Name, cst.Attribute)):
            yield cur
        stack.extend(reversed(children(cur)))


def is_empty_shell(stmt: Any) -> bool:
    """An ``if`` without ``else`` whose body holds only ``pass`` (or such shells)."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return False
    body: Any = stmt.body.body
    if not isinstance(stmt.body, cst.IndentedBlock):
        body = [cst.SimpleStatementLine(list(body))]
    return all(is_empty_shell(s) or _is_pass_only([s]) for s in body)


__all__ = ["AmpRule", "KNOWN_TODOS", "is_empty_shell", "code_of", "known_todo"]


def planned_work(rule_cls: Any, plan: Any) -> bool:
    """Whether the cross-file plan gives ``rule_cls`` work in the file (``PLANNED_WORK``)."""
    return plan is not None and any(getattr(plan, name) for name in getattr(rule_cls, "PLANNED_WORK", ()))
