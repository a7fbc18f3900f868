"""Shared machinery of the rules for apex's neighbouring packages (DDP, SyncBN, LARC,
FP16_Optimizer, fused kernels) and deprecated ``torch.cuda.amp`` spellings: resolving names
(aliases, star imports), spelling torch names the way the file already imports torch,
rebuilding argument lists without disturbing their layout, and ``# TODO(apexcompat):``
comments that are never duplicated."""

from __future__ import annotations

import re
from typing import ClassVar, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union, cast

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    GlobalScope,
    ImportAssignment,
    QualifiedName,
    QualifiedNameSource,
    ScopeProvider,
)

from ._edits import code_of
from ._tree import module_code, node_classes, walk
from ._unused_import_schedule import schedule_unused_imports_of
from ._namespace_gate import Gate, lines_naming, statements_naming, stub_skipped
from ._metadata import ParentProvider, QualifiedNameProvider
from ._edits import expression as expr
from ._apex_path import apex_path_name
from .base import TODO_PREFIX, Rule

#: a rewritten call whose line would get longer than this is split one argument per line
MAX_LINE = 99

#: the statement classes, abstract and concrete: ``on_visit`` and ``on_leave`` ask of every
#: node of every file, and ``isinstance`` against LibCST's abstract classes goes through ``ABCMeta``
_STATEMENT_CLASSES = node_classes((cst.SimpleStatementLine, cst.BaseCompoundStatement))


def kwarg(name: str, value: Union[str, cst.BaseExpression]) -> cst.Arg:
    """``name=value`` written the way PEP 8 writes keyword arguments."""
    if isinstance(value, str):
        value = expr(value)
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def as_keyword(arg: cst.Arg, name: str) -> cst.Arg:
    """The same argument passed by keyword (its value and comments kept)."""
    if arg.keyword is not None:
        return arg.with_changes(keyword=cst.Name(name))
    return kwarg(name, arg.value).with_changes(comma=arg.comma, whitespace_after_arg=arg.whitespace_after_arg)


def literal_value(node: Optional[cst.BaseExpression]) -> object:
    """The Python value of a literal number/bool/None/string (``2**16`` too), else ``...``."""
    if node is None:
        return ...
    try:
        import ast

        return ast.literal_eval(code_of(node).strip())
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power):
        base, exp = literal_value(node.left), literal_value(node.right)
        if isinstance(base, (int, float)) and isinstance(exp, int) and 0 <= exp < 200:
            return base**exp
    return ...


def bind_args(call: cst.Call, params: Sequence[str]) -> Optional[Dict[str, cst.Arg]]:
    """Map ``call``'s arguments to the parameter names of a signature (positional ones in
    order).  ``None`` when that cannot be proved: ``*args``/``**kwargs`` or more positional
    arguments than parameters.  Unknown keywords are kept under their own name."""
    bound: Dict[str, cst.Arg] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(params):
                return None
            bound[params[position]] = arg
            position += 1
        else:
            bound[arg.keyword.value] = arg
    return bound


def rebuild_args(original: Sequence[cst.Arg], new: Sequence[cst.Arg]) -> List[cst.Arg]:
    """Give ``new`` (a mix of original and fresh arguments) the separators of ``original``:
    original arguments keep their own comma where one follows, fresh ones copy the first
    separator's layout without its comment, the last one gets the original closing layout."""
    if not new:
        return []
    separator: cst.Comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    for arg in original[:-1]:
        if isinstance(arg.comma, cst.Comma):
            separator = _without_comment(arg.comma)
            break
    last = original[-1] if original else None
    closing_comma = last.comma if last is not None else cst.MaybeSentinel.DEFAULT
    closing_ws = last.whitespace_after_arg if last is not None else cst.SimpleWhitespace("")
    originals = {id(a) for a in original}
    out: List[cst.Arg] = []
    for i, arg in enumerate(new):
        if i < len(new) - 1:
            keeps_own = id(arg) in originals and arg is not last and isinstance(arg.comma, cst.Comma)
            comma = arg.comma if keeps_own else separator
            out.append(arg.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace("")))
        else:
            out.append(arg.with_changes(comma=closing_comma, whitespace_after_arg=closing_ws))
    return out


