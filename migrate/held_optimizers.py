"""The index's facts for the held-optimizer route (``held_optimizer_plan``): which classes
store which attributes on their own instances, the training ``amp.initialize`` of a method
given optimizers kept on ``self`` (``amp.initialize(model, [self.G, self.D])``), and the
``amp.scale_loss`` of a method given an optimizer reached through an attribute of ``self``
(``amp.scale_loss(loss, self.optimizer.G)``).  One pass over a file's nodes; pure ``ast``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from .ast_table import NodeTable

#: the amp members the route reads
_MEMBERS = ("initialize", "scale_loss")


@dataclass
class HeldFacts:
    """What one file says for the held-optimizer route."""

    #: attribute -> the top-level classes whose methods store it on their first parameter (a
    #: store on any other object is on no instance of a class the route asks about)
    stores: Dict[str, Set[str]] = field(default_factory=dict)
    #: (class, method, line, optimizer attributes, switches) of each ``amp.initialize`` in a
    #: method given ``self.<attr>`` or a list/tuple of them as its optimizers; the switches are
    #: the tests of the ifs around it and of the early returns before it (``if not T: return``
    #: gives ``T``), as source text
    inits: List[Tuple[str, str, int, Tuple[str, ...], Tuple[str, ...]]] = field(default_factory=list)
    #: (class, method, line, holder, attribute, switch) of each ``amp.scale_loss`` in a method
    #: given ``self.<holder>.<attribute>`` as its optimizer, with no ``loss_id``; the switch is
    #: the test of the if/else whose body holds its ``with`` directly, as source text ("" without)
    scales: List[Tuple[str, str, int, str, str, str]] = field(default_factory=list)
    #: class -> the attributes only ever set as ``self.<a> = <a>`` from ``__init__``'s parameter
    kept_parameters: Dict[str, Set[str]] = field(default_factory=dict)
    #: class -> its methods whose whole body is ``self.<attr>.<the same method>()``, with that
    #: attribute (``def step(self): self.G.step()``)
    delegates: Dict[str, Dict[str, str]] = field(default_factory=dict)
    #: top-level classes that define their own ``__init__``
    constructed: Set[str] = field(default_factory=set)


def read_held_facts(table: NodeTable, amp_names: Set[str]) -> HeldFacts:
    """The facts of one file (``table``: its nodes; ``amp_names``: what apex.amp is bound to
    there, ``amp`` by default)."""
    facts = HeldFacts()
    methods = _method_owners(table)
    for func, (cls, name, me) in methods.items():
        if name == "__init__":
            facts.constructed.add(cls)
        attr = _delegated(func, name, me)  # type: ignore[arg-type]
        if attr:
            facts.delegates.setdefault(cls, {})[name] = attr
    # only the methods of top-level classes: a store anywhere else is on no class's instance
    # the route asks about, and the sites it reads are in such methods
    attribute, store, name_kind, call = ast.Attribute, ast.Store, ast.Name, ast.Call
    for func, where in methods.items():
        me = where[2]
        for node in table.under(func):
            kind = type(node)
            if kind is attribute:
                if type(node.ctx) is store and type(node.value) is name_kind and node.value.id == me:  # type: ignore
                    if _enclosing(node, table, methods) == where:
                        facts.stores.setdefault(node.attr, set()).add(where[0])  # type: ignore[attr-defined]
            elif kind is call and type(node.func) is attribute and node.func.attr in _MEMBERS:  # type: ignore
                _read_call(node, table, methods, amp_names, facts)  # type: ignore[arg-type]
    if facts.scales or facts.inits:
        facts.kept_parameters = _kept_parameters(table, methods)
    return facts


def _kept_parameters(table: NodeTable, methods) -> Dict[str, Set[str]]:
    kept: Dict[str, Set[str]] = {}
    other: Set[Tuple[str, str]] = set()
    for func, (cls, name, me) in methods.items():
        params = {a.arg for a in func.args.args[1:]} if name == "__init__" else set()
        for node in table.under(func):
            if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)):
                continue
            if not (isinstance(node.value, ast.Name) and node.value.id == me):
                continue
            if _enclosing(node, table, methods) != (cls, name, me):
                continue  # a function nested in the method: another ``self``
            stmt = table.parents.get(node)
            plain = (
                isinstance(stmt, ast.Assign)
                and stmt.targets == [node]
                and isinstance(stmt.value, ast.Name)
                and stmt.value.id == node.attr
                and node.attr in params
                and table.parents.get(stmt) is func
            )
            if plain:
                kept.setdefault(cls, set()).add(node.attr)
            else:
                other.add((cls, node.attr))
    return {cls: {a for a in attrs if (cls, a) not in other} for cls, attrs in kept.items()}


def _method_owners(table: NodeTable) -> Dict[ast.AST, Tuple[str, str, str]]:
    """Each method of a top-level class -> (class, method, its first parameter)."""
    owners: Dict[ast.AST, Tuple[str, str, str]] = {}
    for top in table.nodes[0].body:  # type: ignore[attr-defined]
        if not isinstance(top, ast.ClassDef):
            continue
        for func in top.body:
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and func.args.args:
                owners[func] = (top.name, func.name, func.args.args[0].arg)
    return owners


def _enclosing(node: ast.AST, table: NodeTable, methods) -> Optional[Tuple[str, str, str]]:
    """The method of a top-level class ``node`` is directly in (no nested function between)."""
    parent = table.parents.get(node)
    while parent is not None:
        if parent in methods:
            return methods[parent]
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
        parent = table.parents.get(parent)
    return None


def _read_call(node: ast.Call, table: NodeTable, methods, amp_names: Set[str], facts: HeldFacts) -> None:
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in amp_names):
        return
    if func.attr not in ("initialize", "scale_loss") or len(node.args) < 2:
        return
    where = _enclosing(node, table, methods)
    if where is None:
        return
    cls, method, me = where
    given = node.args[1]
    if func.attr == "initialize":
        items = given.elts if isinstance(given, (ast.List, ast.Tuple)) else [given]
        attrs = tuple(_self_attr(i, me) for i in items)
        if attrs and all(attrs):
            facts.inits.append((cls, method, node.lineno, attrs, _init_switches(node, table)))  # type: ignore[arg-type]
        return
    if len(node.args) > 2 or node.keywords:
        return  # a loss_id or another option: not this route's shape
    if isinstance(given, ast.Attribute):
        holder = _self_attr(given.value, me)
        if holder:
            facts.scales.append((cls, method, node.lineno, holder, given.attr, _scale_switch(node, table)))


def _scale_switch(call: ast.Call, table: NodeTable) -> str:
    item = table.parents.get(call)
    stmt = table.parents.get(item) if isinstance(item, ast.withitem) else None
    branch = table.parents.get(stmt) if isinstance(stmt, ast.With) else None
    if isinstance(branch, ast.If) and stmt in branch.body and branch.orelse:
        return ast.unparse(branch.test)
    return ""


def _init_switches(call: ast.Call, table: NodeTable) -> Tuple[str, ...]:
    found: List[str] = []
    node: ast.AST = call
    while True:
        parent = table.parents.get(node)
        if parent is None or isinstance(parent, ast.ClassDef):
            break
        if isinstance(parent, ast.If):
            found.append(ast.unparse(parent.test))
        body = getattr(parent, "body", None)
        if isinstance(body, list) and node in body:
            for before in body[: body.index(node)]:
                if (
                    isinstance(before, ast.If)
                    and not before.orelse
                    and len(before.body) == 1
                    and isinstance(before.body[0], ast.Return)
                    and isinstance(before.test, ast.UnaryOp)
                    and isinstance(before.test.op, ast.Not)
                ):
                    found.append(ast.unparse(before.test.operand))
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            break
        node = parent
    return tuple(found)


def _delegated(func: ast.FunctionDef, name: str, me: str) -> str:
    """``attr`` when the body of the method ``func`` (a docstring aside) is ``me.attr.name()``
    alone and it takes nothing but ``me``."""
    args = func.args
    if len(args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return ""
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Call):
        return ""
    call = body[0].value
    if call.args or call.keywords or not isinstance(call.func, ast.Attribute) or call.func.attr != name:
        return ""
    return _self_attr(call.func.value, me)


def _self_attr(node: ast.AST, me: str) -> str:
    """``attr`` of ``<me>.attr``, else ""."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
        return node.attr
    return ""
