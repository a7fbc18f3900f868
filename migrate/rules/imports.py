"""APX101-APX105: apex imports, after every other rule has run.

* an apex import whose names are no longer used is removed (scheduled through
  ``RemoveImportsVisitor``); one inside ``try: ... except ImportError:`` takes the whole
  ``try`` with it, in the five shapes seen in real code: re-raise with an install hint (the
  ``try`` goes), a flag or ``None`` (the flag keeps its "available" value: the native path
  always is), a fallback implementation (kept, now unconditionally), a bare ``except:``,
  ``pass``.  Messages in the ``except`` branch (``print``, ``warnings.warn``, a logging
  call at any level) only say apex is missing and go with it.  The same holds for
  ``try: import apex`` used as an availability check inside a function;
* an unused apex import in a ``try`` that guards other work, in a function no ``return``
  of which gives a value (a bare ``return`` in the handler gives up, it answers nobody),
  goes alone and the ``try`` stays (``_guarded_work``); with a value returned it is an
  availability probe and stays (APX105);
* a ``try`` whose apex import only asks whether apex is installed (a flag set in its
  handler) stays too (APX105) where another file of the run still needs apex
  (``kept_probes``): its flag may be what keeps that file's apex path off;
* a used name imported from a module removed from apex (``apex.parallel``,
  ``apex.fp16_utils``, ``apex.RNN``) under a guard whose ``except`` assigns it (``X =
  None``) gets a TODO: without apex that branch always wins;
* ``from apex.fp16_utils import *`` (or ``apex.parallel``) is resolved against the module's
  known names: none left in use, it goes (with its guard); otherwise it stays with a TODO
  naming them;
* what was above a removed import stays (blank lines, comments about something else),
  except the comment block directly above it when that block names apex;
* apex.amp names still in use (``--to shim``, or a file the amp rules left on the shim) are
  imported from ``apexcompat.amp`` instead.  That edit renames the module of the existing
  import statement in place: it is neither an addition nor a removal, and it keeps the
  statement where it was (inside a ``try``, a function, after a comment)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple, cast

import libcst as cst
from libcst.codemod.visitors import RemoveImportsVisitor
from libcst.helpers import get_full_name_for_node

from ._amp_carrier import is_reference
from ._amp_param_rename import renamed_scaler_parameters
from ._apex_path import only_class_tests_with_twin, only_dead_reads_left
from ._guarded_work import guards_work
from ._same_branches import collapsed, enclosing_if
from ._twin_branches import only_reads_behind_twin_import
from ._amp_rule import AmpRule
from ._metadata import QualifiedNameProvider
from ._amp_sites import AMP, enclosing_function, globals_bound_to, plain_read, walk
from ._tree import assignment_targets, children, walk_of
from ._edits import code_of, kept_leading, move_leading, prepend_lines, read_todos, small_statements
from ._neighbour_base import APEX_STAR_EXPORTS, literal_value
from ._pyprof_calls import PYPROF_REMOVED, annotation_switches
from ..settings import Settings
from .base import Example

SHIM = "apexcompat"
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


#: the TODO of an apex.amp import other files take from its module (APX270)
TAKEN_ELSEWHERE_TODO = "is taken from this module by other files of the repository"


def _taken_message(binding: str, importers: str) -> str:
    return (
        f"apex.amp (as {binding}) {TAKEN_ELSEWHERE_TODO} ({importers}), which use it there: it stays, through "
        "apexcompat.amp, and they keep apex.amp semantics with it; migrate them by hand, then delete this import"
    )


def _module_name(node: cst.ImportFrom) -> Optional[str]:
    if node.relative or node.module is None:
        return None
    return get_full_name_for_node(node.module)


def _is_apex(name: Optional[str]) -> bool:
    return name is not None and (name == "apex" or name.startswith("apex."))


#: apex modules the 2025 removal deleted (besides apex.amp, which goes to the shim)
_REMOVED = ("apex.parallel", "apex.fp16_utils", "apex.RNN")


#: apex modules that left apex earlier, still used by old code: module -> the TODO it gets
_MOVED_OUT = {
    "apex.pyprof": (
        "`apex.pyprof` is no longer part of apex (NVIDIA moved it to its own PyProf repository, "
        "github.com/NVIDIA/PyProf, not the unrelated `pyprof` on PyPI): without it this import fails. It only "
        "annotates the profiler's NVTX ranges; natively, torch.autograd.profiler.emit_nvtx(record_shapes=True) "
        "marks each op with its input shapes: use that and delete this import with its pyprof calls"
    ),
}


def is_removed_module(name: str) -> bool:
    """``name`` lies in a module apex's 2025 removal deleted (not apex.amp)."""
    return any(name == m or name.startswith(m + ".") for m in _REMOVED)


#: logging methods: in an ``except ImportError:`` of an apex import, a call of one of these
#: on a logger (any level: ``logger.exception``/``logging.error`` too) only says that apex
#: is missing, so it goes with the ``try``
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}


def _is_install_hint(call: cst.Call) -> bool:
    """``print(...)``, ``warnings.warn(...)`` or a logging call (``logger.error``,
    ``logging.exception``, ``self.log.warning``...): a message about the failed import."""
    func = call.func
    if code_of(func) in ("print", "warn", "warnings.warn"):
        return True
    if isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS:
        receiver = code_of(func.value).split(".")[-1].lower()
        return "log" in receiver
    return False


#: calls that end the process, as a ``raise`` in the handler does (``sys.exit(1)`` after the
#: install hint): once the import cannot fail, they never run
_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def _ends_the_process(call: cst.Call) -> bool:
    return code_of(call.func) in _EXITS


