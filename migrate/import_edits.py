"""Cheaper runs of LibCST's import visitors after a rule, with the same results.

A rule schedules import edits through ``AddImportsVisitor`` / ``RemoveImportsVisitor``;
LibCST then runs each visitor over the whole new tree, and ``RemoveImportsVisitor`` first
deep-copies it and resolves scopes and qualified names to find out which of the scheduled
imports are unused.  That was about a quarter of a file's time, spent mostly to learn what
is plain to see: after DDP(...) became torch's DDP, the name ``DDP`` occurs nowhere.

* ``imports_present``: every scheduled addition is a plain ``import x`` the module already
  makes at top level, so ``AddImportsVisitor`` would change nothing: skip it.
* ``certainly_unused_aliases``: when no scheduled name occurs in the module outside import
  statements (no ``Name`` node; no string where LibCST looks for names: ``__all__``
  entries, string annotations),
  scope analysis could only say "unused"; ``remove_imports`` then runs LibCST's own removal
  edits without it.
* ``certainly_used_roots``: the scheduled name is bound only at module level and read as a
  global somewhere (CPython's own ``symtable`` says so, in C): LibCST's scope analysis
  would find that reference too and keep the import.  Rules schedule ``torch`` after every
  ``torch.cuda.amp.X`` they rewrite to ``torch.X``; this is how that costs nothing.
When neither settles a scheduled name, LibCST decides as before.
"""

from __future__ import annotations

import ast
import symtable
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple, Union, cast

import libcst as cst
import libcst.helpers
from libcst.codemod import Codemod, CodemodContext, ContextAwareTransformer
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from . import stdlib_trees
from .rules._edits import kept_leading, prepend_lines
from .rules._tree import module_code, statement_facts, walk

_ImportNode = Union[cst.Import, cst.ImportFrom]
_STRING_PARTS = (cst.SimpleString, cst.FormattedStringText)


def imports_present(context: CodemodContext, tree: cst.Module) -> bool:
    """Whether every import scheduled for AddImportsVisitor is a plain ``import x`` that a
    top-level statement of ``tree`` already makes (then the visitor would change nothing)."""
    wanted = context.scratch.get(AddImportsVisitor.CONTEXT_KEY, ())
    if not all(i.obj_name is None and i.alias is None and not i.relative for i in wanted):
        return False
    present = {
        cst.helpers.get_full_name_for_node(alias.name)
        for stmt in tree.body
        if isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body
        if isinstance(small, cst.Import)
        for alias in small.names
        if alias.asname is None
    }
    return all(i.module_name in present for i in wanted)


def _bound_root(module: str, obj: Optional[str], alias: Optional[str]) -> str:
    """The name an import binds (its first part: ``import a.b`` binds ``a``)."""
    return (alias or obj or module).split(".")[0]


def _called_name(call: cst.Call) -> Optional[str]:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


class _NameFacts(NamedTuple):
    """What the unused-import test reads of a subtree: its import statements, the names it
    reads or binds outside them, and the nodes LibCST may read names from strings in."""

    imports: Tuple[_ImportNode, ...]
    names: FrozenSet[str]
    string_holders: Tuple[cst.CSTNode, ...]


def _name_facts(top: cst.CSTNode) -> _NameFacts:
    imports: List[_ImportNode] = []
    not_references: Set[int] = set()  # names inside imports, ``x.attr``, ``f(keyword=...)``
    names: Set[str] = set()
    string_holders: List[cst.CSTNode] = []
    for node in walk(top):
        kind = type(node)  # the classes tested have no subclasses: no abstract isinstance
        if kind is cst.Import or kind is cst.ImportFrom:
            imports.append(cast(_ImportNode, node))
            not_references.update(id(n) for n in walk(node))
        elif kind is cst.Name:
            if id(node) not in not_references:
                names.add(cast(cst.Name, node).value)
        elif kind is cst.Attribute:
            not_references.add(id(cast(cst.Attribute, node).attr))
        elif kind is cst.Arg:
            keyword = cast(cst.Arg, node).keyword
            if keyword is not None:
                not_references.add(id(keyword))
        elif kind is cst.Annotation or (kind is cst.Call and _called_name(cast(cst.Call, node)) == "TypeVar"):
            string_holders.append(node)
    return _NameFacts(tuple(imports), frozenset(names), tuple(string_holders))


def _module_name_facts(tree: cst.Module) -> List[_NameFacts]:
    return statement_facts(tree, "import names", _name_facts) or [_name_facts(tree)]


