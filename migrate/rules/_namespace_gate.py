"""Which top-level statements of a file may refer to a name inside some dotted namespaces
(``torch.cuda.amp``), read with the stdlib ``ast``.

A rule that rewrites only names of such namespaces otherwise resolves the qualified name of
every name and attribute of the file and rebuilds every node, to change a line or two; with
this it descends only into the statements that can hold one of its names, and skips a file
where none does before LibCST resolves anything.  The test is generous, never strict: a
name counts when *some* import anywhere in the file binds it to a dotted name in (or above,
through attributes) a namespace, whatever scope the name is read in.  LibCST's qualified
names can only resolve a name through such an import, so no statement the rule would change
is ever skipped.

The same statements let the rule resolve scopes on a smaller module (``stub_skipped``): the
skipped functions and classes keep their heads (names, decorators, parameters, bases: all
that binds or reads at module level) with ``...`` for a body, unless some statement of the
file binds a module-level name from inside a body (``global``, ``nonlocal``, ``:=``).
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set

import libcst as cst

from .. import stdlib_trees
from ..ast_table import walk_nodes
from ._tree import StatementTexts, active_statement_texts, statement_facts

#: statements that bind a name of an enclosing scope from inside a body
_OUTWARD_BINDINGS = (ast.Global, ast.Nonlocal, ast.NamedExpr)


class _FileFacts:
    """What one walk over a file's stdlib tree (or a statement's) gives the gate: local name
    -> the dotted names its absolute imports (at any depth) bind it to, the modules it
    star-imports, whether a body binds a name outside itself (``global``, ``nonlocal``,
    ``:=``), and every dotted name it reads (``a.b.c`` gives ``a.b.c``, ``a.b`` and ``a``)."""

    def __init__(self, tree: ast.AST) -> None:
        self.bound: Dict[str, Set[str]] = {}
        self.star_modules: Set[str] = set()
        self.outward = False
        dotted: Set[str] = set()
        for node in walk_nodes(tree):
            if isinstance(node, (ast.Name, ast.Attribute)):
                name = _dotted(node)
                if name is not None:
                    dotted.add(name)
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.bound.setdefault(alias.asname, set()).add(alias.name)
                    else:
                        root = alias.name.split(".")[0]
                        self.bound.setdefault(root, set()).add(root)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        self.star_modules.add(node.module or "")
                    elif not node.level and node.module:
                        self.bound.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
            elif isinstance(node, _OUTWARD_BINDINGS):
                self.outward = True
        self.dotted: FrozenSet[str] = frozenset(dotted)

    def merge(self, other: "_FileFacts") -> None:
        """Take in the import facts of another part of the same file."""
        for name, targets in other.bound.items():
            self.bound.setdefault(name, set()).update(targets)
        self.star_modules |= other.star_modules
        self.outward = self.outward or other.outward


def _dotted(node: ast.AST) -> Optional[str]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _inside(dotted: str, namespaces: Sequence[str]) -> bool:
    return any(dotted == ns or dotted.startswith(ns + ".") for ns in namespaces)


def _names_into(dotted_names: Iterable[str], bound: Dict[str, Set[str]], namespaces: Sequence[str]) -> bool:
    for dotted in dotted_names:
        root, _, rest = dotted.partition(".")
        for target in bound.get(root, ()):
            if _inside(f"{target}.{rest}" if rest else target, namespaces):
                return True
    return False


@dataclass(frozen=True)
class Gate:
    """What the stdlib read of a module says: the ``id`` of each top-level statement of the
    LibCST tree that may refer to a name inside the namespaces, and whether bodies may be
    stubbed for scope analysis."""

    kept: FrozenSet[int]
    stubbable: bool
    #: the local names some import of the file binds to a dotted name in or above them
    names: FrozenSet[str] = frozenset()


def _parsed(source: str) -> Optional[ast.Module]:
    """``ast.parse(source)``, None when it does not parse."""
    return stdlib_trees.parse(source)


_last_gate = threading.local()


def statements_naming(source: str, module: cst.Module, namespaces: Sequence[str]) -> Optional[Gate]:
    """The ``Gate`` of ``module`` (the LibCST tree of ``source``); None when it cannot be
    told (the stdlib cannot parse the text, or its statements do not line up with LibCST's).
    Remembered for the last module and namespaces: the amp rules all ask the same."""
    last = getattr(_last_gate, "entry", None)
    if last is not None and last[0] is module and last[1] is source and last[2] == tuple(namespaces):
        return last[3]
    gate = _gate(source, module, namespaces)
    _last_gate.entry = (module, source, tuple(namespaces), gate)
    return gate


def _gate(source: str, module: cst.Module, namespaces: Sequence[str]) -> Optional[Gate]:
    lines = _facts_by_line(source, module)
    if lines is None:
        return None
    facts = _FileFacts(ast.Module(body=[], type_ignores=[]))
    for part in lines:
        facts.merge(part)
    if any(_inside(ns, [module]) or _inside(module, [ns]) for module in facts.star_modules for ns in namespaces):
        return None  # a star import may bind any name into them
    bound = {name: targets for name, targets in facts.bound.items()
             if any(_inside(ns, [t]) or _inside(t, [ns]) for t in targets for ns in namespaces)}
    kept: Set[int] = set()
    if bound:
        kept = {id(line) for line, part in zip(module.body, lines) if _names_into(part.dotted, bound, namespaces)}
    return Gate(frozenset(kept), not facts.outward, frozenset(bound))


def _facts_by_line(source: str, module: cst.Module) -> Optional[List[_FileFacts]]:
    """The facts of each top-level line of ``module``: during a file's run from each line's
    own text, kept per line object (a top-level statement parses alone exactly when it
    parses in its file: nothing before it changes how it reads); else from one parse of
    ``source``.  None when the stdlib cannot parse it or its statements do not line up."""
    texts = active_statement_texts()
    if texts is not None:
        kind = f"gate facts {module.default_indent!r} {module.default_newline!r}"
        unknown = {id(line) for line in module.body if not texts.knows(kind, line)}
        if len(unknown) > 1 and _mostly(module, unknown, texts, len(source)):
            # the whole text's tree (the index parsed the file as read already) rather than a
            # parse per line; facts only for the lines not known yet
            whole = _whole_facts(source, module, unknown)
            for line, part in zip(module.body, whole or ()):
                if part is not None:
                    texts.fact(kind, line, lambda _line, part=part: part)
        lines = statement_facts(module, kind, lambda line: _line_facts(texts.text(module, line), line))
        if lines is not None and all(part is not None for part in lines):
            return lines  # type: ignore[return-value]
    return _whole_facts(source, module)  # type: ignore[return-value]


def _mostly(module: cst.Module, lines: Set[int], texts: StatementTexts, size: int) -> bool:
    """Whether the top-level ``lines`` (ids) of ``module`` make up at least half of its text
    (``size`` characters), or one of them is not printed yet: after a rule changed a few
    statements of a long file, parsing those alone costs less than parsing the whole new
    text."""
    total = 0
    for line in module.body:
        if id(line) in lines:
            text = texts.known_text(module, line)
            if text is None:
                return True
            total += len(text)
    return 2 * total >= size


def _whole_facts(
    source: str, module: cst.Module, only: Optional[Set[int]] = None
) -> Optional[List[Optional[_FileFacts]]]:
    """The facts of each top-level line of ``module`` from one parse of ``source`` (of the
    lines whose ``id`` is in ``only``, when given; None for the others); None when the
    stdlib cannot parse it or its statements do not line up."""
    tree = _parsed(source)
    if tree is None:
        return None
    statements = iter(tree.body)
    found: List[Optional[_FileFacts]] = []
    for line in module.body:
        part = ast.Module(body=[], type_ignores=[])
        for _ in range(_stdlib_count(line)):
            statement = next(statements, None)
            if statement is None:
                return None
            part.body.append(statement)
        found.append(_FileFacts(part) if only is None or id(line) in only else None)
    if next(statements, None) is not None:
        return None
    return found


def _stdlib_count(line: cst.CSTNode) -> int:
    """How many stdlib statements a LibCST top-level line holds (``a; b``: two)."""
    return len(line.body) if isinstance(line, cst.SimpleStatementLine) else 1


def _line_facts(text: str, line: cst.CSTNode) -> Optional[_FileFacts]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != _stdlib_count(line):
        return None
    return _FileFacts(tree)


def lines_naming(module: cst.Module, gate: Gate) -> Optional[FrozenSet[int]]:
    """The ids of the statement lines (``a = b; c``, at any depth) of ``module``'s kept
    top-level statements that hold a ``Name`` spelled as one of ``gate.names``; None outside
    a file's run (no statement walks)."""
    texts = active_statement_texts()
    if texts is None:
        return None
    names = gate.names
    found: Set[int] = set()
    for statement in module.body:
        if id(statement) not in gate.kept:
            continue
        walked = texts.statement_walk(statement)
        nodes, up = walked.nodes, walked.up
        for index, node in enumerate(nodes):
            if type(node) is cst.Name and node.value in names:  # type: ignore[attr-defined]
                while index >= 0 and type(nodes[index]) is not cst.SimpleStatementLine:
                    index = up[index]
                if index >= 0:
                    found.add(id(nodes[index]))
    return frozenset(found)


_STUB_BODY = cst.SimpleStatementSuite(body=[cst.Expr(cst.Ellipsis())])


def stub_skipped(module: cst.Module, gate: Gate) -> cst.Module:
    """``module`` with the body of each function and class outside ``gate.kept`` replaced by
    ``...``: the same module-level bindings and reads, the kept statements the very same
    node objects (so metadata resolved on it answers for the real tree's nodes)."""
    body = [
        statement.with_changes(body=_STUB_BODY)
        if id(statement) not in gate.kept and isinstance(statement, (cst.FunctionDef, cst.ClassDef))
        else statement
        for statement in module.body
    ]
    return module.with_changes(body=body)