class ImportsRule(AmpRule):
    """Remove apex imports that became unused; point the remaining apex.amp ones at the shim."""

    CODES = {
        "APX101": "unused apex import removed",
        "APX102": "apex.amp now imported from apexcompat.amp (same API, runs on native torch.amp)",
        "APX103": "try/except ImportError around apex imports simplified: the native path is always available",
        "APX104": "apex import guard left as it is: its shape is not one the tool knows",
        "APX105": "apex availability probe left as it is (inside a function, or while another file needs apex)",
        "APX106": "unused `import apex` inside a function left as it is",
        "APX107": "apex imported by name at run time (importlib.import_module): apex.amp now comes from "
        "apexcompat.amp; anything else, and the native migration, need an import statement",
        "APX270": "a module-level apex.amp import this file does not use itself, but other files of the "
        "repository take from it (a star import, an import by name, module.amp): it stays, through apexcompat.amp, "
        "so their apex.amp calls keep working, with apex.amp's semantics; migrate those files by hand",
    }
    KNOWN = {TAKEN_ELSEWHERE_TODO: ("APX270", "error", False)}
    TRIGGERS = (b"apex",)
    CODE_WORDS = ("apex",)
    LIVE_TRIGGERS = ("apex",)
    NATIVE_ONLY = False

    def plan(self, module: cst.Module) -> None:
        self._imported_by_name(module)  # first: the TODOs it finds again are not reported twice
        self.report_earlier_todos(module)
        self.removed: Set[cst.CSTNode] = set()
        self.reported_guards: Set[cst.CSTNode] = set()
        self.removed_trys: List[cst.CSTNode] = []
        #: comments of a removed try's body that go with its leading lines
        self.carried_from_trys: Dict[cst.CSTNode, List[cst.EmptyLine]] = {}
        #: a guard replaced by what stays of it -> those statements (an outer guard that goes
        #: too keeps them in its place, not the inner try)
        self.simplified_guards: Dict[cst.CSTNode, List[cst.BaseStatement]] = {}
        self.dropped_stars: Set[cst.CSTNode] = set()
        self.dropped_globals: List[cst.CSTNode] = []
        #: lines that only switched apex.pyprof's annotations on, deleted with its import
        self.pyprof_switches: List[cst.CSTNode] = []
        #: a ``global`` line that named the import's binding and more: what is left of it
        self.narrowed_globals: Dict[cst.CSTNode, cst.SimpleStatementLine] = {}
        if self.settings.target == "native":
            for node, new in renamed_scaler_parameters(self, module).items():
                self.replace_node(node, new)
        imports = self._apex_imports(module)
        for stmt in self.dropped_stars:
            self._drop_star(stmt)
        if not imports and not self.dropped_stars:
            return
        used = self._used_bindings(module, {binding for _stmt, _imp, _alias, binding, _target in imports})
        unused_in: Dict[cst.CSTNode, List[cst.ImportAlias]] = {}
        # ``import apex.amp`` binds ``apex`` too: its ``apex.amp.x`` chains go with that import
        # (a shim file's ``import apexcompat.amp`` beside an ``import apex`` kept for other
        # apex names reads as both on a second run)
        def binds_amp(imp: cst.CSTNode, alias: cst.ImportAlias) -> bool:
            return (
                isinstance(imp, cst.Import)
                and alias.asname is None
                and get_full_name_for_node(alias.name) == "apex.amp"
            )

        amp_bound = False
        for stmt, imp, alias, binding, target in imports:
            if target == "apex" and binds_amp(imp, alias) and self._amp_chains(module, binding):
                # each one: the module's and a function's own (OpenNMT-py's optimizers.py)
                self._to_shim(imp, alias, "apex.amp", module)
                amp_bound = True
        for stmt, imp, alias, binding, target in imports:
            if target == "apex" and binds_amp(imp, alias) and amp_bound:
                continue
            if target == "apex.amp" or target.startswith("apex.amp."):
                if self._binding_used(binding, target, used):
                    self._to_shim(imp, alias, target, module)
                    continue
                importers = self._taken_elsewhere(imp, binding)
                if importers:
                    self._to_shim(imp, alias, target, module)
                    if self.settings.target == "native":
                        self._todo_once(module, imp, _taken_message(binding, importers), "APX270")
                    continue
            elif target == "apex" and not amp_bound and self._amp_chains(module, binding):
                self._import_apex_amp_chain(imp, module)
                if self._binding_used(binding, target, used, ignore_amp=True):
                    continue
            elif binds_amp(imp, alias) and self._binding_used(binding, target, used):
                self._import_apex_without_amp(stmt, imp, alias)
                continue
            elif (
                self._binding_used(binding, target, used)
                and not only_dead_reads_left(module, self.parents.get, binding, target)
                and not only_class_tests_with_twin(module, self.parents.get, binding, target)
            ):
                if self._drop_twin_branch_import(module, stmt, imp, binding, target):
                    continue
                if not self._drop_pyprof_switches(imp, binding, target):
                    self._report_dead_guard(stmt, imp, binding, target)
                    self._report_moved_out(imp, target)
                    continue
            if self._unusual_guard(stmt):
                continue
            kept_by = self._kept_probe(stmt)
            if kept_by:
                self.report(
                    imp,
                    "APX105",
                    f"apex availability probe left as it is: {kept_by} still imports apex, and what "
                    "this flag decides may need it",
                    severity="warning",
                )
                continue
            if self._is_probe(stmt) and not self._guards_work(stmt):
                self.report(
                    imp,
                    "APX105",
                    "apex availability probe left as it is: the migrated code no longer needs apex; "
                    "check what depends on its answer",
                    severity="warning",
                )
                continue
            if (
                isinstance(imp, cst.Import)
                and target == "apex"
                and alias.asname is None
                and binding == "apex"
                and not binds_amp(imp, alias)
            ):
                # inside a ``try: import apex ... except ImportError: use_amp = False`` it is a
                # guard like any other: simplified below, the flag keeps its "available" value.
                # ``import apex.amp`` is no availability check: it imports the module the 2025
                # removal deleted, so it fails with apex installed too, and goes
                if enclosing_function(self.parents, imp) is not None and not self._in_guard(stmt):
                    self.report(
                        imp,
                        "APX106",
                        "unused `import apex` inside a function left as it is (an import for its side effect "
                        "or an availability check); delete it once nothing needs apex",
                        severity="info",
                    )
                    continue
            unused_in.setdefault(stmt, []).append(alias)
            self._remove(stmt, imp, alias, target)
        gone: List[Any] = []
        # the guards inside others first: an outer guard that goes keeps what stays of them
        emptied = list(unused_in) + [s for s in self.dropped_stars if s not in unused_in]
        imp_stmts = {s for s, *_ in imports}
        handled = {s for s in sorted(emptied, key=self._depth, reverse=True) if self._simplify_try(s, imp_stmts)}
        for stmt in emptied:
            if stmt not in handled and self._all_removed(stmt):
                self._close_gap(stmt)
                gone.append(stmt)
        gone += self.removed_trys + self.dropped_globals + self.pyprof_switches
        self._keep_neighbouring_comments(gone)
        self._drop_emptied_ifs(gone)
        self._merge_same_branches(gone)

    def _taken_elsewhere(self, imp: Any, binding: str) -> str:
        """The files that take this module-level apex.amp ``binding`` from this file
        (``amp_reexports``), shown; "" for an import inside a def or one no file takes."""
        plan = self.repo_plan()
        if plan is None or enclosing_function(self.parents, imp) is not None or self._in_class(imp):
            return ""
        return dict(plan.amp_importers).get(binding, "")

    def _in_class(self, node: Any) -> bool:
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, cst.Module):
            if isinstance(cur, cst.ClassDef):
                return True
            cur = self.parents.get(cur)
        return False

    def _keep_neighbouring_comments(self, gone: List[Any]) -> None:
        """The lines above a removed import (or guard) stay, on the next statement that
        stays in the same block: blank lines, and comments about something else (a section
        comment, a commented-out alternative).  Only the comment block directly above it
        (no blank line between) goes, and only when it names apex: it introduced the import."""
        gone_set = set(gone)
        blocks = {self.parents.get(stmt) for stmt in gone}
        for block in blocks:
            if not isinstance(block, (cst.Module, cst.IndentedBlock)):
                continue
            carry: List[cst.EmptyLine] = []
            opening = isinstance(block, cst.IndentedBlock)  # no statement of the block kept yet
            for stmt in block.body:
                if stmt in gone_set:
                    carry += kept_leading(getattr(stmt, "leading_lines", ())) + self.carried_from_trys.get(stmt, [])
                    # moved here, so whichever pass removes the statement has none to keep
                    self._amend(stmt, lambda upd: upd.with_changes(leading_lines=[]))
                    continue
                if opening and carry:
                    # the block's new first statement opens it without a blank line
                    self._amend(stmt, lambda upd, carry=carry: _without_opening_blanks(prepend_lines(upd, carry)))
                elif carry:
                    self._amend(stmt, lambda upd, carry=carry: prepend_lines(upd, carry))
                carry, opening = [], False

    def _amend(self, node: Any, fn: Any) -> None:
        """``replace_node`` that composes with a replacement already planned for ``node``."""
        earlier = self.node_replacements.get(node)
        if earlier is None:
            self.replace_node(node, fn)
        else:
            self.replace_node(
                node, lambda upd, earlier=earlier, fn=fn: fn(earlier(upd) if callable(earlier) else earlier)
            )

    def _drop_emptied_ifs(self, gone: List[Any]) -> None:
        """``if args.fp16: from apex import amp`` (or its try) going away takes the ``if``."""
        by_block: Dict[cst.CSTNode, Set[cst.CSTNode]] = {}
        for stmt in gone:
            by_block.setdefault(self.parents.get(stmt), set()).add(stmt)
        for block, stmts in by_block.items():
            owner = self.parents.get(block)
            if (
                not isinstance(block, cst.IndentedBlock)
                or not isinstance(owner, cst.If)
                or owner.body is not block
                or isinstance(self.parents.get(owner), cst.If)
            ):
                continue
            if any(stmt in self.edits.before or stmt in self.edits.after for stmt in stmts):
                continue  # ``import apexcompat.amp`` goes in the import's place: the ``if`` stays
            dead_else = self._dead_fallback(owner, stmts)
            if owner.orelse is not None and not dead_else:
                continue
            if set(block.body) <= stmts and not self._has_effects(owner.test):
                self.edits.replace(owner, self._lines_to_next)
                around = self.parents.get(owner)
                if isinstance(around, cst.IndentedBlock) and len(around.body) > 1 and around.body[0] is owner:
                    self._amend(around.body[1], _without_opening_blanks)
            elif dead_else:
                self.edits.replace(owner, lambda upd: [upd.with_changes(orelse=None)])

    def _merge_same_branches(self, gone: List[Any]) -> None:
        """``if args.fp16: from apex import amp; <A> else: <A>`` (the scale-loss rule wrote
        both ``A`` while the import was there): the ``if`` whose branches read the same
        without the imports going here is written once (``_same_branches``)."""
        for stmt in gone:
            head = enclosing_if(self.parents, stmt)
            if head is not None and not self.edits.planned(head):
                self.edits.replace(head, lambda upd: collapsed(upd, dropped=self._all_removed) or [upd])

    def _lines_to_next(self, updated: Any) -> List[Any]:
        """Nothing in place of an emptied ``if``: the comments above it (a section comment,
        commented-out code) lead the next statement, as ``_keep_neighbouring_comments`` keeps
        those of a removed import (blank lines alone go with the ``if``, as before)."""
        kept = kept_leading(updated.leading_lines)
        if any(line.comment is not None for line in kept):
            self.edits.lead_next(kept)
        return []

    def _dead_fallback(self, owner: cst.If, stmts: Set[cst.CSTNode]) -> bool:
        """``if c: from apex import amp ... else: amp = None``, the import removed and the
        name read nowhere else in its scope any more: the ``else`` only bound what nothing reads."""
        if not isinstance(owner.orelse, cst.Else) or not isinstance(owner.orelse.body, cst.IndentedBlock):
            return False
        bound = {
            alias.evaluated_alias or (get_full_name_for_node(alias.name) or "").split(".")[0]
            for stmt in stmts
            for small in small_statements(stmt)
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar)
            for alias in small.names
            if alias in self.removed
        }
        targets: List[cst.Name] = []
        for line in owner.orelse.body.body:
            small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
            if not (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value in bound
                and code_of(small.value) == "None"
            ):
                return False
            targets.append(small.targets[0].target)
        names = {t.value for t in targets}
        scope = enclosing_function(self.parents, owner) or self.tree
        skip = {id(n) for stmt in stmts for n in walk(stmt)} | {id(t) for t in targets}
        return not any(
            isinstance(n, cst.Name) and n.value in names and id(n) not in skip and is_reference(self.parents, n)
            for n in walk(scope)
        )

    @staticmethod
    def _has_effects(test: cst.BaseExpression) -> bool:
        """Whether evaluating ``test`` may do something besides answering (a call, an
        assignment); asking whether apex is installed (``is_apex_available()``) does not."""
        return any(
            isinstance(n, (cst.NamedExpr, cst.Await)) or (isinstance(n, cst.Call) and not _asks_for_apex(n))
            for n in walk(test)
        )

    def _close_gap(self, stmt: Any) -> None:
        """A removed import that opened its block leaves no blank lines behind."""
        block = self.parents.get(stmt)
        body: List[Any] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        if len(body) < 2 or body[0] is not stmt or stmt.leading_lines:
            return

        def strip(upd):
            lines = list(upd.leading_lines)
            while lines and lines[0].comment is None:
                lines.pop(0)
            return upd.with_changes(leading_lines=lines)

        self._amend(body[1], strip)

    # --- finding imports and their uses ---------------------------------------------------

    def _imported_by_name(self, module: cst.Module) -> None:
        """``importlib.import_module("apex.amp")`` (or ``__import__``): no import statement
        for the other rules to follow, and a file that needs apex all the same.  apex.amp
        asked for by name is pointed at the shim (same API); with ``--to native`` that is
        only a first step, and any other apex module is left to a person."""
        for call in walk_of(module, cst.Call):
            if not call.args or call.args[0].keyword is not None:
                continue
            literal = call.args[0].value
            if not isinstance(literal, cst.SimpleString):
                continue
            target = literal.evaluated_value
            if not isinstance(target, str) or not _is_apex(target):
                continue
            names = {q.name for q in self.get_metadata(QualifiedNameProvider, call.func, set())}
            if not names & {"importlib.import_module", "builtins.__import__"}:
                continue
            shown = code_of(call)
            if target != "apex.amp":
                self.todo(
                    call,
                    "APX107",
                    f"{shown} imports apex by name at run time: the tool follows import statements only; "
                    "import what is used from apex with import statements (the tool then replaces them) or "
                    "migrate by hand",
                )
                continue
            self.replace_node(literal, literal.with_changes(value=f"{literal.prefix}{literal.quote}apexcompat.amp{literal.quote}"))
            if self.settings.target == "native":
                self.todo(
                    call,
                    "APX107",
                    f"{shown} imports apex.amp by name at run time: it now imports apexcompat.amp (same API, "
                    "apex no longer needed); for native PyTorch import it with `from apexcompat import amp`, "
                    "use `amp` directly and run the tool again",
                )
            else:
                self.report(call, "APX107", f"{shown} now imports apexcompat.amp", fixed=True, severity="info")

    def _apex_imports(self, module: cst.Module):
        found: List[Any] = []
        for node in walk_of(module, cst.Import, cst.ImportFrom):
            if isinstance(node, cst.Import):
                for alias in node.names:
                    name = get_full_name_for_node(alias.name) or ""
                    if _is_apex(name):
                        binding = alias.evaluated_alias or name.split(".")[0]
                        target = name if alias.asname is not None else name.split(".")[0]
                        if alias.asname is None and name.startswith("apex.amp"):
                            target = "apex"
                        found.append((self.statement_of(node), node, alias, binding, name if alias.asname else target))
            elif (
                isinstance(node, cst.ImportFrom)
                and _is_apex(_module_name(node))
                and not isinstance(node.names, cst.ImportStar)
            ):
                base = _module_name(node)
                for alias in node.names:
                    name = get_full_name_for_node(alias.name) or ""
                    found.append(
                        (self.statement_of(node), node, alias, alias.evaluated_alias or name, f"{base}.{name}")
                    )
            elif isinstance(node, cst.ImportFrom) and _is_apex(_module_name(node)):
                self._star_import(module, node)
        return found

    def _star_import(self, module: cst.Module, node: cst.ImportFrom) -> None:
        """``from apex.fp16_utils import *``: the removed modules export a known list of
        names.  None of them used any more (the other rules rewrote them): the import goes
        (with its guard, see ``_simplify_try``).  Otherwise, or for a module whose names are
        not known, it stays with a TODO naming what the file still takes from it."""
        base = _module_name(node) or "apex"
        stmt = self.statement_of(node)
        exports = APEX_STAR_EXPORTS.get(base)
        if exports is not None:
            used = sorted(self._bare_names(module) & set(exports))
            if not used and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
                self.dropped_stars.add(stmt)
                self.report(
                    node,
                    "APX101",
                    f"`from {base} import *` removed: none of its names is used",
                    fixed=True,
                    severity="info",
                )
                return
            message = (
                f"`from {base} import *` kept: this file still uses {', '.join(used)} from it, and {base} "
                "was removed from apex; replace those names, then delete the import"
            )
        else:
            message = f"`from {base} import *` kept: the names it brings cannot be followed; import them by name"
        self._todo_once(module, node, message)

    def _todo_once(
        self, module: cst.Module, node: cst.CSTNode, message: str, code: str = "APX104", severity: str = "error"
    ) -> None:
        """``todo`` (APX104, error, unless told) for an import that stays; the comments above a
        file's first statement are the module's header, where an earlier run's TODO is found."""
        if self.statement_of(node) is module.body[0] and message in read_todos(module.header):
            self.report(node, code, message, severity=severity)
        else:
            self.todo(node, code, message, severity=severity)

    def _drop_twin_branch_import(self, module: cst.Module, stmt: Any, imp: Any, binding: str, target: str) -> bool:
        """Delete ``from apex.parallel import X`` in one branch of an ``if`` whose other branch
        imports torch's twin before every read left (``_twin_branches``); the import visitors
        cannot, as scope analysis gives those reads to both imports."""
        if not (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(imp, cst.ImportFrom)
            and len(imp.names) == 1  # type: ignore[arg-type]
            and only_reads_behind_twin_import(module, self.parents.get, binding, target)
        ):
            return False
        self._close_gap(stmt)
        self._drop_star(stmt)
        self.report(
            imp,
            "APX101",
            f"unused import of {target} removed (the other branch imports torch's class for its reads)",
            fixed=True,
            severity="info",
        )
        return True

    def _drop_star(self, stmt: Any) -> None:
        """Delete an unused star import (the import visitors cannot); the last statement of
        its block becomes ``pass`` (a guard that stays, see ``_simplify_try``, or an ``if``
        with an ``else``)."""
        block = self.parents.get(stmt)
        alone = isinstance(block, cst.IndentedBlock) and len(block.body) == 1
        self.edits.replace(stmt, [cst.SimpleStatementLine([cst.Pass()])] if alone else [])

    @staticmethod
    def _bare_names(module: cst.Module) -> Set[str]:
        """Names read or bound outside import statements, not as ``x.name`` attributes."""
        skip: Set[int] = set()
        names: Set[str] = set()
        for node in walk(module):
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                skip.update(id(n) for n in walk(node))
            elif isinstance(node, cst.Attribute):
                skip.add(id(node.attr))
            elif isinstance(node, cst.Name) and id(node) not in skip:
                names.add(node.value)
        return names

    def _used_bindings(self, module: cst.Module, bindings: Set[str]) -> Dict[str, Set[str]]:
        """Name text -> qualified names of the dotted expressions it starts, for every name
        of ``bindings`` (what the apex imports bind) used outside import statements: only
        those are asked for, and resolving every name cost a third of the rule's plan."""
        in_imports = {id(n) for imp in walk_of(module, cst.Import, cst.ImportFrom) for n in walk(imp)}
        declared = globals_bound_to(self.parents, module, AMP)
        used: Dict[str, Set[str]] = {}
        for node in walk_of(module, cst.Name):
            if node.value not in bindings or id(node) in in_imports:
                continue
            top: cst.CSTNode = node
            while isinstance(self.parents.get(top), cst.Attribute) and self.parents[top].value is top:
                top = self.parents[top]
            names = self.qualified_names(top) if top is not node else set()
            names = names or self.qualified_names(node)
            if not names and node.value in declared and plain_read(self.parents, node):
                names = {AMP}  # the module global a function's import binds (``global amp``)
            used.setdefault(node.value, set()).update(names)
        return used

    def _amp_chains(self, module: cst.Module, binding: str) -> bool:
        """Whether ``<binding>.amp`` (``import apex`` then ``apex.amp.x``) is still used."""
        for node in walk(module):
            if (
                isinstance(node, cst.Attribute)
                and node.attr.value == "amp"
                and isinstance(node.value, cst.Name)
                and node.value.value == binding
                and "apex" in self.qualified_names(node.value)
                and not self._in_import(node)
            ):
                return True
        return False

    def _in_import(self, node: cst.CSTNode) -> bool:
        stmt = self.statement_of(node)
        return isinstance(stmt, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        )

    @staticmethod
    def _binding_used(binding: str, target: str, used: Dict[str, Set[str]], ignore_amp: bool = False) -> bool:
        for q in used.get(binding, ()):
            if q == target or q.startswith(target + "."):
                if ignore_amp and (q == "apex.amp" or q.startswith("apex.amp.")):
                    continue
                return True
        return False

    # --- removal ------------------------------------------------------------------------------

    def _remove(self, stmt: Any, imp: Any, alias: Any, target: str) -> None:
        name = get_full_name_for_node(alias.name) or ""
        if isinstance(imp, cst.ImportFrom):
            RemoveImportsVisitor.remove_unused_import(
                self.context, _module_name(imp) or "", name, alias.evaluated_alias
            )
        else:
            RemoveImportsVisitor.remove_unused_import(self.context, name, None, alias.evaluated_alias)
        self.removed.add(alias)
        self.report(imp, "APX101", f"unused import of {target} removed", fixed=True, severity="info")
        self._drop_global(imp, alias.evaluated_alias or name.split(".")[0])

    def _drop_global(self, imp: Any, binding: str) -> None:
        """``from apex import amp`` then ``global amp`` in one function: the declaration only
        served the import, so it goes with it (the name is no longer used anywhere)."""
        func = enclosing_function(self.parents, imp)
        if func is None:
            return
        for node in walk(func.body):
            if not isinstance(node, cst.Global) or binding not in {n.name.value for n in node.names}:
                continue
            if enclosing_function(self.parents, node) is not func:
                continue
            line = self.parents.get(node)
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
                continue
            rest = [n for n in node.names if n.name.value != binding]
            if rest:
                names = rest[:-1] + [rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
                self.narrowed_globals[line] = line.with_changes(body=[node.with_changes(names=names)])
                self.edits.replace(line, [self.narrowed_globals[line]])
            else:
                self.edits.replace(line, [])
                self.dropped_globals.append(line)

    def _report_dead_guard(self, stmt: Any, imp: Any, binding: str, target: str) -> None:
        """``try: from apex.parallel import DistributedDataParallel as ApexDDP / except
        ImportError: ApexDDP = None``: the module was removed from apex, so once the project
        runs without (an old) apex the ``except`` branch always wins, and the other rules do
        not touch a name the file also assigns.  Not silent: a TODO at the import."""
        if not is_removed_module(target):
            return
        block = self.parents.get(stmt)
        owner = self.parents.get(block) if block is not None else None
        if not isinstance(owner, cst.Try) or owner.body is not block:
            return
        for handler in owner.handlers:
            for node in walk(handler.body):
                if isinstance(node, (cst.Import, cst.ImportFrom)) and self._rebinds(node, binding):
                    self.todo(
                        imp,
                        "APX104",
                        f"`{target}` was removed from apex: without apex this import fails and the except "
                        f"branch's `{code_of(node)}` binds {binding}, so the file runs the path it has for no "
                        "apex; make that import the only one by hand (with what the file does on apex's path) "
                        "to leave apex",
                        severity="error",
                    )
                    return
                if (
                    isinstance(node, cst.Assign)
                    and any(code_of(t.target) == binding for t in node.targets)
                    and self.statement_of(node) not in owner.body.body
                ):
                    # (starts with a backtick: a message starting "apex.fp16_utils." is the
                    # FP16 rule's own TODO on a later run)
                    self.todo(
                        imp,
                        "APX104",
                        f"`{target}` was removed from apex: without apex this import fails and "
                        f"{binding} = {code_of(node.value)} (the except branch) from then on; "
                        f"rewrite or delete what the file does with {binding}, then this guard",
                        severity="error",
                    )
                    return

    def _drop_pyprof_switches(self, imp: Any, binding: str, target: str) -> bool:
        """Native target: an apex.pyprof import whose name only switches its annotations on
        goes with those lines (``_pyprof_calls``), with a warning; False where it stays."""
        if self.settings.target != "native" or not (target == "apex.pyprof" or target.startswith("apex.pyprof.")):
            return False
        scope = enclosing_function(self.parents, imp) or self.tree
        imports = [n for n in walk(scope) if isinstance(n, (cst.Import, cst.ImportFrom))]
        lines = annotation_switches(scope, self.parents, binding, imports)
        if not lines:
            return False
        for line in lines:
            self.edits.replace(line, [])
        self.pyprof_switches += lines
        self.report(imp, "APX104", PYPROF_REMOVED, fixed=True, severity="warning")
        return True

    def _report_moved_out(self, imp: Any, target: str) -> None:
        """A used name of a module that left apex before the amp removal (``apex.pyprof``):
        no rule rewrites it, so the import would stay without a word.  A TODO at the import
        says where it went and what torch has instead."""
        for module, message in _MOVED_OUT.items():
            if target == module or target.startswith(module + "."):
                self.todo(imp, "APX104", message, severity="error")
                return

    @staticmethod
    def _rebinds(node: Any, binding: str) -> bool:
        """Whether import statement ``node`` binds ``binding`` (``from torch.nn.parallel import
        DistributedDataParallel as DDP`` in the ``except`` of apex's)."""
        if isinstance(node.names, cst.ImportStar):
            return False
        for alias in node.names:
            name = get_full_name_for_node(alias.name) or ""
            bound = alias.evaluated_alias or (name if isinstance(node, cst.ImportFrom) else name.split(".")[0])
            if bound == binding:
                return True
        return False

    def _unusual_guard(self, stmt: Any) -> bool:
        """An import in a ``try`` this rule does not know how to simplify stays (reported once)."""
        block = self.parents.get(stmt)
        owner = self.parents.get(block) if block is not None else None
        if not isinstance(owner, cst.Try) or owner.body is not block:
            return False
        if owner.finalbody is None and all(self._catches_import_error(h) for h in owner.handlers):
            return False
        if owner.finalbody is None and owner.orelse is None and self._raises_only_in_apex_imports(owner):
            return False
        if owner not in self.reported_guards:
            self.reported_guards.add(owner)
            self.report(
                owner,
                "APX104",
                "apex import guard with an unusual shape (finally, or other exceptions) left as it is; "
                "simplify it by hand",
                severity="warning",
            )
        return True

    def _in_guard(self, stmt: Any) -> bool:
        """``stmt`` is in the body of a ``try`` whose handlers all catch ImportError."""
        block = self.parents.get(stmt)
        owner = self.parents.get(block) if block is not None else None
        return (
            isinstance(owner, cst.Try)
            and owner.body is block
            and owner.finalbody is None
            and all(self._catches_import_error(h) for h in owner.handlers)
        )

    def _kept_probe(self, stmt: Any) -> str:
        """Where another file still needs apex, when ``stmt`` is in the body of a ``try`` the
        plan keeps as an availability probe (``kept_probes``); empty otherwise."""
        plan = self.repo_plan()
        if plan is None or not plan.kept_probes:
            return ""
        block = self.parents.get(stmt)
        owner = self.parents.get(block) if block is not None else None
        if not isinstance(owner, cst.Try) or owner.body is not block or self.line_of(owner) not in plan.kept_probes:
            return ""
        return plan.apex_needed_at

    def _is_probe(self, stmt: Any) -> bool:
        """``def has_apex(): try: import apex; return True except ImportError: return False``,
        or with the ``return True`` after the ``try``: a handler that returns answers the
        question (keeping its ``return`` where the import cannot fail would answer "no")."""
        block = self.parents.get(stmt)
        owner = self.parents.get(block) if block is not None else None
        if not isinstance(owner, cst.Try) or enclosing_function(self.parents, owner) is None:
            return False
        blocks = [owner.body] + [h.body for h in owner.handlers]
        return any(isinstance(n, cst.Return) for b in blocks for s in b.body for n in walk(s))

    def _guards_work(self, stmt: Any) -> bool:
        """``stmt`` is in the body of a ``try`` with a ``return`` that guards work (see
        ``_guarded_work``): the import line goes alone, the ``try`` stays."""
        block = self.parents.get(stmt)
        owner = self.parents.get(block) if block is not None else None
        return (
            isinstance(owner, cst.Try)
            and owner.body is block
            and self._is_probe(stmt)
            and guards_work(owner, enclosing_function(self.parents, owner))
        )

    def _simplify_try(self, stmt: Any, imp_stmts: Set[cst.CSTNode]) -> bool:
        if isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.SimpleStatementSuite):
            return self._simplify_one_line_try(stmt)
        block = self.parents.get(stmt)
        owner = self.parents.get(block) if block is not None else None
        if not isinstance(owner, cst.Try) or owner.body is not block or self._guards_work(stmt):
            return False
        if owner in self.edits.replacements:
            return True
        body = list(owner.body.body)
        for line in body:
            for small in small_statements(line):
                if (
                    isinstance(small, cst.ImportFrom)
                    and isinstance(small.names, cst.ImportStar)
                    and _is_apex(_module_name(small))
                    and line not in self.dropped_stars
                ):
                    return True  # a star import from apex stays, and so does its guard
        apex_lines = [s for s in body if s in imp_stmts or s in self.dropped_stars]
        if any(not self._all_removed(s) for s in apex_lines):
            return True  # some apex name in the try is still used: leave the guard alone
        if any(s in self.edits.before for s in apex_lines):
            return True  # ``import apexcompat.amp`` goes in its place (apex.amp.x chains, shim)
        if owner.finalbody is not None or not (
            all(self._catches_import_error(h) for h in owner.handlers)
            or (owner.orelse is None and self._raises_only_in_apex_imports(owner))
        ):
            return True
        rest = [
            kept
            for s in body
            if s not in apex_lines and s not in self.dropped_globals
            for kept in self.simplified_guards.get(s, [self.narrowed_globals.get(s, s)])
        ]
        if any(isinstance(small, (cst.Import, cst.ImportFrom)) for s in rest for small in small_statements(s)):
            return True  # the guard still protects another import (amp_C, a package of its own)
        if any(self._nested_import_stays(s) for s in rest):
            return True  # an import that stays in an inner try (FARM's apex.parallel one) raises here too
        set_in_body = {
            code_of(t.target)
            for s in rest
            for small in small_statements(s)
            if isinstance(small, cst.Assign)
            for t in small.targets
        }
        # a class or function defined in the body is bound there too (``class X(_ApexX): ...``)
        set_in_body |= {s.name.value for s in rest if isinstance(s, (cst.ClassDef, cst.FunctionDef))}
        return self._replace_guard(owner, rest, set_in_body)

    def _simplify_one_line_try(self, owner: cst.Try) -> bool:
        """``try: from apex import amp`` on one line: the guard goes like a block one when
        the line held only apex imports, all removed, and the guard has no ``else``."""
        for small in cast(Any, owner.body).body:
            if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
                return False
            if any(alias not in self.removed for alias in small.names):
                return False
        if owner in self.edits.replacements:
            return True
        if owner.finalbody is not None or owner.orelse is not None:
            return False
        if not all(self._catches_import_error(h) for h in owner.handlers):
            return False
        return self._replace_guard(owner, [], set())

    def _replace_guard(self, owner: cst.Try, rest: List[Any], set_in_body: Set[str]) -> bool:
        """Replace the guard ``owner`` by what stays of it: ``rest`` (its body without the
        apex imports), then what its handlers do once the import cannot fail."""
        set_in_body = set_in_body | self._set_true_before(owner)
        keep: List[cst.BaseStatement] = list(rest)
        flag = self._flag_set_false_before(owner, rest)
        if flag is not None:
            # ``has_apex = False`` / ``try: ... has_apex = True``: one line with the value the try leaves
            earlier, line = flag
            keep.remove(line)
            self.edits.replace(earlier, lambda upd, line=line: [upd.with_changes(body=line.body)])
        for handler in owner.handlers:
            handler_body: Any = handler.body.body
            if not isinstance(handler.body, cst.IndentedBlock):
                handler_body = [cst.SimpleStatementLine([x]) for x in handler_body]
            elsewhere = _bound_outside(self.tree, handler)
            for s in handler_body:
                kept = self._handler_statement(s, set_in_body, elsewhere)
                if kept is not None:
                    keep.append(kept)
        if owner.orelse is not None:
            keep.extend(cast(Any, owner.orelse.body).body)
        keep = self._without_placeholder_passes(owner, keep)
        if keep:
            # blank lines that separated it from the import inside the try would open the block
            first_lines = list(cast(Any, keep[0]).leading_lines)
            while first_lines and first_lines[0].comment is None:
                first_lines.pop(0)
            keep[0] = keep[0].with_changes(leading_lines=first_lines)
        self.edits.replace(owner, lambda upd, keep=keep: [move_leading(upd, keep[0])] + keep[1:] if keep else [])
        self.simplified_guards[owner] = [move_leading(owner, keep[0])] + keep[1:] if keep else []
        if not keep:
            self._close_gap(owner)
            self.removed_trys.append(owner)
        self.report(
            owner,
            "APX103",
            "try/except ImportError around the apex import removed: native PyTorch is always available",
            fixed=True,
            severity="info",
        )
        return True

    def _depth(self, node: cst.CSTNode) -> int:
        depth = 0
        while node is not None:
            node = self.parents.get(node)
            depth += 1
        return depth

    def _without_placeholder_passes(self, owner: cst.Try, keep: List[Any]) -> List[Any]:
        """``keep`` without the bare ``pass`` lines that only held a block open (another rule
        leaves one, carrying its comment, where it emptied the try's body): once the try is
        gone they would stand in the enclosing block.  Their comments go on the next
        statement kept, or, where only passes are left, with the try's own leading lines
        (``_keep_neighbouring_comments``)."""
        lines: List[Any] = []
        kept: List[Any] = []
        for stmt in keep:
            if _bare_pass(stmt):
                lines += list(stmt.leading_lines)
                continue
            kept.append(stmt.with_changes(leading_lines=lines + list(stmt.leading_lines)) if lines else stmt)
            lines = []
        if kept and lines:
            return keep  # a comment after the last statement kept: the pass holding it stays
        if not kept:
            block = self.parents.get(owner)
            body: List[Any] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
            if not body or body[-1] is owner:
                return keep  # no statement after the try to carry the comments: they stay on the pass
            self.carried_from_trys[owner] = lines
        return kept

    def _nested_import_stays(self, stmt: Any) -> bool:
        """``stmt`` (a compound statement of a guard's body) runs an import this rule keeps:
        its ImportError would no longer be caught once the guard goes.  Imports in nested
        definitions run later, outside the guard."""
        if isinstance(stmt, cst.SimpleStatementLine):
            return False
        stack = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                if isinstance(node.names, cst.ImportStar) or any(a not in self.removed for a in node.names):
                    return True
                continue
            stack.extend(children(node))
        return False

    def _statement_before(self, owner: cst.Try) -> Any:
        block = self.parents.get(owner)
        body: List[Any] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        index = next((i for i, s in enumerate(body) if s is owner), 0)
        return body[index - 1] if index > 0 else None

    def _flag_set_false_before(self, owner: cst.Try, rest: List[Any]) -> Optional[Tuple[Any, Any]]:
        """``has_apex = False`` right before the ``try`` whose body, once its apex imports
        are gone, starts with ``has_apex = True``: (that earlier line, the body's line).  The
        try now always runs to the end, so the earlier line can take the body's value."""
        previous = self._statement_before(owner)
        if previous is None or previous in self.edits.replacements or not rest:
            return None
        earlier, later = _constant_flag(previous), _constant_flag(rest[0])
        return (previous, rest[0]) if earlier is not None and earlier == later else None

    def _set_true_before(self, owner: cst.Try) -> Set[str]:
        """``has_apex = True`` right before the ``try`` (whose handler sets it False): the
        flag already has its "available" value, the handler's line just goes."""
        previous = self._statement_before(owner)
        if not isinstance(previous, cst.SimpleStatementLine):
            return set()
        return {
            code_of(t.target)
            for small in previous.body
            if isinstance(small, cst.Assign) and code_of(small.value) == "True"
            for t in small.targets
        }

    def _all_removed(self, stmt: Any) -> bool:
        if stmt in self.dropped_stars:
            return True
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
                return False
            if any(alias not in self.removed for alias in small.names):
                return False
        return True

    def _raises_only_in_apex_imports(self, owner: cst.Try) -> bool:
        """Whether only the apex imports of ``owner``'s body can raise: every other statement
        sets a plain name to a literal (``HAS_APEX_PARALLEL = True``) or passes.  Once those
        imports go, its handlers never run, whatever they catch (FARM's ``except
        AttributeError`` around an apex.parallel import that raised it on old torch)."""
        for line in owner.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                return False
            for small in line.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and _is_apex(_module_name(small)):
                    continue
                if isinstance(small, cst.Pass):
                    continue
                if not (
                    isinstance(small, cst.Assign)
                    and all(isinstance(t.target, cst.Name) for t in small.targets)
                    and literal_value(small.value) is not ...
                ):
                    return False
        return True

    @staticmethod
    def _catches_import_error(handler: cst.ExceptHandler) -> bool:
        if handler.type is None:
            return True
        names = (
            [code_of(e.value) for e in handler.type.elements]
            if isinstance(handler.type, cst.Tuple)
            else [code_of(handler.type)]
        )
        return any(n.split(".")[-1] in _IMPORT_ERRORS for n in names)

    @staticmethod
    def _handler_statement(
        stmt: cst.BaseStatement, set_in_body: Set[str], elsewhere: Set[str]
    ) -> Optional[cst.BaseStatement]:
        """What a statement of the except branch becomes once the import cannot fail.  Its
        ``flag = False`` is the "available" ``flag = True`` only for a plain name nothing else
        binds; one bound elsewhere (``args.fp16`` from the command line, a name set from a
        config) keeps the value it has there: with apex installed the branch never ran."""
        if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) and stmt.name.value in set_in_body:
            # the fallback of a name the try binds (``X = apex...FusedLayerNorm`` there,
            # ``class X`` here): the try always runs now, so this definition never would
            return None
        if not isinstance(stmt, cst.SimpleStatementLine):
            return stmt  # a fallback implementation (if/def/class): keep it
        small = stmt.body[0] if len(stmt.body) == 1 else None
        if isinstance(small, (cst.Pass, cst.Raise)) or (
            isinstance(small, cst.Expr)
            and isinstance(small.value, cst.Call)
            and (_is_install_hint(small.value) or _ends_the_process(small.value))
        ):
            return None
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
            return None
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            name = code_of(small.targets[0].target)
            value = code_of(small.value)
            if name in set_in_body:
                return None
            if value == "False" and (name in elsewhere or not isinstance(small.targets[0].target, cst.Name)):
                return None
            if value == "False":
                return stmt.with_changes(body=[small.with_changes(value=cst.Name("True"))])
            if value == "None":
                return None
        return stmt

    # --- the shim -----------------------------------------------------------------------------

    def _to_shim(self, imp: Any, alias: Any, target: str, module: cst.Module) -> None:
        if isinstance(imp, cst.ImportFrom):
            base = _module_name(imp) or "apex"
            new_base = SHIM + base[len("apex") :]
            if len(cast(Any, imp.names)) == 1 or base == "apex.amp" or base.startswith("apex.amp."):
                self.replace_node(
                    imp, lambda upd, new_base=new_base: upd.with_changes(module=cst.parse_expression(new_base))
                )
            else:
                # `from apex import amp, optimizers`: amp moves to its own line
                stmt = self.statement_of(imp)
                line = cst.SimpleStatementLine(
                    [
                        cst.ImportFrom(
                            module=cast(Any, cst.parse_expression(new_base)),
                            names=[alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)],
                        )
                    ]
                )
                self.edits.insert_before(stmt, [line])
                self.replace_node(imp, lambda upd, alias=alias: self._drop_alias(upd, alias))
        else:
            name = get_full_name_for_node(alias.name) or "apex"
            new = SHIM + name[len("apex") :]
            if len(imp.names) == 1:
                self.replace_node(
                    imp,
                    lambda upd, new=new: upd.with_changes(
                        names=[upd.names[0].with_changes(name=cst.parse_expression(new))]
                    ),
                )
            else:
                stmt = self.statement_of(imp)
                self.edits.insert_before(
                    stmt,
                    [
                        cst.SimpleStatementLine(
                            [
                                cst.Import(
                                    names=[
                                        alias.with_changes(
                                            name=cst.parse_expression(new), comma=cst.MaybeSentinel.DEFAULT
                                        )
                                    ]
                                )
                            ]
                        )
                    ],
                )
                self.replace_node(imp, lambda upd, alias=alias: self._drop_alias(upd, alias))
            if alias.asname is None:
                self._rename_chains(module, "apex.amp")
        severity = "info" if self.settings.target == "shim" else "warning"
        self.report(
            imp, "APX102", f"{target} now comes from {SHIM}{target[len('apex') :]}", fixed=True, severity=severity
        )

    def _import_apex_amp_chain(self, imp: cst.Import, module: cst.Module) -> None:
        """``import apex`` used as ``apex.amp.x``: import ``apexcompat.amp`` next to it and
        rename those chains."""
        stmt = self.statement_of(imp)
        if stmt not in self.edits.before:
            self.edits.insert_before(
                stmt,
                [
                    cst.SimpleStatementLine(
                        [cst.Import(names=[cst.ImportAlias(cast(Any, cst.parse_expression("apexcompat.amp")))])]
                    )
                ],
            )
            self._rename_chains(module, "apex.amp")
            self.report(
                imp,
                "APX102",
                "apex.amp now comes from apexcompat.amp",
                fixed=True,
                severity="info" if self.settings.target == "shim" else "warning",
            )

    def _import_apex_without_amp(self, stmt: Any, imp: cst.Import, alias: cst.ImportAlias) -> None:
        """``import apex.amp`` whose ``apex.amp`` chains are gone while other ``apex.x`` names
        stay (a shim file's ``import apexcompat.amp``, read as apex.amp, once its amp code went
        native): ``import apex``, or nothing beside an ``import apex`` of the same block.
        Left as it was, it imported apex.amp, which apex no longer ships."""
        block = self.parents.get(stmt)
        siblings = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        plain = any(
            isinstance(small, cst.Import)
            and any(a.asname is None and get_full_name_for_node(a.name) == "apex" for a in small.names)
            for line in siblings
            if line is not stmt
            for small in small_statements(line)
        )
        if plain and len(imp.names) == 1 and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            self.edits.replace(stmt, [])
            self._close_gap(stmt)
        else:
            self.replace_node(alias, alias.with_changes(name=cst.Name("apex")))
        self.report(imp, "APX101", "unused import of apex.amp removed (apex itself is still used)", fixed=True,
                    severity="info")

    def _rename_chains(self, module: cst.Module, target: str) -> None:
        for node in walk(module):
            if (
                isinstance(node, cst.Attribute)
                and isinstance(node.value, cst.Name)
                and target in self.qualified_names(node)
                and not self._in_import(node)
            ):
                self.replace_node(node, cst.parse_expression(SHIM + "." + node.attr.value))

    @staticmethod
    def _drop_alias(upd, alias):
        names = [
            n
            for n in upd.names
            if not (code_of(n.name) == code_of(alias.name) and n.evaluated_alias == alias.evaluated_alias)
        ]
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return upd.with_changes(names=names)


