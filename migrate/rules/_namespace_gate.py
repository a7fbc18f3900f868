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
from typing import Dict, FrozenSet, List, Optional, Sequence, Set

import libcst as cst


#: statements that bind a name of an enclosing scope from inside a body
_OUTWARD_BINDINGS = (ast.Global, ast.Nonlocal, ast.NamedExpr)


class _FileFacts:
    """What one walk over a file's stdlib tree gives the gate: local name -> the dotted names
    its absolute imports (at any depth) bind it to, the modules it star-imports, and whether
    a body binds a name outside itself (``global``, ``nonlocal``, ``:=``)."""

    def __init__(self, tree: ast.AST) -> None:
        self.bound: Dict[str, Set[str]] = {}
        self.star_modules: Set[str] = set()
        self.outward = False
        for node in ast.walk(tree):
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


def _names_into(statement: ast.AST, bound: Dict[str, Set[str]], namespaces: Sequence[str]) -> bool:
    for node in ast.walk(statement):
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        dotted = _dotted(node)
        if dotted is None:
            continue
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


_last_parse = threading.local()


def _parsed(source: str) -> Optional[ast.Module]:
    """``ast.parse(source)``, remembered for the last text (every rule of a file asks again
    until one changes the text); None when it does not parse."""
    if getattr(_last_parse, "source", None) is not source:
        try:
            tree: Optional[ast.Module] = ast.parse(source)
        except (SyntaxError, ValueError):
            tree = None
        _last_parse.source, _last_parse.tree = source, tree
    return _last_parse.tree


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
    tree = _parsed(source)
    if tree is None:
        return None
    facts = _FileFacts(tree)
    if any(_inside(ns, [module]) or _inside(module, [ns]) for module in facts.star_modules for ns in namespaces):
        return None  # a star import may bind any name into them
    bound = {name: targets for name, targets in facts.bound.items()
             if any(_inside(ns, [t]) or _inside(t, [ns]) for t in targets for ns in namespaces)}
    statements = iter(tree.body)
    kept: Set[int] = set()
    for line in module.body:
        # one LibCST line of ``a; b`` holds as many stdlib statements
        count = len(line.body) if isinstance(line, cst.SimpleStatementLine) else 1
        for _ in range(count):
            statement = next(statements, None)
            if statement is None:
                return None
            if bound and _names_into(statement, bound, namespaces):
                kept.add(id(line))
    if next(statements, None) is not None:
        return None
    return Gate(frozenset(kept), not facts.outward)


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
