"""APX284/APX285: apex.amp tried first, the file's own GradScaler path as its fallback
(native target only).

``try: model, optim = amp.initialize(model, optim, opt_level="O1") except: scaler =
torch.cuda.amp.GradScaler()`` in ``main()``, and in ``train()`` ``if scaler is not None:
scaler.scale(loss).backward(); ... else: with amp.scale_loss(loss, optim) as s: ...``
(cryodrgn's ``abinit_*_old.py``; ``abinit.py`` tries ``amp.initialize(self.scaler)`` the
same way).  Run where apex is not installed, which is where the migrated file runs, the
original never gets past a use of ``amp``: the ``try`` raises at ``amp.initialize`` before
its arguments are read, and the handler, which catches everything, makes the GradScaler; a
branch that opens with ``amp.scale_loss`` raises where it starts.  So the file already holds
what it does without apex, and the rewrite keeps exactly that:

* the ``try`` becomes its handler's body (APX284);
* ``if X is not None: <X's path> else: <apex's path>`` becomes ``<X's path>`` (APX285),
  where the apex branch opens with an apex.amp call and ``X``'s path opens by reading an
  attribute of ``X``: where ``X`` is None the original raised a NameError at once, the
  rewrite an AttributeError at once (``X is None`` with the branches the other way round too).

All or nothing for a file: every use of apex.amp in it must sit in such a ``try`` or branch,
one ``try`` at least; the handler makes a GradScaler and the file calls ``autocast`` outside
what goes (the native path casts its forward pass: dropping apex must not leave float32
training); no name the dropped code binds is read elsewhere unbound; the file takes no part
in the cross-file plan.  Otherwise nothing changes here and the apex.amp rules decide.
"""

from __future__ import annotations

import re

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..repo_plan import REPO_PLAN_KEY
from ._edits import code_of, kept_leading
from ._neighbour_base import NeighbourRule
from ._tree import children, walk
from ._amp_rule import APEX_AMP
from ._amp_sites import AMP, _chain_root, _possible_roots
from ._apex_fallback_examples import FALLBACK_EXAMPLES
from .old_torch_branches import dead_binding_read

_GRAD_SCALERS = frozenset(
    {
        "torch.cuda.amp.GradScaler",
        "torch.amp.GradScaler",
        "torch.cuda.amp.grad_scaler.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
    }
)
_AUTOCASTS = frozenset({"torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast"})
#: a call of ``initialize`` (``amp.initialize(``, ``A.initialize (``): every file this rule changes has one
_CALLS_INITIALIZE = re.compile(rb"\binitialize\s*\(")
#: handler types that catch the NameError (or AttributeError) of an ``amp`` apex left unbound
_CATCH_ALL = frozenset({"Exception", "BaseException"})