#: the standard ways to ask whether a module is installed, given its name
_FIND_MODULE = {"find_spec", "find_loader"}


def _asks_for_apex(call: cst.Call) -> bool:
    """``is_apex_available()`` (a function named for apex, given nothing) or
    ``importlib.util.find_spec("apex")``: a question whose answer no longer matters."""
    callee = code_of(call.func).split(".")[-1]
    if not call.args:
        return "apex" in callee.lower()
    first = call.args[0].value
    return (
        callee in _FIND_MODULE
        and len(call.args) == 1
        and isinstance(first, cst.SimpleString)
        and _is_apex(str(first.evaluated_value))
    )


def _constant_flag(stmt: Any) -> Optional[str]:
    """The name a line like ``has_apex = False`` binds to a constant (True, False, None)."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and code_of(small.value) in ("True", "False", "None")
    ):
        return small.targets[0].target.value
    return None


def _without_opening_blanks(stmt: Any) -> Any:
    lines = list(stmt.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return stmt.with_changes(leading_lines=lines)


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
#: profiler annotations through apex.pyprof, imported only when asked for
PYPROF_ANNOTATIONS = """\
import torch


def profile_steps(model, batches, annotate):
    if annotate:
        from apex import pyprof

        pyprof.nvtx.init()
    with torch.autograd.profiler.emit_nvtx(enabled=annotate):
        for batch in batches:
            model(batch).sum().backward()