def certainly_unused_aliases(
    tree: cst.Module, scheduled: Iterable[Tuple[str, Optional[str], Optional[str]]]
) -> Optional[Dict[cst.ImportAlias, _ImportNode]]:
    """The import aliases of ``tree`` that bind a scheduled name which is used nowhere else
    in the module, or None when some scheduled name does occur (then only scope analysis
    can tell).  ``torch.amp`` or ``f(amp=1)`` do not use a binding named ``amp``.  During a
    file's run the facts of each statement are kept (``_tree.statement_facts``)."""
    roots = {_bound_root(*entry) for entry in scheduled}
    parts = _module_name_facts(tree)
    names: Set[str] = set().union(*(part.names for part in parts))
    if not roots.isdisjoint(names):
        return None
    # the strings LibCST reads names from: ``__all__`` entries, string annotations
    holders = [tree] if "__all__" in names else [holder for part in parts for holder in part.string_holders]
    for text in (n.value for holder in holders for n in walk(holder) if isinstance(n, _STRING_PARTS)):
        if any(root in text for root in roots):
            return None
    imports = [imp for part in parts for imp in part.imports]
    unused: Dict[cst.ImportAlias, _ImportNode] = {}
    for imp in imports:
        # the imports LibCST's unused-import search considers at all
        if isinstance(imp.names, cst.ImportStar):
            continue
        if isinstance(imp, cst.ImportFrom) and (imp.module is None or imp.module.value == "__future__"):
            continue
        for alias in imp.names:
            bound = alias.evaluated_alias or alias.evaluated_name
            if bound.split(".")[0] in roots:
                unused[alias] = imp
    return unused


def certainly_used_roots(code: str, roots: Iterable[str]) -> Set[str]:
    """The names of ``roots`` that ``code`` binds only in its module scope (never as a local
    of a function or class, never by a dotted ``import a.b``) and reads as a global
    somewhere: every import binding one of them is in use, by Python's rules and by
    LibCST's (which also counts string annotations and ``__all__``, so it can only find
    more uses, never fewer).  Where ``import a.b`` binds the name too, LibCST gives a read
    of ``a.b.x`` to that import alone: the name is certain only with a read of it that no
    such import takes (``a.c.x``, or ``a`` itself)."""
    wanted = set(roots)
    try:
        top = symtable.symtable(code, "<migrated>", "exec")
    except (SyntaxError, ValueError):
        return set()
    used: Set[str] = set()
    for name in wanted:
        try:
            used.update([name] if top.lookup(name).is_referenced() else [])
        except KeyError:
            pass
    stack = list(top.get_children())
    while stack and wanted:
        table = stack.pop()
        stack.extend(table.get_children())
        for name in list(wanted):
            try:
                symbol = table.lookup(name)
            except KeyError:
                continue
            if symbol.is_global():
                if symbol.is_referenced():
                    used.add(name)
            elif symbol.is_local() or symbol.is_free() or symbol.is_parameter():
                wanted.discard(name)  # bound in an inner scope too: scope analysis decides
    used &= wanted
    if used:
        used -= _read_only_through_dotted_imports(code, used)
    return used


def _read_only_through_dotted_imports(code: str, roots: Set[str]) -> Set[str]:
    """The names of ``roots`` that ``import a.b`` statements (without ``as``) bind and that
    ``code`` never reads other than as ``a.b...``.  LibCST records such an import under
    ``a``, ``a.b`` and every longer prefix, and gives a read of ``a.b.x`` to the longest
    recorded prefix, so only the dotted import counts it as a use; a read of ``a.c.x`` or of
    ``a`` alone goes to every import binding ``a``."""
    tree = stdlib_trees.parse(code) or ast.parse(code)  # (a text the stdlib rejects raises)
    dotted: Set[str] = set()  # the recorded prefixes longer than the root: a.b, a.b.c
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if alias.asname is None and len(parts) > 1 and parts[0] in roots:
                    dotted.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    unsure = {name.split(".")[0] for name in dotted}
    if not unsure:
        return set()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name) and child.id in unsure and isinstance(child.ctx, ast.Load):
                if not (isinstance(node, ast.Attribute) and node.value is child and f"{child.id}.{node.attr}" in dotted):
                    unsure.discard(child.id)
    return unsure


