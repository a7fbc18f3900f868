"""The index's facts for the bound-backward route (``bound_plan``): in each top-level
function, the calls that hand a function of another module to a method of a local object
(``tl.override_backward(default_backward.amp_backward)``), the objects built there
(``tl = trainer.Launcher(...)``) and the lines each local name is bound on.  Pure ``ast``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, List, Tuple

from .ast_table import NodeTable


@dataclass(frozen=True)
class Binding:
    """``receiver.binder(module.function)`` as a statement of the top-level function ``owner``."""

    owner: str
    line: int
    receiver: str
    binder: str
    #: the local name of the module (``default_backward``), "" for a plain name
    module: str
    function: str


@dataclass(frozen=True)
class Build:
    """``target = callee(...)`` (a name or ``module.Class``) in the top-level function ``owner``."""

    owner: str
    line: int
    target: str
    callee: str
    #: texts of the positional arguments and of the keyword arguments (name, text)
    positional: Tuple[str, ...]
    keywords: Tuple[Tuple[str, str], ...]


@dataclass
class FunctionFacts:
    bindings: List[Binding]
    builds: List[Build]
    #: local name -> the lines it is bound on (assignments, loops, imports, ``with ... as``)
    bound: Dict[str, List[int]]
    #: ``module.function`` text -> how often the function reads it
    reads: Dict[str, int]
    #: (name, method, line) of each ``name.method(...)`` call
    calls: List[Tuple[str, str, int]]
    #: line of each ``a, b = x.initialize(...)`` call -> the texts of its targets
    initialized: Dict[int, Tuple[str, ...]]


def read_function_facts(table: NodeTable) -> Dict[str, FunctionFacts]:
    """Top-level function name -> its facts, for the functions that hand a module's
    function to a method call (the only ones the route looks at)."""
    found: Dict[str, FunctionFacts] = {}
    for top in table.nodes[0].body:  # type: ignore[attr-defined]
        if not isinstance(top, ast.FunctionDef):
            continue
        nodes = table.under(top)
        bindings = [b for b in (_binding(top.name, n) for n in nodes) if b is not None]
        if not bindings:
            continue
        builds: List[Build] = []
        bound: Dict[str, List[int]] = {}
        reads: Dict[str, int] = {}
        calls: List[Tuple[str, str, int]] = []
        initialized: Dict[int, Tuple[str, ...]] = {}
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name):
                calls.append((node.func.value.id, node.func.attr, node.lineno))
                parent = table.parents.get(node)
                if node.func.attr == "initialize" and isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                    target = parent.targets[0]
                    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                    initialized[node.lineno] = tuple(ast.unparse(e) for e in elements)
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.setdefault(node.id, []).append(node.lineno)
            elif isinstance(node, ast.alias):
                local = (node.asname or node.name).split(".")[0]
                bound.setdefault(local, []).append(getattr(node, "lineno", top.lineno))
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                text = f"{node.value.id}.{node.attr}"
                reads[text] = reads.get(text, 0) + 1
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call) and _callee(node.value.func):
                call = node.value
                if not any(isinstance(a, ast.Starred) for a in call.args) and all(k.arg for k in call.keywords):
                    builds.append(Build(
                        top.name, node.lineno, node.targets[0].id, _callee(call.func),
                        tuple(ast.unparse(a) for a in call.args),
                        tuple((str(k.arg), ast.unparse(k.value)) for k in call.keywords),
                    ))
        for arg in top.args.posonlyargs + top.args.args + top.args.kwonlyargs:
            bound.setdefault(arg.arg, []).append(top.lineno)
        found[top.name] = FunctionFacts(bindings, builds, bound, reads, calls, initialized)
    return found


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def _binding(owner: str, node: ast.AST):
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    call = node.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) or call.keywords \
            or len(call.args) != 1:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
        return Binding(owner, node.lineno, func.value.id, func.attr, arg.value.id, arg.attr)
    return None