"""

#: the same, with apex.pyprof's module read as a value: its uses are not only switches
PYPROF_READ = PYPROF_ANNOTATIONS.replace("        pyprof.nvtx.init()\n", "        marker = pyprof.nvtx\n        marker.init()\n")
PYPROF_TODO = """\
        # TODO(apexcompat): `apex.pyprof` is no longer part of apex (NVIDIA moved it to its own
        #   PyProf repository, github.com/NVIDIA/PyProf, not the unrelated `pyprof` on PyPI):
        #   without it this import fails. It only annotates the profiler's NVTX ranges;
        #   natively, torch.autograd.profiler.emit_nvtx(record_shapes=True) marks each op with
        #   its input shapes: use that and delete this import with its pyprof calls
"""

#: apex's DDP with torch's under the same name as the fallback, picked by a flag
#: apex's DDP, or torch's class (imported above under its own name) assigned in the except
ASSIGNED_FALLBACK_GUARD = """\
from torch.nn.parallel import DistributedDataParallel

try:
    from apex.parallel import DistributedDataParallel as ApexDDP
except ImportError:
    ApexDDP = DistributedDataParallel
"""
TORCH_FALLBACK_GUARD = """\
try:
    from apex.parallel import DistributedDataParallel as Wrapper
    fused_allreduce = True