def _without_comment(comma: cst.Comma) -> cst.Comma:
    ws = comma.whitespace_after
    if isinstance(ws, cst.ParenthesizedWhitespace):
        ws = ws.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=())
    return comma.with_changes(whitespace_after=ws)


class NeighbourRule(Rule):
    """A rule with name resolution through star imports, torch spellings that follow the
    file's own imports, TODO comments and layout-preserving call rebuilding."""

    METADATA_DEPENDENCIES = (  # type: ignore[assignment]
        QualifiedNameProvider,
        ScopeProvider,
    )

    #: ``from <module> import *`` -> the names of that module this rule resolves
    STAR_EXPORTS: ClassVar[Dict[str, Tuple[str, ...]]] = {}
    #: TODO message (or its fixed start) -> (code, severity): a TODO comment this rule wrote
    #: on an earlier run is reported again, so a second run lists the same manual work
    KNOWN_TODOS: ClassVar[Dict[str, Tuple[str, str]]] = {}
    #: with ``NAMESPACES``: descend only into the top-level statements that may refer into
    #: them, and resolve scopes with the other functions' bodies stubbed (for a rule whose
    #: every edit and finding concerns such a name and what encloses it)
    PRUNE_STATEMENTS: ClassVar[bool] = False
    #: with ``PRUNE_STATEMENTS``: ``parent`` answers from the whole tree, not the stubbed
    #: one the scopes come from (for a rule that also looks into the skipped statements)
    WHOLE_TREE_PARENTS: ClassVar[bool] = False
    #: ids of the top-level statements this run does not descend into
    _skipped: Set[int] = frozenset()  # type: ignore[assignment]
    #: with ``PRUNE_STATEMENTS``: ids of the statement lines naming a gate name (the others are not entered)
    _named_lines: Optional[FrozenSet[int]] = None
    _gate: Optional[Gate] = None
    #: the wrapper whose parent map ``_parents`` is (``parent``)
    _parents_of: object = object()
    _parents: Mapping[cst.CSTNode, cst.CSTNode] = {}
    #: the first names an import of the module may bind (``names_of``); None: not read yet
    _import_roots: Optional[FrozenSet[str]] = None

    def transform_module(self, tree: cst.Module) -> cst.Module:
        gate = self.namespace_gate(tree)
        if gate is not None and not gate.kept:
            return tree
        if gate is not None and self.PRUNE_STATEMENTS:
            self._gate = gate
            self._skipped = {id(statement) for statement in tree.body if id(statement) not in gate.kept}
            self._named_lines = lines_naming(tree, gate)
        return super().transform_module(tree)

    def namespace_gate(self, tree: cst.Module) -> Optional[Gate]:
        """``Rule.namespace_gate``, kept where the file holds TODO comments of other rules
        only: a rule of this kind reports again the comments that start with one of its own
        ``KNOWN_TODOS`` (``_report_earlier_todos``), no other."""
        if not self.NAMESPACES:
            return None
        code = module_code(tree)
        if any(TODO_PREFIX + start in code for start in self.KNOWN_TODOS):
            return None
        return statements_naming(code, tree, self.NAMESPACES)

    def metadata_module(self, module: cst.Module) -> cst.Module:
        """Scopes are resolved on the module with the skipped functions' bodies stubbed."""
        gate = self._gate
        if gate is None or not gate.stubbable or not self._skipped:
            return module
        return stub_skipped(module, gate)

    # names inside import statements are bindings, not uses: the imports rule handles them
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        self._module = node
        self._lines_code = module_code(node)
        self._lines = self._lines_code.splitlines()
        self._default_indent = node.default_indent
        self._torch_aliases = _torch_aliases(node)
        self._star_names = _star_names(node, self.STAR_EXPORTS)
        self._import_roots = _import_roots(self._lines_code)
        self._statements: List[cst.CSTNode] = []
        self._todos: Dict[int, List[str]] = {}
        self._rebuilt: Set[int] = set()
        #: the statements holding a rebuilt call (only those can have grown too long)
        self._rebuilt_in: Set[int] = set()
        self._replacements: Set[int] = set()
        self._class_tests: Optional[Set[int]] = None
        return True

    def _read_as_class_test(self, node: cst.Tuple) -> bool:
        """Whether ``node`` (of the original module) is ``isinstance``/``issubclass``'s second
        argument or an ``except`` clause's type, where one class reads the same as a tuple
        of it.  The module is searched once, the first time a tuple loses a duplicate."""
        if self._class_tests is None:
            self._class_tests = set()
            for found in walk(self._module):
                if (
                    isinstance(found, cst.Call)
                    and isinstance(found.func, cst.Name)
                    and found.func.value in ("isinstance", "issubclass")
                    and len(found.args) == 2
                ):
                    self._class_tests.add(id(found.args[1].value))
                elif isinstance(found, cst.ExceptHandler) and found.type is not None:
                    self._class_tests.add(id(found.type))
        return id(node) in self._class_tests

    def replacement(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """Mark ``node`` as a name this rule substituted (see ``leave_Tuple``)."""
        self._replacements.add(id(node))
        return node

    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        """``isinstance(m, (DDP, ApexDDP))`` would list torch's class twice after the
        rewrite: keep the first, and unwrap a tuple left with one class where it is read as a
        class test; elsewhere (``TYPES = (DDP, ApexDDP)``, later ``TYPES + (...)``) it stays a
        tuple of one."""
        elements = updated_node.elements
        if not any(id(e.value) in self._replacements for e in elements):
            return updated_node
        seen: Set[str] = set()
        kept = []
        for element in elements:
            text = code_of(element.value)
            if text not in seen:
                seen.add(text)
                kept.append(element)
        if len(kept) == len(elements):
            return updated_node
        one = len(kept) == 1 and not isinstance(kept[0], cst.StarredElement)
        if one and updated_node.lpar and self._read_as_class_test(original_node):
            return kept[0].value
        last = cst.Comma() if one else elements[-1].comma
        kept[-1] = kept[-1].with_changes(comma=last)
        return updated_node.with_changes(elements=kept)

    def leave_IfExp(self, original_node: cst.IfExp, updated_node: cst.IfExp) -> cst.BaseExpression:
        """``DDP = DistributedDataParallel if not use_apex else ApexDDP`` names torch's class
        on both sides after the rewrite: the branch alone, when the test only reads values
        (evaluating it or not changes nothing) and no comment sits inside."""
        body, orelse = updated_node.body, updated_node.orelse
        if id(body) not in self._replacements and id(orelse) not in self._replacements:
            return updated_node
        if code_of(body) != code_of(orelse) or not _only_reads(updated_node.test):
            return updated_node
        if "#" in code_of(updated_node) or body.lpar:
            return updated_node
        return body.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._star_names:
            return drop_unused_star_imports(updated_node, self.STAR_EXPORTS)
        return updated_node

    # --- names -------------------------------------------------------------------------

    def names_of(self, node: cst.CSTNode) -> Set[str]:
        """Imported dotted names ``node`` refers to.  Empty when the name is (also) defined
        in this file, e.g. a fallback class in ``except ImportError:`` or a lookalike.  Empty
        for a call too: LibCST names ``f(a)`` after ``f``, but ``f(a)(b)`` calls what ``f``
        returned, not ``f``."""
        if isinstance(node, cst.Call):
            return set()
        if self._import_roots is not None:
            # an imported name is read through a name some import binds (LibCST looks the
            # dotted name and its prefixes up in the scopes, and only an import binds a
            # dotted one): any other name or attribute chain names nothing imported, and
            # its qualified names need not be worked out
            root = node
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name) and root.value not in self._import_roots and root.value not in self._star_names:
                return set()
        names = self.get_metadata(QualifiedNameProvider, node, set())
        if any(q.source is QualifiedNameSource.LOCAL for q in names):
            if not self._removed_import_with_none_fallback(node, names):
                return set()
            names = {q for q in names if q.source is not QualifiedNameSource.LOCAL}
        found = {q.name for q in names if q.source is QualifiedNameSource.IMPORT}
        if len(found) > 1:
            # ``try: from apex... import X / except ImportError: from torch... import X``:
            # the fallback already names the native class; the import rule keeps it, unless
            # ``node`` runs only on apex's path (see ``apex_path_name``)
            return apex_path_name(self._module, self.parent, node, found)
        if not found and isinstance(node, cst.Name) and node.value in self._star_names and self._is_load(node):
            found = {self._star_names[node.value]}
        return found

    def _removed_import_with_none_fallback(self, node: cst.CSTNode, names: Set[QualifiedName]) -> bool:
        """``try: from apex.parallel import DistributedDataParallel as DDP`` / ``except
        ImportError: DDP = None``: the name's only local definitions are such ``= None``
        fallbacks of a module the 2025 removal deleted.  The apex run always took the import
        (without apex the fallback makes every use fail); the torch equivalent is always there,
        so the name resolves to the import and the fallback goes with the guard."""
        from .imports import is_removed_module

        imported = [q.name for q in names if q.source is QualifiedNameSource.IMPORT]
        if not isinstance(node, cst.Name) or not imported or not all(is_removed_module(n) for n in imported):
            return False
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None:
            return False
        for assignment in scope[node.value]:
            if any(not self._uses_the_class(access.node) for access in assignment.references):
                return False
            if isinstance(assignment, ImportAssignment):
                continue
            if not self._none_in_import_error_handler(getattr(assignment, "node", None)):
                return False
        return True

    def _uses_the_class(self, name: cst.CSTNode) -> bool:
        """``DDP(model)``, ``isinstance(m, DDP)``, ``(nn.DataParallel, DDP)``: a read that uses
        the class itself, never one that tests it against the ``None`` fallback (``DDP is
        None``, ``if DDP:``): those keep the guard for a person."""
        parent = self.parent(name)
        if isinstance(parent, cst.Call) and parent.func is name:
            return True
        return isinstance(parent, (cst.Arg, cst.Element))

    def _none_in_import_error_handler(self, target: Optional[cst.CSTNode]) -> bool:
        """``target`` is the name of ``NAME = None`` standing in an ``except ImportError:``
        (or ``ModuleNotFoundError``) handler of a ``try`` that imports it."""
        assign = self.parent(self.parent(target))
        if not isinstance(target, cst.Name) or not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return False
        if not (isinstance(assign.value, cst.Name) and assign.value.value == "None"):
            return False
        handler = self.parent(self.parent(self.parent(assign)))
        if not isinstance(handler, cst.ExceptHandler) or handler.type is None:
            return False
        caught = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
        kinds = {code_of(e.value if isinstance(e, cst.Element) else e) for e in caught}
        if not kinds <= {"ImportError", "ModuleNotFoundError"}:
            return False
        owner = self.parent(handler)
        return isinstance(owner, cst.Try) and any(
            isinstance(sub, cst.ImportAlias) and code_of(sub.asname.name if sub.asname else sub.name) == target.value
            for stmt in owner.body.body
            for sub in walk(stmt)
        )

    def resolve_one(self, node: cst.CSTNode, table: Dict[str, object]) -> Optional[str]:
        """The one key of ``table`` that ``node`` refers to, if any."""
        hits = [name for name in self.names_of(node) if name in table]
        return hits[0] if len(hits) == 1 else None

    def _is_load(self, name: cst.Name) -> bool:
        """A bare name read as a variable (not ``x.name``, ``f(name=...)``, ``def name``)."""
        parent = self.parent(name)
        if isinstance(parent, cst.Attribute):
            return parent.value is name
        return not isinstance(parent, (cst.Arg, cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias))

    def parent(self, node: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
        if node is None:
            return None
        # worked out on first use, like positions: most files need no parent link at all;
        # the map is kept per wrapper (LibCST's resolve costs more than the lookup)
        wrapper = (self.WHOLE_TREE_PARENTS and self._positions_wrapper) or self.context.wrapper
        if wrapper is not self._parents_of:
            self._parents_of = wrapper
            self._parents = wrapper.resolve(ParentProvider)  # type: ignore[union-attr]
        return self._parents.get(node)

    def is_callee(self, node: cst.CSTNode) -> bool:
        parent = self.parent(node)
        return isinstance(parent, cst.Call) and parent.func is node

    def is_outermost(self, node: cst.CSTNode) -> bool:
        """False for ``apex.contrib`` inside ``apex.contrib.xentropy.X``: report the whole."""
        parent = self.parent(node)
        return not (isinstance(parent, cst.Attribute) and parent.value is node)

    def torch_name(self, dotted: str, at: Optional[cst.CSTNode] = None) -> cst.BaseExpression:
        """``dotted`` (``torch.nn.LayerNorm``) spelled through the file's module-level torch
        imports (``nn.LayerNorm`` after ``import torch.nn as nn``), else in full with an
        ``import torch`` scheduled."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            local = self._torch_aliases.get(".".join(parts[:i]))
            if local is not None and not self._shadowed(local, at):
                return expr(".".join([local] + parts[i:]))
        AddImportsVisitor.add_needed_import(self.context, "torch")
        return expr(dotted)

    def _shadowed(self, name: str, at: Optional[cst.CSTNode]) -> bool:
        if at is None:
            return False
        scope = self.get_metadata(ScopeProvider, at, None)
        if scope is None:
            return False
        return any(not isinstance(a.scope, GlobalScope) for a in scope[name])

    def forget(self, node: cst.CSTNode) -> None:
        """``node`` (an apex reference) is being replaced: drop its import if now unused.
        Imports inside ``try`` are left to the import clean-up rule, which knows the
        ``except ImportError`` shapes (removing them here would leave ``try: pass``)."""
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        scope = self.get_metadata(ScopeProvider, root, None)
        if isinstance(root, cst.Name) and scope is not None:
            for assignment in scope[root.value]:
                if isinstance(assignment, ImportAssignment) and self._inside_try(assignment.node):
                    return
        schedule_unused_imports_of(self.context, node)

    def _inside_try(self, node: cst.CSTNode) -> bool:
        current = self.parent(node)
        while current is not None:
            if isinstance(current, (cst.Try, cst.TryStar)):
                return True
            current = self.parent(current)
        return False

    # --- TODO comments -----------------------------------------------------------------

    def todo(self, node: cst.CSTNode, code: str, message: str, *, fixed: bool = False, severity: str = "error") -> None:
        """Report ``message`` and put it as a TODO comment above the statement holding
        ``node`` (once: an identical comment already there is not repeated)."""
        if not self.settings.code_enabled(code):
            return
        self.report(node, code, message, fixed=fixed, severity=severity)
        if self._statements:
            self._todos.setdefault(id(self._statements[-1]), []).append(message)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in _STATEMENT_CLASSES:
            self._statements.append(node)
        if id(node) in self._skipped:
            return False
        if type(node) is cst.SimpleStatementLine and self._named_lines is not None and id(node) not in self._named_lines:
            return False
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        result = super().on_leave(original_node, updated_node)
        if type(original_node) in _STATEMENT_CLASSES:
            self._statements.pop()
            result = self._finish_statement(original_node, result)
        return result

    def _finish_statement(self, original: cst.CSTNode, result):  # type: ignore[no-untyped-def]
        messages = self._todos.pop(id(original), [])
        self._report_earlier_todos(original, messages)
        if isinstance(result, cst.FlattenSentinel):
            nodes = list(result.nodes)
            if nodes:
                nodes[0] = self._add_comments(nodes[0], messages)
                nodes = [self._wrap_long_calls(original, n) for n in nodes]
            return cst.FlattenSentinel(nodes)
        if isinstance(result, cst.CSTNode):
            return self._wrap_long_calls(original, self._add_comments(result, messages))
        return result

    def _report_earlier_todos(self, stmt: cst.CSTNode, fresh: List[str]) -> None:
        for line in getattr(stmt, "leading_lines", ()):
            if line.comment is None or not line.comment.value.startswith(TODO_PREFIX):
                continue
            message = line.comment.value[len(TODO_PREFIX) :]
            if message in fresh:
                continue
            for start, (code, severity) in self.KNOWN_TODOS.items():
                if message.startswith(start) and self.settings.code_enabled(code):
                    self.report(stmt, code, message, fixed=severity != "error", severity=severity)
                    break

    @staticmethod
    def _add_comments(stmt: cst.CSTNode, messages: Iterable[str]):  # type: ignore[no-untyped-def]
        lines = list(getattr(stmt, "leading_lines", ()))
        present = {line.comment.value for line in lines if line.comment is not None}
        changed = False
        for message in dict.fromkeys(messages):
            text = TODO_PREFIX + message
            if text not in present:
                lines.append(cst.EmptyLine(comment=cst.Comment(text)))
                present.add(text)
                changed = True
        return stmt.with_changes(leading_lines=lines) if changed else stmt

    # --- calls -------------------------------------------------------------------------

    def replace_call(self, call: cst.Call, func: cst.BaseExpression, args: Sequence[cst.Arg]) -> cst.Call:
        """``call`` with a new callee and arguments, keeping its argument layout; split one
        argument per line later if the statement gets too long."""
        new = call.with_changes(func=func, args=rebuild_args(call.args, args))
        if not any("\n" in code_of(a) for a in call.args) and "\n" not in code_of(call.whitespace_before_args):
            self._rebuilt.add(id(new))
            if self._statements:
                self._rebuilt_in.add(id(self._statements[-1]))
        return new

    def call_statement(self, head: str, args: Sequence[str], anchor: cst.CSTNode) -> cst.BaseStatement:
        """``head(arg, ...)`` as a statement placed at ``anchor``'s indentation: on one line
        when it fits, else one argument per line with a trailing comma."""
        start = self.position(anchor).start
        line = self._lines[start.line - 1]
        indent = len(line) - len(line.lstrip())
        one_line = f"{head}({', '.join(args)})"
        if indent + len(one_line) <= MAX_LINE or not args:
            return cst.parse_statement(one_line + "\n")
        inner = "".join(f"{self._default_indent}{arg},\n" for arg in args)
        return cst.parse_statement(f"{head}(\n{inner})\n")

    def _wrap_long_calls(self, original: cst.CSTNode, stmt: cst.CSTNode) -> cst.CSTNode:
        if id(original) not in self._rebuilt_in or not isinstance(stmt, cst.SimpleStatementLine):
            return stmt
        start = self.position(original).start
        indent = len(self._lines[start.line - 1]) - len(self._lines[start.line - 1].lstrip())
        body = cst.Module(body=[stmt.with_changes(leading_lines=())]).code
        first_line = body.splitlines()[0] if body else ""
        if indent + len(first_line) <= MAX_LINE:
            return stmt
        return cast(cst.CSTNode, stmt.visit(_SplitArguments(self._rebuilt, self._default_indent)))


class _SplitArguments(cst.CSTTransformer):
    """Puts each argument of the marked calls on its own line, with a trailing comma."""

    def __init__(self, marked: Set[int], indent: str) -> None:
        super().__init__()
        self.marked = marked
        self.indent = indent

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if id(original_node) not in self.marked or not updated_node.args:
            return updated_node

        def newline(extra: str) -> cst.ParenthesizedWhitespace:
            return cst.ParenthesizedWhitespace(
                first_line=cst.TrailingWhitespace(),
                empty_lines=(),
                indent=True,
                last_line=cst.SimpleWhitespace(extra),
            )

        args = []
        for i, arg in enumerate(updated_node.args):
            last = i == len(updated_node.args) - 1
            args.append(
                arg.with_changes(
                    comma=cst.Comma(whitespace_after=newline("" if last else self.indent)),
                    whitespace_after_arg=cst.SimpleWhitespace(""),
                )
            )
        return updated_node.with_changes(whitespace_before_args=newline(self.indent), args=args)


#: what ``from <module> import *`` binds, for the removed apex modules whose names these rules
#: rewrite; a star import none of whose names is left in the file is deleted
APEX_STAR_EXPORTS: Dict[str, Tuple[str, ...]] = {
    "apex.parallel": (
        "DistributedDataParallel",
        "Reducer",
        "SyncBatchNorm",
        "convert_syncbn_model",
        "create_syncbn_process_group",
        "LARC",
        "distributed",
        "sync_batchnorm",
        "optimized_sync_batchnorm",
        "multiproc",
    ),
    "apex.fp16_utils": (
        "FP16_Optimizer",
        "FP16Model",
        "network_to_half",
        "BN_convert_float",
        "convert_network",
        "convert_module",
        "tofp16",
        "to_python_float",
        "clip_grad_norm",
        "prep_param_lists",
        "model_grads_to_master_grads",
        "master_params_to_model_params",
        "LossScaler",
        "DynamicLossScaler",
        "fp16util",
        "fp16_optimizer",
        "loss_scaler",
    ),
}


def drop_unused_star_imports(module: cst.Module, modules: Iterable[str]) -> cst.Module:
    """Delete module-level ``from <m> import *`` (``m`` in ``modules``) once no name it binds
    is used.  The import visitors cannot remove star imports, hence this one hand edit."""
    targets = {m for m in modules if m in APEX_STAR_EXPORTS}
    if not targets:
        return module
    used = _NameCollector()
    module.visit(used)
    body = []
    for stmt in module.body:
        star = _star_module(stmt)
        if star in targets and not used.names & set(APEX_STAR_EXPORTS[star]):
            continue
        body.append(stmt)
    if len(body) == len(module.body):
        return module
    return module.with_changes(body=body)


def _star_module(stmt: cst.CSTNode) -> Optional[str]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar) and small.module is not None:
            return get_full_name_for_node(small.module)
    return None


class _NameCollector(cst.CSTVisitor):
    """Bare names read anywhere (not attribute names, not inside imports)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: Set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def _module_level_imports(module: cst.Module) -> Iterable[Union[cst.Import, cst.ImportFrom]]:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small


def _torch_aliases(module: cst.Module) -> Dict[str, str]:
    """Full dotted torch name -> the local name a module-level import binds it to."""
    aliases: Dict[str, str] = {}
    for imp in _module_level_imports(module):
        if isinstance(imp, cst.Import):
            for alias in imp.names:
                full = get_full_name_for_node(alias.name) or ""
                if not (full == "torch" or full.startswith("torch.")):
                    continue
                if alias.asname is not None:
                    aliases[full] = get_full_name_for_node(alias.asname.name) or full
                else:
                    aliases["torch"] = "torch"
        elif imp.relative == () or not imp.relative:
            base = get_full_name_for_node(imp.module) if imp.module is not None else None
            if base is None or not (base == "torch" or base.startswith("torch.")):
                continue
            if isinstance(imp.names, cst.ImportStar):
                continue
            for alias in imp.names:
                name = get_full_name_for_node(alias.name) or ""
                local = get_full_name_for_node(alias.asname.name) if alias.asname is not None else name
                aliases[f"{base}.{name}"] = local or name
    return aliases


def _import_roots(code: str) -> FrozenSet[str]:
    """Every name that may be the first name of one an import of ``code`` binds, in any
    scope (``import a.b`` binds ``a``, ``from m import n as k`` binds ``k``): each word
    after an ``import`` keyword up to the end of its statement (a superset: read from the
    text, the word ``import`` in a string or a comment adds words too, never removes any)."""
    roots: Set[str] = set()
    for keyword in _IMPORT_KEYWORD.finditer(code):
        roots.update(_WORD.findall(code, keyword.end(), _statement_end(code, keyword.end())))
    return frozenset(roots)


def _statement_end(code: str, at: int) -> int:
    """Where the statement whose text goes on at ``at`` ends: the first line end outside
    brackets and not continued by a backslash (comments skipped; an import holds no strings)."""
    depth = 0
    while True:
        found = _STATEMENT_MARK.search(code, at)
        if found is None:
            return len(code)
        char, at = found.group(), found.end()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "#":
            newline = code.find("\n", at)
            if newline < 0:
                return len(code)
            at = newline
        elif char == "\\":
            # the line end it escapes does not end the statement
            at += 2 if code.startswith("\r\n", at) else 1
        elif depth <= 0:  # a line end
            return found.start()


_IMPORT_KEYWORD = re.compile(r"\bimport\b")
_WORD = re.compile(r"[^\W\d]\w*")
#: what ``_statement_end`` looks at: brackets, comments, backslashes and line ends
_STATEMENT_MARK = re.compile(r"[()\[\]{}#\\\n]")


def _star_names(module: cst.Module, exports: Dict[str, Tuple[str, ...]]) -> Dict[str, str]:
    """Bare name -> qualified name for the names ``from <module> import *`` brings in."""
    found: Dict[str, str] = {}
    if not exports:
        return found
    for imp in _module_level_imports(module):
        if isinstance(imp, cst.ImportFrom) and isinstance(imp.names, cst.ImportStar) and imp.module is not None:
            base = get_full_name_for_node(imp.module) or ""
            for name in exports.get(base, ()):
                found[name] = f"{base}.{name}"
    return found


def _only_reads(test: cst.BaseExpression) -> bool:
    """Whether evaluating ``test`` has no effect but its value: names, attributes,
    constants, ``not``, ``and``/``or`` and comparisons of those."""
    for node in walk(test):
        if isinstance(node, (cst.Call, cst.Subscript, cst.Await, cst.NamedExpr, cst.Lambda, cst.Yield)):
            return False
        if isinstance(node, (cst.BaseComp, cst.FormattedString)):
            return False
    return True