class ApexFallbackRule(NeighbourRule):
    """Keep the path a file with apex.amp tried first takes where apex is not installed."""

    DESCRIPTION = "Keep the GradScaler path a file falls back on where apex.amp is missing; drop the apex attempt."
    CODES = {
        "APX284": (
            "try around amp.initialize replaced by its handler, the file's own GradScaler: the path the original "
            "takes wherever apex is not installed"
        ),
        "APX285": (
            "branch holding apex.amp beside the file's own GradScaler path dropped: the original, run without "
            "apex, raises as soon as it enters it, and the branch kept raises as soon as it enters it without a "
            "GradScaler"
        ),
    }
    TRIGGERS = (b"GradScaler",)
    CODE_WORDS = ("apex",)
    NAMESPACES = APEX_AMP  # a file none of whose statements names apex.amp is not resolved
    EXAMPLES = FALLBACK_EXAMPLES

    @classmethod
    def applies_to(cls, settings) -> bool:  # type: ignore[no-untyped-def]
        return settings.target == "native" and super().applies_to(settings)

    @classmethod
    def has_work(cls, source: bytes) -> bool:
        # every file this rule changes holds a try around amp.initialize: the many files that
        # use a GradScaler beside apex without one are not resolved at all
        return super().has_work(source) and _CALLS_INITIALIZE.search(source) is not None

    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        result = super().visit_Module(node)
        #: id of a ``try`` -> its handler; id of an ``if`` -> (the block kept, the block dropped)
        self._tries: Dict[int, cst.ExceptHandler] = {}
        self._branches: Dict[int, Tuple[cst.BaseSuite, cst.BaseSuite]] = {}
        repo_plan = self.context.scratch.get(REPO_PLAN_KEY)
        if repo_plan is None or getattr(repo_plan, "component", None) is None:
            self._plan(node)
        return result

    # --- planning --------------------------------------------------------------------------

    def _plan(self, module: cst.Module) -> None:
        uses = self._apex_uses(module)
        if not uses:
            return
        if any(not _only_apex(self.qualified_names(use)) for use in uses):
            return  # ``amp`` may be bound to something else (``except ImportError: amp = None``)
        tries: Dict[int, Tuple[cst.Try, cst.ExceptHandler]] = {}
        branches: Dict[int, Tuple[cst.If, cst.BaseSuite, cst.BaseSuite]] = {}
        for use in uses:
            found = self._fallback_try(use)
            if found is not None:
                tries[id(found[0])] = found
                continue
            branch = self._apex_branch(use)
            if branch is None:
                return
            branches[id(branch[0])] = branch
        if not tries:
            return
        dropped: List[cst.CSTNode] = [t.body for t, _ in tries.values()]
        dropped += [t.orelse for t, _ in tries.values() if t.orelse is not None]
        dropped += [dead for _, _, dead in branches.values()]
        if not self._autocasts_outside(module, dropped):
            return
        for stmt, handler in tries.values():
            dead = [stmt.body] + ([stmt.orelse] if stmt.orelse is not None else [])
            if dead_binding_read(self, stmt, handler.body, dead):
                return
        for stmt, live, dead in branches.values():
            if dead_binding_read(self, stmt, live, [dead]):
                return
        self._tries = {key: handler for key, (_, handler) in tries.items()}
        self._branches = {key: (live, dead) for key, (_, live, dead) in branches.items()}

    def _apex_uses(self, module: cst.Module) -> List[cst.CSTNode]:
        """The outermost names and attributes of the file that refer into apex.amp, outside
        import statements."""
        # only a chain starting with a name an import may bind to apex.amp can denote it
        # (``find_amp_refs``' pruning): the others are not resolved, a scope lookup each
        roots = _possible_roots(module, AMP, set())
        found: List[cst.CSTNode] = []
        stack: List[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                continue
            if isinstance(node, (cst.Name, cst.Attribute)):
                root = _chain_root(node)
                if (roots is None or root is None or root in roots) and self._is_apex_amp(node):
                    found.append(node)
                    continue
            stack.extend(reversed(children(node)))
        return found

    def _is_apex_amp(self, node: cst.CSTNode) -> bool:
        return any(q == "apex.amp" or q.startswith("apex.amp.") for q in self.qualified_names(node))

    def _fallback_try(self, use: cst.CSTNode) -> Optional[Tuple[cst.Try, cst.ExceptHandler]]:
        """The ``try`` whose body is the statement of ``use`` alone, an ``amp.initialize(...)``
        call (assigned or not), with one handler that catches everything and makes a
        GradScaler, no ``finally``, and its ``else`` (if any) free of apex."""
        line = self._statement_of(use)
        block = self.parent(line)
        stmt = self.parent(block)
        if not isinstance(stmt, cst.Try) or stmt.body is not block or len(block.body) != 1:
            return None
        if not self._opens_with_apex_call(line, "apex.amp.initialize"):
            return None
        if stmt.finalbody is not None or len(stmt.handlers) != 1:
            return None
        handler = stmt.handlers[0]
        if handler.type is not None and code_of(handler.type).strip() not in _CATCH_ALL:
            return None
        if self._apex_uses_in(handler) or (stmt.orelse is not None and self._apex_uses_in(stmt.orelse)):
            return None
        if not any(isinstance(n, cst.Call) and self.qualified_names(n.func) & _GRAD_SCALERS for n in walk(handler)):
            return None
        return stmt, handler

    def _apex_branch(self, use: cst.CSTNode) -> Optional[Tuple[cst.If, cst.BaseSuite, cst.BaseSuite]]:
        """(the ``if``, the block kept, the block dropped) where ``use`` is inside the branch
        of ``if X is not None: ... else: ...`` (or ``if X is None:``) that runs when ``X`` is
        None, that branch opens with an apex.amp call and the other with ``X.<attribute>``."""
        child: Optional[cst.CSTNode] = use
        current = self.parent(use)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            if isinstance(current, cst.If) and isinstance(current.orelse, cst.Else):
                split = _none_test(current.test)
                if split is not None:
                    subject, none_runs_body = split
                    dead = current.body if none_runs_body else current.orelse.body
                    live = current.orelse.body if none_runs_body else current.body
                    if child is dead or (child is current.orelse and not none_runs_body):
                        return self._checked_branch(current, subject, live, dead)
            child, current = current, self.parent(current)
        return None

    def _checked_branch(
        self, stmt: cst.If, subject: cst.BaseExpression, live: cst.BaseSuite, dead: cst.BaseSuite
    ) -> Optional[Tuple[cst.If, cst.BaseSuite, cst.BaseSuite]]:
        if not isinstance(self.parent(stmt), (cst.IndentedBlock, cst.Module)):
            return None  # an ``elif`` is no statement of a block
        if not isinstance(subject, (cst.Name, cst.Attribute)) or not dead.body or not live.body:
            return None
        if not self._opens_with_apex_call(dead.body[0], "apex.amp."):
            return None
        if self._apex_uses_in(live) or not _opens_with_attribute_of(live.body[0], code_of(subject)):
            return None
        return stmt, live, dead

    def _opens_with_apex_call(self, stmt: cst.CSTNode, prefix: str) -> bool:
        """``stmt`` evaluates an apex.amp function whose name starts with ``prefix`` before
        anything else: ``x = amp.initialize(...)``, ``with amp.scale_loss(...) as s:``."""
        call = _first_call(stmt)
        return call is not None and any(q.startswith(prefix) for q in self.qualified_names(call.func))

    def _autocasts_outside(self, module: cst.Module, dropped: Sequence[cst.CSTNode]) -> bool:
        inside = {id(n) for part in dropped for n in walk(part)}
        return any(
            isinstance(n, cst.Call) and id(n) not in inside and self.qualified_names(n.func) & _AUTOCASTS
            for n in walk(module)
        )

    def _apex_uses_in(self, tree: cst.CSTNode) -> bool:
        return any(isinstance(n, (cst.Name, cst.Attribute)) and self._is_apex_amp(n) for n in walk(tree))

    def _statement_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        current: Optional[cst.CSTNode] = node
        while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            current = self.parent(current)
        return current

    # --- edits -----------------------------------------------------------------------------

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try):  # type: ignore[no-untyped-def]
        handler = self._tries.get(id(original_node))
        if handler is None:
            return updated_node
        self.report(
            original_node,
            "APX284",
            f"the try around {code_of(_first_call(original_node.body.body[0]).func)}(...) is replaced by its "
            f"`{_handler_head(handler)}` handler, which makes the file's own GradScaler: the original takes that "
            "path wherever apex is not installed; what only apex's path did (its opt_level, the try's else) "
            "does not happen",
            fixed=True,
            severity="warning",
        )
        new_handler = updated_node.handlers[0]
        lines = kept_leading(updated_node.leading_lines) + kept_leading(new_handler.leading_lines)
        return _flattened(new_handler.body, lines)

    def leave_If(self, original_node: cst.If, updated_node: cst.If):  # type: ignore[no-untyped-def]
        found = self._branches.get(id(original_node))
        if found is None:
            return updated_node
        self.report(
            original_node,
            "APX285",
            f"the branch of `{code_of(original_node.test)}` that holds apex.amp is dropped and the other kept "
            "alone: without apex the original raised as soon as it entered the dropped branch, and the kept one "
            "raises as soon as it starts where no GradScaler was made",
            fixed=True,
            severity="info",
        )
        split = _none_test(original_node.test)
        assert split is not None and isinstance(updated_node.orelse, cst.Else)
        live = updated_node.orelse.body if split[1] else updated_node.body
        return _flattened(live, list(updated_node.leading_lines))