except ImportError:
    from torch.nn.parallel import DistributedDataParallel as Wrapper
    fused_allreduce = False
"""

EXAMPLES: List[Example] = [
    Example(
        "profiler-annotations-from-apex-pyprof-deleted-with-a-warning",
        before=PYPROF_ANNOTATIONS,
        after=PYPROF_ANNOTATIONS.replace(
            """\
    if annotate:
        from apex import pyprof

        pyprof.nvtx.init()
""",
            "",
        ),
        codes=("APX101", "APX104"),
    ),
    Example(
        "profiler-annotations-from-apex-pyprof-get-a-todo-on-the-shim",
        before=PYPROF_ANNOTATIONS,
        after=PYPROF_ANNOTATIONS.replace("        from apex import pyprof\n", PYPROF_TODO + "        from apex import pyprof\n"),
        codes=("APX104",),
        settings=Settings(target="shim"),
    ),
    Example(
        "apex-pyprof-read-as-a-value-gets-a-todo",
        before=PYPROF_READ,
        after=PYPROF_READ.replace("        from apex import pyprof\n", PYPROF_TODO + "        from apex import pyprof\n"),
        codes=("APX104",),
    ),
    Example(
        "apex-amp-imported-by-name-goes-to-the-shim-with-a-todo",
        before="""\
import importlib

import torch


class Trainer:
    def __init__(self, model, optimizer, fp16=False):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            try:
                self.amp = importlib.import_module("apex.amp")
            except ImportError:
                raise ImportError("Install NVIDIA APEX to use fp16 training!")
            self.model, self.optimizer = self.amp.initialize(self.model, self.optimizer, opt_level="O1")

    def backward(self, loss):
        if self.fp16:
            with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
""",
        after="""\
import importlib

import torch


class Trainer:
    def __init__(self, model, optimizer, fp16=False):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            try:
                # TODO(apexcompat): importlib.import_module("apex.amp") imports apex.amp by name at run
                #   time: it now imports apexcompat.amp (same API, apex no longer needed); for native
                #   PyTorch import it with `from apexcompat import amp`, use `amp` directly and run the
                #   tool again
                self.amp = importlib.import_module("apexcompat.amp")
            except ImportError:
                raise ImportError("Install NVIDIA APEX to use fp16 training!")
            self.model, self.optimizer = self.amp.initialize(self.model, self.optimizer, opt_level="O1")

    def backward(self, loss):
        if self.fp16:
            with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
""",
        codes=("APX107",),
    ),
    Example(
        "apex-amp-imported-by-name-shim-target",
        before="""\
import importlib

import torch


class Trainer:
    def __init__(self, model, optimizer, fp16=False):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            try:
                self.amp = importlib.import_module("apex.amp")
            except ImportError:
                raise ImportError("Install NVIDIA APEX to use fp16 training!")
            self.model, self.optimizer = self.amp.initialize(self.model, self.optimizer, opt_level="O1")

    def backward(self, loss):
        if self.fp16:
            with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
""",
        after="""\
import importlib

import torch


class Trainer:
    def __init__(self, model, optimizer, fp16=False):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            try:
                self.amp = importlib.import_module("apexcompat.amp")
            except ImportError:
                raise ImportError("Install NVIDIA APEX to use fp16 training!")
            self.model, self.optimizer = self.amp.initialize(self.model, self.optimizer, opt_level="O1")

    def backward(self, loss):
        if self.fp16:
            with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
""",
        codes=("APX107",),
        settings=Settings(target="shim"),
    ),
    Example(
        "other-apex-modules-imported-by-name-get-a-todo",
        before="""\
from importlib import import_module


def optional_apex_parts(opt_level):
    parallel = import_module("apex.parallel")
    amp = import_module("apex.amp")
    return parallel, amp
""",
        after="""\
from importlib import import_module