class _KnownUnusedRemoval(RemoveImportsVisitor):
    """LibCST's removal edits, told which aliases are unused instead of resolving scopes."""

    METADATA_DEPENDENCIES = ()  # type: ignore[assignment,misc]

    def __init__(self, context: CodemodContext, unused: Dict[cst.ImportAlias, _ImportNode]) -> None:
        super().__init__(context)
        self._known_unused = unused

    def visit_Module(self, node: cst.Module) -> None:
        self._unused_imports = dict(self._known_unused)
        self._gone = self._gone_lines()

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        """An import that opened its block and went leaves no blank line opening it (``if
        available():`` / ``import apex`` / blank / ``...``): the blank line separated the
        import from the rest."""
        first = original_node.body[0] if original_node.body else None
        if not (
            isinstance(first, cst.SimpleStatementLine)
            and all(small in self._gone for small in first.body)
            and len(updated_node.body) == len(original_node.body) - 1
            and updated_node.body
        ):
            return updated_node
        opening = updated_node.body[0]
        lines = list(opening.leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        return updated_node.with_changes(body=[opening.with_changes(leading_lines=lines), *updated_node.body[1:]])

    def _gone_lines(self) -> Set[_ImportNode]:
        """The import statements every alias of which is removed."""
        nodes = set(self._known_unused.values())
        return {n for n in nodes if not isinstance(n.names, cst.ImportStar) and all(a in self._known_unused for a in n.names)}


class _WithoutMatcherTables(ContextAwareTransformer):
    """A codemod transformer whose ``leave_Import``/``leave_ImportFrom`` are called by hand
    and that never visits: LibCST's matcher-decorator tables, which it builds for each new
    instance by inspecting every attribute (more time than the edits), are not built."""

    def __init__(self, context: CodemodContext) -> None:
        Codemod.__init__(self, context)
        cst.CSTTransformer.__init__(self)


class _KnownUnusedLineEdits(_KnownUnusedRemoval, _WithoutMatcherTables):
    """``_KnownUnusedRemoval`` for ``_edit_top_level_imports`` (the line edits only)."""


def remove_imports_without_scopes(context: CodemodContext, tree: cst.Module) -> Optional[cst.Module]:
    """``RemoveImportsVisitor(context).transform_module(tree)`` when the scheduled names are
    certainly unused (same edits, no scope analysis); None when LibCST must decide."""
    scheduled = context.scratch.get(RemoveImportsVisitor.CONTEXT_KEY, [])
    # a name the code reads is a name node outside the imports: only those can be in use
    # (the symbol table of the whole text is not built for the rest)
    read = {_bound_root(*entry) for entry in scheduled}
    read &= set().union(*(part.names for part in _module_name_facts(tree)))
    used = certainly_used_roots(module_code(tree), read) if read else set()
    scheduled = [entry for entry in scheduled if _bound_root(*entry) not in used]
    if not scheduled:
        return tree
    unused = certainly_unused_aliases(tree, scheduled)
    if unused is None:
        return None
    line_edits = _KnownUnusedLineEdits(context, unused)
    line_edits.visit_Module(tree)
    edited = _edit_top_level_imports(tree, line_edits, set(unused.values()))
    if edited is not None:
        return edited
    removal = _KnownUnusedRemoval(context, unused)
    removal.visit_Module(tree)
    return tree.visit(removal)


def _edit_top_level_imports(
    tree: cst.Module, removal: _KnownUnusedRemoval, imports: Set[_ImportNode]
) -> Optional[cst.Module]:
    """The removal's edits applied to the module's own import lines without visiting the
    rest of the tree; None unless every import concerned is alone on a top-level line.
    The blank lines and comments above a removed line stay, on the next line that does,
    except a comment block right above it that names apex (the imports rule's rule)."""
    lines: Dict[cst.BaseSmallStatement, cst.SimpleStatementLine] = {}
    for line in tree.body:
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and line.body[0] in imports:
            lines[line.body[0]] = line
    if len(lines) != len(imports):
        return None
    body: List[cst.BaseStatement] = []
    carried: List[cst.EmptyLine] = []
    for stmt in tree.body:
        imp = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if imp in lines:
            result: Union[cst.BaseSmallStatement, cst.RemovalSentinel]
            if isinstance(imp, cst.Import):
                result = removal.leave_Import(imp, imp)
            else:
                result = removal.leave_ImportFrom(cast(cst.ImportFrom, imp), cast(cst.ImportFrom, imp))
            if isinstance(result, cst.RemovalSentinel):
                carried += kept_leading(stmt.leading_lines)
                continue
            if result is not imp:
                stmt = cast(cst.SimpleStatementLine, stmt).with_changes(body=[result])
        body.append(prepend_lines(stmt, carried) if carried else stmt)
        carried = []
    return tree.with_changes(body=body, footer=carried + list(tree.footer))