def _only_apex(names: Set[str]) -> bool:
    return all(q == "apex.amp" or q.startswith("apex.amp.") for q in names)


def _none_test(test: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, bool]]:
    """``X is not None`` -> (X, False); ``X is None`` -> (X, True): whether the ``if``'s body
    is the branch that runs when X is None; else None."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"):
        return None
    if isinstance(target.operator, cst.IsNot):
        return test.left, False
    if isinstance(target.operator, cst.Is):
        return test.left, True
    return None


def _first_call(stmt: cst.CSTNode) -> Optional[cst.Call]:
    """The call ``stmt`` makes before evaluating anything else: the value of its one small
    statement (an expression or a plain assignment), or its ``with``'s first item."""
    if isinstance(stmt, cst.With):
        value: Optional[cst.BaseExpression] = stmt.items[0].item
    elif isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], (cst.Expr, cst.Assign)):
        value = stmt.body[0].value
    else:
        return None
    return value if isinstance(value, cst.Call) else None


def _opens_with_attribute_of(stmt: cst.CSTNode, subject: str) -> bool:
    """The first thing ``stmt`` evaluates is an attribute of ``subject`` (``scaler.scale``
    of ``scaler.scale(loss).backward()``): it raises there when ``subject`` is None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or not isinstance(stmt.body[0], (cst.Expr, cst.Assign)):
        return False
    node: cst.CSTNode = stmt.body[0].value
    while isinstance(node, (cst.Call, cst.Attribute)):
        if isinstance(node, cst.Attribute) and code_of(node.value) == subject:
            return True
        node = node.func if isinstance(node, cst.Call) else node.value
    return False


def _handler_head(handler: cst.ExceptHandler) -> str:
    return "except" + (f" {code_of(handler.type).strip()}" if handler.type is not None else "")


def _flattened(block: cst.BaseSuite, lines: List[cst.EmptyLine]) -> cst.FlattenSentinel:
    """The statements of ``block`` in place of the compound statement that held it, ``lines``
    above the first."""
    body = list(block.body)
    first: Any = body[0]
    body[0] = first.with_changes(leading_lines=[*lines, *first.leading_lines])
    return cst.FlattenSentinel(body)