def optional_apex_parts(opt_level):
    # TODO(apexcompat): import_module("apex.parallel") imports apex by name at run time: the
    #   tool follows import statements only; import what is used from apex with import
    #   statements (the tool then replaces them) or migrate by hand
    parallel = import_module("apex.parallel")
    # TODO(apexcompat): import_module("apex.amp") imports apex.amp by name at run time: it
    #   now imports apexcompat.amp (same API, apex no longer needed); for native PyTorch
    #   import it with `from apexcompat import amp`, use `amp` directly and run the tool
    #   again
    amp = import_module("apexcompat.amp")
    return parallel, amp
""",
        codes=("APX107",),
    ),
    Example(
        "try-flag-stays-true",
        before="""\
import torch

try:
    from apex import amp
    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False


def fit(model, optimizer, batches, use_amp):
    if use_amp and APEX_AVAILABLE:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch

APEX_AVAILABLE = True


def fit(model, optimizer, batches, use_amp):
    amp_enabled = bool(use_amp and APEX_AVAILABLE)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp_enabled):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the flag set True before the try already has its "available" value: the handler's
        # `= False` goes (it used to come back as a second `has_apex = True`)
        "flag-set-before-try",
        before="""\
import torch

# apex
has_apex = True
try:
    from apex import amp, parallel
except ImportError:
    has_apex = False


def wrap(model):
    return model
""",
        after="""\
import torch

# apex
has_apex = True


def wrap(model):
    return model
""",
        codes=("APX101", "APX101", "APX103"),
    ),
    Example(
        # the guard also protects another import (here apex's still-shipped kernels): only the
        # apex import goes, the try stays
        "guard-protecting-another-import",
        before="""\
def has_kernels():
    try:
        import apex
        import amp_C

        fused = True
    except ImportError:
        fused = False
    return fused
""",
        after="""\
def has_kernels():
    try:
        import amp_C

        fused = True
    except ImportError:
        fused = False
    return fused
""",
        codes=("APX101",),
    ),
    Example(
        # FARM's optimization module: an inner guard that catches only AttributeError (an
        # apex.parallel import raised it on old torch) around an apex import that is no longer
        # used; the rest of its body only sets a flag, so once the import goes nothing in it can
        # raise and both guards go, each flag with its "available" value (it was left as an
        # unusual guard, and with it the apex import: the file never left apex)
        "inner-guard-catching-attribute-error",
        before="""\
try:
    from apex import amp
    try:
        from apex.parallel import convert_syncbn_model
        HAS_APEX_PARALLEL = True
    except AttributeError:
        HAS_APEX_PARALLEL = False
    HAS_AMP = True
except ImportError:
    HAS_AMP = False
    HAS_APEX_PARALLEL = False
""",
        after="""\
HAS_APEX_PARALLEL = True
HAS_AMP = True
""",
        codes=("APX101", "APX103"),
    ),
    Example(
        # the same guard whose body does more than set a flag: what it catches may come from
        # that code too, so the handler is not dead and the guard stays, reported
        "attribute-error-guard-with-work-left",
        before="""\
import torch

try:
    from apex import amp
    BACKEND = torch.backends.cudnn.version()
except AttributeError:
    BACKEND = None
""",
        codes=("APX104",),
    ),
    Example(
        # the same in an inner try that catches only AttributeError (FARM's apex.parallel
        # probe): the outer guard still catches that import's ImportError, so it stays (it was
        # removed, and the file failed on import wherever amp_C is missing)
        "guard-protecting-an-import-of-an-inner-try",
        before="""\
try:
    from apex import amp
    try:
        import amp_C
        HAS_FUSED = True
    except AttributeError:
        HAS_FUSED = False
    HAS_APEX = True
except ImportError:
    HAS_FUSED = False
    HAS_APEX = False
""",
        after="""\
try:
    try:
        import amp_C
        HAS_FUSED = True
    except AttributeError:
        HAS_FUSED = False
    HAS_APEX = True
except ImportError:
    HAS_FUSED = False
    HAS_APEX = False
""",
        codes=("APX101",),
    ),
    Example(
        # a file kept on the shim keeps ``import apex`` for other apex names (``apex.__version__``, swav's apex.parallel calls) beside the new
        # ``import apexcompat.amp``; a second run reads that import as ``import apex.amp``, which
        # binds ``apex`` too: it goes back to apexcompat.amp alone (it used to be kept, with
        # one more ``import apexcompat.amp`` for the chains of ``import apex``: swav's main_swav.py)
        "import-apex-kept-beside-the-shim",
        before="""\
import apex

from checkpoints import restart


def main(model, optimizer, loader):
    group = apex.__version__
    model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1")
    restart("ckpt", amp=apex.amp)
    for x in loader:
        loss = model(x).sum()
        with apex.amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    return group
""",
        after="""\
import apexcompat.amp
import apex

from checkpoints import restart


def main(model, optimizer, loader):
    group = apex.__version__
    model, optimizer = apexcompat.amp.initialize(model, optimizer, opt_level="O1")
    # TODO(apexcompat): apex.amp is passed on as a value here; its uses cannot be followed;
    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    restart("ckpt", amp=apexcompat.amp)
    for x in loader:
        loss = model(x).sum()
        with apexcompat.amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    return group
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # `import apex` at module level and again inside a function, both read as
        # `apex.amp.x`: a file kept on the shim gets `import apexcompat.amp` beside each, and
        # a second run, which reads both as `import apex.amp`, maps each back (before: only
        # the first, and the function's became `import apex.amp`: OpenNMT-py's optimizers.py)
        "import-apex-in-a-function-too-kept-beside-the-shim",
        before="""\
try:
    import apex
except ImportError:
    apex = None


def build(model, optimizer):
    try:
        import apex
    except ImportError:
        raise ImportError("needs apex")
    print("apex", apex.__version__)
    return apex.amp.initialize(model, optimizer, opt_level="O1")


def backward(loss, optimizer):
    with apex.amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()


HOOKS = {"backward": backward}
""",
        after="""\
try:
    import apexcompat.amp
    import apex
except ImportError:
    apex = None


def build(model, optimizer):
    try:
        import apexcompat.amp
        import apex
    except ImportError:
        raise ImportError("needs apex")
    print("apex", apex.__version__)
    # TODO(apexcompat): amp.initialize is used inside an expression; rewrite it as a
    #   statement first; this file keeps apex.amp semantics through apexcompat.amp, migrate
    #   it by hand
    return apexcompat.amp.initialize(model, optimizer, opt_level="O1")


def backward(loss, optimizer):
    with apexcompat.amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()


HOOKS = {"backward": backward}
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        "try-reraise-removed",
        before="""\
try:
    from apex import amp
    from apex.parallel import DistributedDataParallel as DDP
except ImportError:
    raise ImportError("Please install apex from https://www.github.com/nvidia/apex to run this example.")


def build(model):
    return model
""",
        after="""\
def build(model):
    return model
""",
        codes=("APX101", "APX101", "APX103"),
    ),
    Example(
        "bare-except-pass",
        before="""\
try:
    from apex import amp
except:
    pass

import torch
""",
        after="""\
import torch
""",
        codes=("APX101", "APX103"),
    ),
    Example(
        # the guard on one line each (bonito): it goes whole, not as ``try: pass``; a flag the
        # handler sets keeps its "available" value as in a block guard
        "one-line-guard",
        before="""\
import torch
try: from apex import amp
except ImportError: pass

HAS_APEX = True
try: from apex.parallel import DistributedDataParallel
except ImportError: HAS_APEX = False


def build(model):
    return model
""",
        after="""\
import torch

HAS_APEX = True


def build(model):
    return model
""",
        codes=("APX101", "APX101", "APX103", "APX103"),
    ),
    Example(
        # a message in the except branch, at any log level, only says that apex is missing:
        # it goes with the try (kept, it would log an error on every import)
        "except-logs-install-hint",
        before="""\
import logging

logger = logging.getLogger(__name__)
try:
    from apex import amp
except ImportError:
    logger.exception("Please install apex to use mixed precision.")
    logging.error("apex is missing")


def build(model):
    return model
""",
        after="""\
import logging

logger = logging.getLogger(__name__)


def build(model):
    return model
""",
        codes=("APX101", "APX103"),
    ),
    Example(
        # sockeye's launcher: the install hint is logged, then the process exits; the exit ran
        # only where the import failed, so it goes with the try (kept, every run would end
        # there: the apex branch exited with status 1 before training)
        "except-logs-install-hint-and-exits",
        before="""\
import logging
import sys

logger = logging.getLogger(__name__)


def build(args, model):
    if args.apex_amp:
        try:
            import apex.amp
        except ImportError:
            logger.error("Cannot import NVIDIA Apex AMP. Please install Apex.")
            sys.exit(1)
    return model
""",
        after="""\
import logging
import sys

logger = logging.getLogger(__name__)


def build(args, model):
    return model
""",
        codes=("APX101", "APX103"),
    ),
    Example(
        # the try binds the name to apex's fused layer norm (now torch's), the except defines
        # a fallback class of the same name: the try always runs now, so the class goes with
        # the handler (kept, it would silently replace torch's LayerNorm, the module apex
        # gave, by this hand-written one, which autocast runs in float16)
        "fallback-class-of-a-name-the-try-binds-dropped",
        before="""\
import torch
from torch import nn

try:
    import apex.normalization

    NormLayer = apex.normalization.FusedLayerNorm
except ImportError:
    print("apex not found: using the layer norm written here")

    class NormLayer(nn.Module):
        def __init__(self, size, eps=1e-12):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(size))
            self.bias = nn.Parameter(torch.zeros(size))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            var = (x - mean).pow(2).mean(-1, keepdim=True)
            return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


def block(size):
    return nn.Sequential(nn.Linear(size, size), NormLayer(size, eps=1e-12))
""",
        after="""\
import torch
from torch import nn

NormLayer = nn.LayerNorm


def block(size):
    return nn.Sequential(nn.Linear(size, size), NormLayer(size, eps=1e-12))
""",
        codes=("APX101", "APX103", "APX804"),
    ),
    Example(
        # apex.fp16_utils was removed from apex and its names are a known list: the other
        # rules rewrite what the file uses (to_python_float(t) -> t.item()), so the star
        # import, and with it the guard, goes
        "guarded-fp16-utils-star-resolved",
        before="""\
import torch

try:
    from apex.fp16_utils import *
    from apex import amp
except ImportError:
    raise ImportError("Please install apex")


def train(model, optimizer, x):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    loss = model(x).sum()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    return to_python_float(loss.data)
""",
        after="""\
import torch


def train(model, optimizer, x):
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.data.item()
""",
        codes=("APX101", "APX101", "APX103", "APX201", "APX209", "APX301", "APX311", "APX707"),
    ),
    Example(
        # a name from the star import that has no rewrite keeps the import, with a TODO
        # naming what the file still takes from it
        "star-import-still-used-todo",
        before="""\
import torch

try:
    from apex.fp16_utils import *
except ImportError:
    raise ImportError("Please install apex")


def build(model, half):
    if half:
        convert_module(model, torch.half)
    return model
""",
        after="""\
import torch

try:
    # TODO(apexcompat): `from apex.fp16_utils import *` kept: this file still uses
    #   convert_module from it, and apex.fp16_utils was removed from apex; replace those
    #   names, then delete the import
    from apex.fp16_utils import *
except ImportError:
    raise ImportError("Please install apex")


def build(model, half):
    if half:
        convert_module(model, torch.half)
    return model
""",
        codes=("APX104",),
    ),
    Example(
        # a module removed from apex, guarded with a None fallback: once apex is gone the
        # except branch always wins; the other rules leave a name the file assigns alone,
        # so the import is reported as manual work (a TODO, never silent)
        "removed-module-none-fallback-reported",
        before="""\
try:
    from apex.parallel import DistributedDataParallel as ApexDDP
except ImportError:
    ApexDDP = None


def unwrap(model):
    if ApexDDP is not None and isinstance(model, ApexDDP):
        return model.module
    return model
""",
        after="""\
try:
    # TODO(apexcompat): `apex.parallel.DistributedDataParallel` was removed from apex:
    #   without apex this import fails and ApexDDP = None (the except branch) from then on;
    #   rewrite or delete what the file does with ApexDDP, then this guard
    from apex.parallel import DistributedDataParallel as ApexDDP
except ImportError:
    ApexDDP = None


def unwrap(model):
    if ApexDDP is not None and isinstance(model, ApexDDP):
        return model.module
    return model
""",
        codes=("APX104",),
    ),
    Example(
        # the same guard, each call in a branch of `if flag:`: the apex run took the import, so
        # the call in the body is apex's (rewritten as one) and the else branch never ran; the
        # apex import goes, the flag keeps True and the torch import stays for the dead branch
        "torch-fallback-guard-whose-flag-picks-each-call-goes-native",
        before="import torch\n\n" + TORCH_FALLBACK_GUARD + """

def wrap(net, local_rank):
    if fused_allreduce:
        net = Wrapper(net, delay_allreduce=True)
    else:
        net = Wrapper(net, device_ids=[local_rank])
    return net
""",
        after="""\
import torch

fused_allreduce = True
from torch.nn.parallel import DistributedDataParallel as Wrapper


def wrap(net, local_rank):
    if fused_allreduce:
        net = torch.nn.parallel.DistributedDataParallel(
            net,
            device_ids=[local_rank],
            output_device=local_rank,
            broadcast_buffers=False,
        )
    else:
        net = Wrapper(net, device_ids=[local_rank])
    return net
""",
        codes=("APX101", "APX103", "APX601"),
    ),
    Example(
        # `if args.fp16:` emptied by the migration (its guarded apex import and its initialize
        # gone) goes, and the comments above it stay on the next statement: vokenization's
        # run_glue.py lost its commented-out checkpoint loading there
        "comments-above-an-emptied-fp16-if-stay",
        before="""\
import torch


def train(args, model, optimizer, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    # Check if saved optimizer states exist
    #if os.path.isfile("optimizer.pt"):
        #optimizer.load_state_dict(torch.load("optimizer.pt"))

    if args.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("Please install apex")
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)

    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    # Check if saved optimizer states exist
    #if os.path.isfile("optimizer.pt"):
        #optimizer.load_state_dict(torch.load("optimizer.pt"))

    use_amp = bool(args.fp16 and args.fp16_opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # apex's DDP imported in one branch of an `if`, torch's under the same name in the
        # other (Hugging Face's distillation Distiller): once the call on apex's branch is
        # torch's, every read left follows the other branch's own import, so apex's import
        # goes (scope analysis gave those reads to both imports and kept it, unreported)
        "ddp-imported-per-branch-with-its-torch-twin-goes-native",
        before="""\
import torch.nn as nn


def wrap(student, fp16, local_rank):
    if fp16:
        from apex.parallel import DistributedDataParallel

        student = DistributedDataParallel(student)
    else:
        from torch.nn.parallel import DistributedDataParallel

        student = DistributedDataParallel(student, device_ids=[local_rank], find_unused_parameters=True)
    return student
""",
        after="""\
import torch.nn as nn


def wrap(student, fp16, local_rank):
    if fp16:
        student = nn.parallel.DistributedDataParallel(
            student,
            device_ids=[local_rank],
            output_device=local_rank,
            broadcast_buffers=False,
        )
    else:
        from torch.nn.parallel import DistributedDataParallel

        student = DistributedDataParallel(student, device_ids=[local_rank], find_unused_parameters=True)
    return student
""",
        codes=("APX101", "APX601"),
    ),
    Example(
        # apex's DDP behind a guard whose except branch imports torch's under the same name,
        # the class chosen by the guard's flag: the calls cannot tell which class they get,
        # so the guard stays, with a TODO saying why the file keeps apex (it said nothing)
        "removed-module-with-a-torch-import-fallback-reported",
        before=TORCH_FALLBACK_GUARD + """

def wrap(net, rank):
    if fused_allreduce:
        return Wrapper(net, delay_allreduce=True)
    return Wrapper(net, device_ids=[rank])
""",
        after="""\
try:
    # TODO(apexcompat): `apex.parallel.DistributedDataParallel` was removed from apex:
    #   without apex this import fails and the except branch's `from torch.nn.parallel
    #   import DistributedDataParallel as Wrapper` binds Wrapper, so the file runs the path
    #   it has for no apex; make that import the only one by hand (with what the file does
    #   on apex's path) to leave apex
    from apex.parallel import DistributedDataParallel as Wrapper
    fused_allreduce = True
except ImportError:
    from torch.nn.parallel import DistributedDataParallel as Wrapper
    fused_allreduce = False


def wrap(net, rank):
    if fused_allreduce:
        return Wrapper(net, delay_allreduce=True)
    return Wrapper(net, device_ids=[rank])
""",
        codes=("APX104",),
    ),
    Example(
        # apex's DDP behind a guard whose except branch names torch's class (imported above
        # under its own name), read only as a class isinstance tests against: once apex is gone
        # nothing builds apex's class, so the apex import goes and the fallback binds the name
        "ddp-fallback-read-only-by-isinstance-goes-native",
        before=ASSIGNED_FALLBACK_GUARD + """

def unwrapped(net):
    if isinstance(net, (DistributedDataParallel, ApexDDP)):
        return net.module
    return net
""",
        after="""\
from torch.nn.parallel import DistributedDataParallel

ApexDDP = DistributedDataParallel


def unwrapped(net):
    if isinstance(net, (DistributedDataParallel, ApexDDP)):
        return net.module
    return net
""",
        codes=("APX101", "APX103"),
    ),
    Example(
        # the same guard, the name also called: which class that call builds is the guard's
        # choice, so the guard stays with its TODO
        "ddp-fallback-also-called-keeps-the-guard",
        before=ASSIGNED_FALLBACK_GUARD + """

def wrap(net):
    if isinstance(net, ApexDDP):
        return net
    return ApexDDP(net)
""",
        after=ASSIGNED_FALLBACK_GUARD.replace(
            "try:\n",
            """try:
    # TODO(apexcompat): `apex.parallel.DistributedDataParallel` was removed from apex:
    #   without apex this import fails and ApexDDP = DistributedDataParallel (the except
    #   branch) from then on; rewrite or delete what the file does with ApexDDP, then this
    #   guard
""",
        ) + """

def wrap(net):
    if isinstance(net, ApexDDP):
        return net
    return ApexDDP(net)
""",
        codes=("APX104",),
    ),
    Example(
        # apex's DDP behind an import guard whose fallback is None: the apex run always took
        # the import, and every read here uses the class (a call, isinstance), none tests it
        # against None; torch's DDP is always there, so the uses are rewritten and the guard
        # goes (a read that tests for None keeps the guard: the example above)
        "guarded-ddp-with-a-none-fallback",
        before="""\
import torch

try:
    from apex.parallel import DistributedDataParallel as DDP
except ImportError:
    DDP = None


class Runner:
    def __init__(self, net, local_rank):
        self.local_rank = local_rank
        torch.cuda.set_device(local_rank)
        self.net = DDP(net.cuda())

    def bare(self):
        return self.net.module if isinstance(self.net, DDP) else self.net
""",
        after="""\
import torch


class Runner:
    def __init__(self, net, local_rank):
        self.local_rank = local_rank
        torch.cuda.set_device(local_rank)
        self.net = torch.nn.parallel.DistributedDataParallel(
            net.cuda(),
            device_ids=[local_rank],
            output_device=local_rank,
            broadcast_buffers=False,
        )

    def bare(self):
        return self.net.module if isinstance(self.net, torch.nn.parallel.DistributedDataParallel) else self.net
""",
        codes=("APX101", "APX103", "APX601"),
    ),
    Example(
        # `import apex` as the availability check of a function's amp switch: the same guard
        # as at module level, so the flag keeps its "available" value (left alone, it would
        # turn amp off for good once apex is uninstalled)
        "function-guard-flag-stays-true",
        before="""\
import torch


def fit(model, optimizer, x):
    try:
        import apex

        use_amp = True
    except ImportError:
        use_amp = False
    if use_amp:
        model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1")
    loss = model(x).sum()
    if use_amp:
        with apex.amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, x):
    use_amp = True
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        loss = model(x).sum()
    if use_amp:
        scaler.scale(loss).backward()
    else:
        loss.backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "fallback-implementation-kept",
        before="""\
try:
    import apex
    from apex import amp
except ImportError:
    print("apex not found, using native layer norm")
    from torch.nn import LayerNorm
""",
        after="""\
from torch.nn import LayerNorm
""",
        codes=("APX101", "APX101", "APX103"),
    ),
    Example(
        "dead-import-removed",
        before="""\
import os

import torch
from apex import amp

BATCH = int(os.environ.get("BATCH", 32))
""",
        after="""\
import os

import torch

BATCH = int(os.environ.get("BATCH", 32))
""",
        codes=("APX101",),
    ),
    Example(
        # what stays of the lines above a removed import: blank lines (the import groups keep
        # their separation) and comments about something else (a section comment, a
        # commented-out alternative); the comment block directly above it goes only when it
        # names apex (it introduced the import)
        "comments-above-removed-imports",
        before="""\
import numpy as np

import apex
import torch
# third-party
#from torch.nn.parallel import DistributedDataParallel as DDP
from apex.parallel import Reducer
# mixed precision from NVIDIA apex
from apex import amp

x = torch.zeros(2)
""",
        after="""\
import numpy as np

import torch
# third-party
#from torch.nn.parallel import DistributedDataParallel as DDP

x = torch.zeros(2)
""",
        codes=("APX101", "APX101", "APX101"),
    ),
    Example(
        "shim-target-keeps-code",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
""",
        after="""\
import torch
from apexcompat import amp


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
""",
        codes=("APX102",),
        settings=Settings(target="shim"),
    ),
    Example(
        "shim-target-import-apex-chains",
        before="""\
import apex
import torch


def main(model, optimizer, x):
    model, optimizer = apex.amp.initialize(model, optimizer)
    loss = model(x).sum()
    with apex.amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    return apex.amp.state_dict()
""",
        after="""\
import apexcompat.amp
import torch


def main(model, optimizer, x):
    model, optimizer = apexcompat.amp.initialize(model, optimizer)
    loss = model(x).sum()
    with apexcompat.amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    return apexcompat.amp.state_dict()
""",
        codes=("APX101", "APX102"),
        settings=Settings(target="shim"),
    ),
    Example(
        # STEP (sweep13): the guard's handler turns the command-line switch off when apex is
        # missing; with apex installed it never ran, so the switch keeps the user's value (it
        # used to become `args.fp16 = True`: mixed precision forced on at the default flags)
        "guard-handler-turning-an-option-off-goes-without-forcing-it-on",
        before="""\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

try:
    from apex import amp
except ImportError:
    print("no apex")
    args.fp16 = False


def train(model, optimizer, batches):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as s:
                s.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()


def train(model, optimizer, batches):
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # `apex.amp.x` chains in a guard: `import apexcompat.amp` takes the import's place and
        # the guard stays (simplifying it would drop the new import and the renamed chains)
        "shim-target-guard-with-apex-amp-chain",
        before="""\
import torch


try:
    import apex

    apex.amp.register_float_function(torch, "sigmoid")
    use_amp = True
except ImportError:
    use_amp = False
""",
        after="""\
import torch


try:
    import apexcompat.amp

    apexcompat.amp.register_float_function(torch, "sigmoid")
    use_amp = True
except ImportError:
    use_amp = False
""",
        codes=("APX101", "APX102"),
        settings=Settings(target="shim"),
    ),
    Example(
        "shim-target-from-apex-amp-import",
        before="""\
from apex.amp import initialize, scale_loss


def train(model, optimizer, batches):
    model, optimizer = initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
from apexcompat.amp import initialize, scale_loss


def train(model, optimizer, batches):
    model, optimizer = initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        codes=("APX102", "APX102"),
        settings=Settings(target="shim"),
    ),
    Example(
        # issue 9: a class defined in the guard's body crashed this rule (its body is a block)
        "guard-defining-a-subclass",
        before="""\
import torch

try:
    from apex.normalization import FusedLayerNorm as _FusedLayerNorm

    class FusedLayerNorm(_FusedLayerNorm):
        def forward(self, x):
            return super().forward(x)

    has_fused = True
except ImportError:
    FusedLayerNorm = torch.nn.LayerNorm
    has_fused = False
""",
        after="""\
import torch

class FusedLayerNorm(torch.nn.LayerNorm):
    def forward(self, x):
        return super().forward(x)

has_fused = True
""",
        codes=("APX101", "APX103", "APX804"),
    ),
    Example(
        # the flag's first line takes the value the try leaves, rather than a second line under it
        "availability-flag-cleared-before-its-try-becomes-one-line",
        before="""\
import torch

fused_ok = False
try:
    from apex import amp
    fused_ok = True
except ImportError:
    pass


def backend():
    return "mixed" if fused_ok else "fp32"
""",
        after="""\
import torch

fused_ok = True


def backend():
    return "mixed" if fused_ok else "fp32"
""",
        codes=("APX101", "APX103"),
    ),
    Example(
        # asking whether apex is installed does nothing else: the question goes with the import
        "if-that-only-imported-apex-after-asking-for-it-goes",
        before="""\
import importlib.util

import torch
from .env import apex_installed

if apex_installed():
    from apex import amp

if importlib.util.find_spec("apex"):
    from apex import amp


def double(x):
    return x * 2
""",
        after="""\
import importlib.util

import torch
from .env import apex_installed


def double(x):
    return x * 2
""",
        codes=("APX101",),
    ),
    Example(
        # the ``if`` keeps the shim import that takes the place of its ``import apex``
        "if-whose-apex-import-becomes-the-shim-import-stays",
        before="""\
from .flags import USE_APEX

if USE_APEX:
    import apex


def load(state, kind):
    if kind == "apex":
        apex.amp.load_state_dict(state)
""",
        after="""\
from .flags import USE_APEX

if USE_APEX:
    import apexcompat.amp


def load(state, kind):
    if kind == "apex":
        # TODO(apexcompat): apex.amp.load_state_dict(state) needs the GradScaler that replaces
        #   amp.initialize, which is created in another file: pass that scaler here and call
        #   `scaler.load_state_dict(state)` instead (a checkpoint apex wrote holds
        #   {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s, _growth_tracker=n
        #   into scaler.state_dict() and load that). apexcompat.amp's state is set up only by
        #   its own amp.initialize, so this line fails once that file is migrated
        apexcompat.amp.load_state_dict(state)
""",
        codes=("APX101", "APX102", "APX403"),
    ),
    Example(
        # the try guards work (vokenization's xmatching/main.py) and its handler's bare
        # return gives up on training, an answer nobody reads: with apex installed the import
        # never raised, so it goes alone and the try stays
        "apex-import-in-a-try-guarding-work-removed-the-try-kept",
        before="""\
import torch


def train(args, model, optimizer, loader):
    if args.fp16:
        try:
            from apex import amp
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            model = torch.nn.DataParallel(model)
        except Exception as e:
            print(e)
            return
    for x in loader:
        loss = model(x)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    if args.fp16:
        try:
            model = torch.nn.DataParallel(model)
        except Exception as e:
            print(e)
            return
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x)
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the same try in a function that returns a value: which path ran reaches the caller
        # (None, or the model), so the import is an availability probe
        "apex-import-in-a-try-of-a-function-returning-a-value-left",
        before="""\
import torch


def train(args, model, optimizer, loader):
    if args.fp16:
        try:
            from apex import amp
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            model = torch.nn.DataParallel(model)
        except Exception as e:
            print(e)
            return
    for x in loader:
        loss = model(x)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
    return model
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    if args.fp16:
        try:
            from apex import amp
            model = torch.nn.DataParallel(model)
        except Exception as e:
            print(e)
            return
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x)
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
    return model
""",
        codes=("APX105", "APX201", "APX209", "APX301", "APX311"),
    ),
]

#: a module asking whether apex is installed, only to set its flag
PROBING_CONFIG = '''\
# file: pkg/config.py
import warnings


class Config:
    def __init__(self):
        self.fused = False

    def enable_all(self):
        try:
            from apex.normalization import FusedLayerNorm as ApexLN  # noqa

            apex_avail = True
        except ImportError:
            apex_avail = False
            warnings.warn("apex is not installed")
        self.fused = apex_avail
'''

# repository examples (several files, ``# file: NAME``): an import other files take
EXAMPLES += [
    # TextBrewer's shape (sweep17): utils.py imports apex.amp behind its availability flag and
    # uses it nowhere itself; the distiller takes it with `from .utils import *` and calls
    # amp.initialize / amp.scale_loss.  Removing the "unused" import left the distiller a name
    # that no longer exists (NameError on its fp16 path): the import stays, on the shim (its
    # guard too: apexcompat is always there), and says which files use it
    Example(
        "apex-amp-a-star-import-takes-from-its-module-stays-on-the-shim",
        before="""\
# file: pkg/utils.py
import torch

has_apex = True
try:
    from apex import amp
except ImportError:
    has_apex = False


def detach(x):
    return x.detach()
# file: pkg/distiller.py
from .utils import *


class Distiller:
    def __init__(self, fp16):
        self.fp16 = fp16

    def train(self, model, optimizer, batches):
        if self.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in batches:
            loss = model(x).sum()
            if self.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
""",
        after="""\
# file: pkg/utils.py
import torch

has_apex = True
try:
    # TODO(apexcompat): apex.amp (as amp) is taken from this module by other files of the
    #   repository (pkg/distiller.py), which use it there: it stays, through apexcompat.amp,
    #   and they keep apex.amp semantics with it; migrate them by hand, then delete this
    #   import
    from apexcompat import amp
except ImportError:
    has_apex = False


def detach(x):
    return x.detach()
# file: pkg/distiller.py
from .utils import *


class Distiller:
    def __init__(self, fp16):
        self.fp16 = fp16

    def train(self, model, optimizer, batches):
        if self.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in batches:
            loss = model(x).sum()
            if self.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
""",
        codes=("APX102", "APX270"),
    ),
    # ColossalAI's shape (sweep22): shard_config.py imports FusedLayerNorm only to ask whether
    # apex is installed, and its flag picks layers.py's apex-only kernel (FastLayerNorm, no
    # torch equivalent: kept).  Folded to "available", a machine without apex would take the
    # apex path and crash there: the probe stays while another file still needs apex
    Example(
        "availability-flag-stays-while-another-file-needs-apex",
        before=PROBING_CONFIG + """\
# file: pkg/layers.py
from apex.contrib.layer_norm.layer_norm import FastLayerNorm


def make_norm(size, fused):
    return FastLayerNorm(size) if fused else None
""",
        codes=("APX105", "APX809"),
    ),
    # ... and where nothing needs apex any more, the flag takes its "available" value
    Example(
        "availability-flag-folds-where-no-file-needs-apex",
        before=PROBING_CONFIG + """\
# file: pkg/layers.py
from apex.normalization import FusedLayerNorm


def make_norm(size, fused):
    return FusedLayerNorm(size) if fused else None
""",
        after="""\
# file: pkg/config.py
import warnings


class Config:
    def __init__(self):
        self.fused = False

    def enable_all(self):
        apex_avail = True
        self.fused = apex_avail
# file: pkg/layers.py
import torch


def make_norm(size, fused):
    return torch.nn.LayerNorm(size) if fused else None
""",
        codes=("APX101", "APX103", "APX804"),
    ),
    # ... and the same taken by name (`from .utils import amp`) and as an attribute of the
    # module (`utils.amp`): an import error at start-up, or a NameError, before
    Example(
        "apex-amp-imported-by-name-or-read-off-its-module-stays-on-the-shim",
        before="""\
# file: utils.py
from apex import amp
# file: train.py
from utils import amp


def step(loss, optimizer):
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
# file: evaluate.py
import utils


def build(model):
    return utils.amp.initialize(model, opt_level="O1")
""",
        after="""\
# file: utils.py
# TODO(apexcompat): apex.amp (as amp) is taken from this module by other files of the
#   repository (evaluate.py, train.py), which use it there: it stays, through
#   apexcompat.amp, and they keep apex.amp semantics with it; migrate them by hand, then
#   delete this import
from apexcompat import amp
# file: train.py
from utils import amp


def step(loss, optimizer):
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
# file: evaluate.py
import utils


def build(model):
    return utils.amp.initialize(model, opt_level="O1")
""",
        codes=("APX102", "APX270"),
    ),
]


NOOP_EXAMPLES: List[Example] = [
    Example(
        "unused-import-apex-in-function-left",
        before="""\
def train(model):
    import apex

    return model
""",
        codes=("APX106",),
    ),
    Example(
        "availability-probe-left",
        before="""\
def apex_installed():
    try:
        import apex  # noqa: F401
        return True
    except ImportError:
        return False
""",
        codes=("APX105",),
    ),
    Example(
        # the handler's return answers; the try would otherwise go, and with it the only
        # path to the ``return True`` after it
        "availability-probe-returning-after-the-try-left",
        before="""\
def is_apex_available():
    try:
        import apex  # noqa: F401
    except ImportError:
        return False
    return True
""",
        codes=("APX105",),
    ),
    Example(
        "unusual-guard-left",
        before="""\
try:
    from apex import amp
except ImportError:
    amp = None
finally:
    print("checked for apex")
""",
        codes=("APX104",),
    ),
]

ImportsRule.EXAMPLES = EXAMPLES
ImportsRule.NOOP_EXAMPLES = NOOP_EXAMPLES


def _bound_outside(tree: cst.CSTNode, handler: cst.ExceptHandler) -> Set[str]:
    """The targets (``name``, ``args.fp16``) that ``tree`` assigns outside ``handler``
    (``assignment_targets``: any assignment, ``:=``, a ``for`` or ``with ... as`` target)."""
    inside = {id(n) for n in walk(handler)}
    bound: Set[str] = set()
    for node in walk(tree):
        if id(node) in inside:
            continue
        for target in assignment_targets(node):
            bound.update(code_of(n) for n in walk(target) if isinstance(n, (cst.Name, cst.Attribute)))
    return bound


def _bare_pass(stmt: Any) -> bool:
    """``stmt`` is a line holding only ``pass`` (no comment at its end)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Pass)
        and stmt.trailing_whitespace.comment is None
    )
