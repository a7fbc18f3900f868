"""A plain backward beside a scaled one, where the GradScaler may be on.

``amp.initialize(model, optimizer, opt_level=args.opt_level)`` (or under ``if args.amp:``), then
``if args.fp16: <scale> else: loss.backward()`` and one ``optimizer.step()`` after both: apex's
patched step stepped the plain backward's gradients as they were, but ``scaler.step`` on an
enabled GradScaler unscales them, dividing them by the loss scale, on every run with the
GradScaler on and ``args.fp16`` off.  The step then goes under the scaling test (the shared or
mirrored step: ``if args.fp16: scaler.step(...); scaler.update() else: optimizer.step()``), or
the file keeps the shim where it cannot (``_amp_sites._switched_sites``).

The function stays as it is where each of its plain backwards provably never runs with the
GradScaler on (``plain_covered``): an if around it is false (or, for its ``else``, true)
wherever every initialize of the file runs (``switch_of``: the tests of the ifs, elses and early
exits around each initialize, a flag set true right after it, the conditions around the calls of
the function that initializes, with what follows from ``and``/``or``/``not`` and from comparisons
with literals); or where its branch steps its own optimizer apart from every step through the
GradScaler (``stepped_apart``).  Tests are compared by root (``Roots.root``): a parameter of a
module-level function every call of which in this file passes one root (and no other walked file
is known to use it), a constructor's or a method's parameter likewise, an attribute that
``__init__`` stores once from its parameter, a local or module name assigned once from a name or
attribute (``use_amp = args.amp``); anything else is its text in its function.  A test the rules
rewrite to ``scaler.is_enabled()`` (apex.amp-or-None handed in: ``if amp is not None``) is the
switch itself.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst

from ._amp_param import _slot
from ._edits import code_of
from ._tree import assignment_targets, enclosing_function, names_spelled, walk, walk_of

_DEPTH = 6


def _dotted(node: Any) -> Optional[str]:
    """``a``, ``a.b.c``: its text; anything else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and _dotted(node.value) is not None:
        return f"{_dotted(node.value)}.{node.attr.value}"
    return None


def _keyed(node: Any) -> Optional[Tuple[Any, str]]:
    """``x.y["key"]`` (one literal key of a name or attribute): ``x.y`` and ``["key"]``."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and _dotted(node.value) is not None):
        return None
    index = node.slice[0].slice
    if not (isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.Integer))):
        return None
    return node.value, f"[{code_of(index.value).strip()}]"


def _torch_query(node: Any) -> bool:
    """``torch.cuda.is_available()``: a call of torch's without arguments."""
    return (
        isinstance(node, cst.Call) and not node.args and (_dotted(node.func) or "").startswith("torch.")
    )


def _declared_global(func: Any, name: str) -> bool:
    return any(
        isinstance(n, cst.Global) and any(item.name.value == name for item in n.names) for n in walk(func.body)
    )


def _params(func: Any) -> List[str]:
    p = func.params
    return [x.name.value for x in list(p.posonly_params) + list(p.params) + list(p.kwonly_params)]


class Roots:
    """The roots of test expressions in one file (see the module docstring)."""

    def __init__(self, rule: Any, used_elsewhere: Dict[str, str]) -> None:
        self.rule = rule
        self.parents = rule.parents
        self.module = rule.tree
        self.elsewhere = used_elsewhere
        self._attribute_cache: Dict[int, Dict[str, Any]] = {}

    def root(self, func: Any, node: Any, depth: int = 0) -> str:
        text = _dotted(node)
        scope = f"{id(func)}:" if func is not None else "<module>:"
        if depth > _DEPTH:
            return scope + code_of(node).strip()
        if text is None:
            keyed = _keyed(node)
            if keyed is not None:  # self.config["fp16"]: read like an attribute
                return self.root(func, keyed[0], depth + 1) + keyed[1]
            if _torch_query(node):
                return "<module>:" + code_of(node).strip()  # torch.cuda.is_available(): one answer per process
            return self._composite(func, node, depth)
        head, _, rest = text.partition(".")
        if func is not None and head not in _params(func) and not self._assigned_in(func, head):
            outer = enclosing_function(self.parents, func)
            if outer is not None:  # a closure reads the enclosing function's name
                return self.root(outer, node, depth + 1)
        if func is not None and _declared_global(func, head):
            func = None
        rest = f".{rest}" if rest else ""
        cls = self._class_of(func)
        if func is not None and head in _params(func):
            if cls is not None and head == _params(func)[0]:
                if not rest:
                    return f"{id(cls)}:self"
                attr, _, more = rest[1:].partition(".")
                return self._attribute(cls, attr, f".{more}" if more else "", depth)
            flowed = None
            if cls is None:
                flowed = self._passed(func, func.name.value, 0, head, rest, depth)
            elif func.name.value == "__init__" and not self._assigned_in(func, head):
                flowed = self._passed(cls, cls.name.value, 1, head, rest, depth)  # the constructor's calls
            else:
                flowed = self._method_passed(func, head, rest, depth)
            if flowed is None and cls is not None:
                stored = self._stored_on_self(func, cls, head)
                flowed = f"{id(cls)}:self.{stored}{rest}" if stored else None
            return flowed if flowed is not None else scope + text
        value = self._one_assignment(func, head)
        if value is not None:
            return self.root(func, cst.parse_expression(value + rest), depth + 1)
        if func is not None and self._assigned_in(func, head):
            return scope + text
        return "<module>:" + text

    def _composite(self, func: Any, node: Any, depth: int) -> str:
        """``self.amp_args is not None``: its text, each name or attribute chain in it
        replaced by its root (a call or subscript keeps its own text, in its function)."""
        if any(isinstance(n, (cst.Call, cst.Subscript, cst.Lambda, cst.Await, cst.NamedExpr)) for n in walk(node)):
            return (f"{id(func)}:" if func is not None else "<module>:") + code_of(node).strip()
        parents = self.parents
        chains = [
            n for n in walk(node)
            if _dotted(n) is not None and not (isinstance(parents.get(n), cst.Attribute) and parents[n].value is n)
            and not (isinstance(parents.get(n), cst.Attribute) and parents[n].attr is n)
        ]
        marks = {id(n): f"__root{i}__" for i, n in enumerate(chains)}

        class _Mark(cst.CSTTransformer):
            def on_leave(self, original: Any, updated: Any) -> Any:
                return cst.Name(marks[id(original)]) if id(original) in marks else updated

        text = code_of(node.visit(_Mark())).strip()
        for n in chains:
            text = text.replace(marks[id(n)], "(" + self.root(func, n, depth + 1) + ")")
        return text

    # --- the mechanisms --------------------------------------------------------------------

    def _class_of(self, func: Any) -> Any:
        """The class ``func`` is a plain method of (no static or class method)."""
        owner = self.parents.get(self.parents.get(func)) if func is not None else None
        if not isinstance(owner, cst.ClassDef) or any(
            _dotted(d.decorator) in ("staticmethod", "classmethod") for d in func.decorators
        ):
            return None
        return owner

    def _stored_on_self(self, func: Any, cls: Any, name: str) -> str:
        """``self.fp16 = fp16`` (or one element of a tuple assignment) in ``func``, the
        attribute's only assignment and ``name`` never rebound: the attribute."""
        if self._assigned_in(func, name):
            return ""
        for attr, (value, where) in self._attributes(cls).items():
            if where is func and isinstance(value, cst.Name) and value.value == name:
                return attr
        return ""

    def _attribute(self, cls: Any, attr: str, rest: str, depth: int) -> str:
        """``self.fp16`` in a method of ``cls``: where ``__init__`` stores its parameter there
        (the attribute's only assignment), that parameter's root through the constructor's
        calls; else the attribute of the class."""
        value, where = self._attributes(cls).get(attr, (None, None))
        if isinstance(value, cst.Name) and where is not None and where.name.value == "__init__":
            if value.value in _params(where)[1:] and not self._assigned_in(where, value.value):
                flowed = self._passed(cls, cls.name.value, 1, value.value, rest, depth, where)
                if flowed is not None:
                    return flowed
        if isinstance(value, cst.Attribute) and _dotted(value) is not None and where is not None:
            if where.name.value == "__init__":  # self.fp16 = args.fp16: the value __init__ read
                return self.root(where, cst.parse_expression(_dotted(value) + rest), depth + 1)
        return f"{id(cls)}:self.{attr}{rest}"

    def _attributes(self, cls: Any) -> Dict[str, Any]:
        """Attributes of ``cls``'s instances assigned once in the file (on the receiver of one of
        its methods, by a one-target assignment): name -> (the value, that method); assignments
        on the receivers of other classes' methods do not count, unless they derive from it."""
        key = id(cls)
        if key in self._attribute_cache:
            return self._attribute_cache[key]
        seen: Dict[str, List[Any]] = {}
        for node in walk_of(self.module, cst.Assign, cst.AugAssign, cst.AnnAssign):
            func = enclosing_function(self.parents, node)
            owner = self._class_of(func)
            receiver = _params(func)[0] if owner is not None and _params(func) else None
            pairs = _pairs(node) if isinstance(node, cst.Assign) else [(t, None) for t in assignment_targets(node)]
            if not pairs:
                pairs = [(n, None) for t in assignment_targets(node) for n in walk(t)]
            for target, value in pairs:
                if not isinstance(target, cst.Attribute):
                    continue
                mine = isinstance(target.value, cst.Name) and target.value.value == receiver
                if mine and owner is not cls and not any(
                    isinstance(n, cst.Name) and n.value == cls.name.value for b in owner.bases for n in walk(b)
                ):
                    continue  # another class's own attribute
                seen.setdefault(target.attr.value, []).append((value, func) if mine and owner is cls else (None, None))
        found = {attr: hits[0] for attr, hits in seen.items() if len(hits) == 1 and hits[0][1] is not None}
        self._attribute_cache[key] = found
        return found

    def _passed(
        self, func: Any, name: str, skip: int, param: str, rest: str, depth: int, where: Any = None
    ) -> Optional[str]:
        """The one root every call of ``func`` (a module-level function or class, called by
        ``name`` in this file, or bound by ``functools.partial``) passes to its parameter
        ``param`` (of ``where``, the class's ``__init__``; ``skip``: leading parameters the call
        does not pass)."""
        where = where if where is not None else (func if skip == 0 else self._init_of(func))
        if where is None or self.parents.get(func) is not self.module or func.decorators:
            return None
        if name in self.elsewhere or self._assigned_in(where, param):
            return None
        names = _params(where)[skip:]
        index = names.index(param)
        default = next((p.default for p in where.params.params if p.name.value == param), None)
        calls: List[Any] = []
        for node in names_spelled(self.module, name):
            if node is func.name or _member(self.parents, node):
                continue
            holder = self.parents.get(node)
            if isinstance(holder, cst.Call) and holder.func is node:
                calls.append((holder, False))
            elif isinstance(holder, cst.Arg) and _is_partial(self.parents.get(holder), holder) and skip == 0:
                calls.append((self.parents.get(holder), True))  # partial(f, a, ...): a is f's first argument
            else:
                return None
        return self._agree(calls, index, param, default, rest, depth)

    def _method_passed(self, func: Any, param: str, rest: str, depth: int) -> Optional[str]:
        """``obj.name(...)`` calls of method ``func``, the only definition of that name in the
        file and never read but to be called: the one root they pass to ``param``."""
        name = func.name.value
        if func.decorators or name in self.elsewhere or self._assigned_in(func, param):
            return None
        if sum(1 for d in walk_of(self.module, cst.FunctionDef) if d.name.value == name) != 1:
            return None
        calls: List[Any] = []
        for node in names_spelled(self.module, name):
            if node is func.name:
                continue
            holder = self.parents.get(node)
            call = self.parents.get(holder)
            if not (isinstance(holder, cst.Attribute) and holder.attr is node
                    and isinstance(call, cst.Call) and call.func is holder):
                return None
            calls.append((call, False))
        default = next((p.default for p in func.params.params if p.name.value == param), None)
        return self._agree(calls, _params(func)[1:].index(param), param, default, rest, depth)

    def _agree(self, calls: List[Any], index: int, param: str, default: Any, rest: str, depth: int) -> Optional[str]:
        """The one root ``calls`` (each with whether it is a ``partial``) pass at ``index``."""
        found: Set[str] = set()
        for call, partial in calls:
            if not partial:
                arg = _slot(call, index, param)
            else:
                bound = [a for a in call.args[1:] if a.keyword is None]
                if any(a.star for a in call.args) or index >= len(bound):
                    return None
                arg = bound[index]
            if arg is None:
                if any(a.star for a in call.args) or default is None:
                    return None
                found.add(self.root(None, default, depth + 1))  # the default: a constant
                continue
            caller = enclosing_function(self.parents, call)
            text = _dotted(arg.value)
            value = arg.value if text is None or not rest else cst.parse_expression(text + rest)
            found.add(self.root(caller, value, depth + 1))
        return found.pop() if len(found) == 1 else None

    def _init_of(self, cls: Any) -> Any:
        return next(
            (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None
        )

    def _one_assignment(self, func: Any, name: str) -> Optional[str]:
        """``use_amp = args.amp``, the only binding of ``name`` in its scope: the value's text."""
        scope = func if func is not None else self.module
        values = []
        for node in walk(scope.body if func is not None else scope):
            if func is None and enclosing_function(self.parents, node) is not None:
                continue
            if func is not None and enclosing_function(self.parents, node) is not func:
                continue
            for target in assignment_targets(node):
                if name in _bound(target):
                    pairs = _pairs(node) if isinstance(node, cst.Assign) else []
                    values.extend(v for t, v in pairs if isinstance(t, cst.Name) and t.value == name)
                    values.append(None) if not pairs else None
        if len(values) != 1 or _dotted(values[0]) is None:
            return None
        return _dotted(values[0])

    def _assigned_in(self, func: Any, name: str) -> bool:
        return any(name in _bound(t) for node in walk(func.body) for t in assignment_targets(node))


def _bound(target: Any) -> List[str]:
    """The plain names an assignment target binds (not ``x`` of ``self.x`` or ``d[x]``)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound(target.value)
    return []


def _pairs(node: cst.Assign) -> List[Any]:
    """(target, value) of a one-target assignment, element-wise for ``a, b = x, y``."""
    if len(node.targets) != 1:
        return []
    target, value = node.targets[0].target, node.value
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements) and not any(
            isinstance(e, cst.StarredElement) for e in list(target.elements) + list(value.elements)
        ):
            return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        return []
    return [(target, value)]


def _member(parents: Any, node: cst.Name) -> bool:
    """``x.name``, ``f(name=...)``, ``def f(name)``: ``node`` names no module-level binding."""
    parent = parents.get(node)
    return (
        (isinstance(parent, cst.Attribute) and parent.attr is node)
        or (isinstance(parent, cst.Arg) and parent.keyword is node)
        or isinstance(parent, cst.Param)
    )


def _is_partial(call: Any, arg: Any) -> bool:
    """``partial(f, ...)`` / ``functools.partial(f, ...)`` with ``arg`` its first argument."""
    return (
        isinstance(call, cst.Call) and _dotted(call.func) in ("partial", "functools.partial")
        and bool(call.args) and call.args[0] is arg and arg.keyword is None and not arg.star
    )


def conditions(parents: Any, node: Any, stop: Any) -> List[Tuple[Any, bool]]:
    """The tests with the value they have where ``node`` runs, from the ifs around it below
    ``stop``: true for an ``if`` whose body holds it, false for one whose ``else`` or ``elif``
    does, and false for ``if X: return`` before it in an enclosing block."""
    found: List[Tuple[Any, bool]] = []
    cur = node
    while cur is not None and cur is not stop:
        parent = parents.get(cur)
        if isinstance(parent, cst.If) and parent.body is cur:
            found.append((parent.test, True))
        elif isinstance(parent, cst.If) and parent.orelse is cur:
            found.append((parent.test, False))  # an elif
        elif isinstance(parent, cst.Else) and isinstance(parents.get(parent), cst.If):
            found.append((parents[parent].test, False))
        index = _index(parent, cur)
        if index is not None:
            for stmt in parent.body[:index]:
                if isinstance(stmt, cst.If) and stmt.orelse is None and _exits(stmt.body):
                    found.append((stmt.test, False))
        cur = parent
    return found


def _facts(test: Any, truth: bool) -> List[Tuple[Any, bool]]:
    """``test`` has value ``truth``: it and what follows for its parts (``a and b`` true: both
    true; ``a or b`` false: both false; ``not a``: ``a`` the other way)."""
    found = [(test, truth)]
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        found += _facts(test.expression, not truth)
    elif isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) == truth:
        found += _facts(test.left, truth) + _facts(test.right, truth)
    return found


def _index(block: Any, stmt: Any) -> Optional[int]:
    """The position of ``stmt`` in ``block``'s statements, None if ``block`` is no block."""
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    return next((i for i, s in enumerate(block.body) if s is stmt), None)


def _exits(block: Any) -> bool:
    body = getattr(block, "body", [])
    last = body[-1] if body else None
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
    return isinstance(small, (cst.Return, cst.Raise))


def set_after(parents: Any, module: Any, stmt: Any, func: Any) -> List[Any]:
    """Flags set true right after the initialize's statement in its block (``self.apex =
    True``) and assigned nowhere else but before it (``_set_before``)."""
    block = parents.get(stmt)
    index = _index(block, stmt)
    if index is None:
        return []
    found = []
    position = _position(module, stmt)
    for later in block.body[index + 1:]:
        if not (isinstance(later, cst.SimpleStatementLine) and len(later.body) == 1):
            break
        small = later.body[0]
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            break
        target = small.targets[0].target
        if not (isinstance(small.value, cst.Name) and small.value.value == "True") or _dotted(target) is None:
            continue
        text = _dotted(target)
        others = [
            n for n in walk_of(module, cst.Assign, cst.AugAssign, cst.AnnAssign)
            if n is not small and any(_dotted(t) == text for t in assignment_targets(n))
        ]
        if all(_set_before(parents, module, n, func, position) for n in others):
            found.append(target)
    return found


def _set_before(parents: Any, module: Any, node: Any, func: Any, position: int) -> bool:
    """``node`` (another assignment of the flag) runs before the initialize can: earlier in
    ``func``, or in the ``__init__`` of ``func``'s class before its call ``self.<func>(...)``
    (torchdistill: ``self.apex = None`` in ``__init__``, then ``self.setup(...)``)."""
    where = enclosing_function(parents, node)
    if where is func:
        return _position(module, node) < position
    if where is None or func is None or where.name.value != "__init__" or parents.get(where) is not parents.get(func):
        return False
    at = _position(module, node)
    return any(
        isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == func.name.value
        and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"
        and enclosing_function(parents, call) is where and _position(module, call) > at
        for call in walk_of(where, cst.Call)
    )


def _position(module: Any, node: Any) -> int:
    for index, other in enumerate(walk(module)):
        if other is node:
            return index
    return -1


class Switch:
    """What holds wherever the GradScaler is on: the roots of the tests true (``roots``) and
    false (``false``) wherever every initialize runs, and the true ones that compare a root with
    a literal (``params.amp >= 0``; an opt level read at run time is not ``"O0"``, where the
    GradScaler is off)."""

    def __init__(self, roots: Set[str], false: Set[str], comparisons: Set[Tuple[str, str, Any]]) -> None:
        self.roots = roots
        self.false = false
        #: (root, operator, literal) of the comparisons that hold, a false one as its complement
        self.comparisons = comparisons


def switch_of(rule: Any, training: List[Any], used_elsewhere: Dict[str, str]) -> Tuple[Roots, Switch]:
    """The roots of the file and the switch of ``training`` (its initializes)."""
    roots = Roots(rule, used_elsewhere)
    parents = rule.parents
    per_true, per_false, per_compare = [], [], []
    for init in training:
        tests = [(init.func, t, v) for t, v in conditions(parents, init.stmt, init.func)]
        tests += [(init.func, t, True) for t in set_after(parents, rule.tree, init.stmt, init.func)]
        tests += _caller_conditions(rule, roots, init.func)
        facts = [(f, n, v) for f, t, value in tests for n, v in _facts(t, value)]
        per_true.append({roots.root(f, n) for f, n, v in facts if v})
        per_false.append({roots.root(f, n) for f, n, v in facts if not v})
        compare = {c for f, n, v in facts for c in [_comparison(roots, f, n, v)] if c is not None}
        level = next((a.value for a in init.call.args if a.keyword and a.keyword.value == "opt_level"), None)
        if level is not None and not isinstance(level, cst.SimpleString):
            compare.add((roots.root(init.func, level), "NotEqual", "O0"))  # the GradScaler is off under O0
        per_compare.append(compare)
    if not training:
        return roots, Switch(set(), set(), set())
    return roots, Switch(set.intersection(*per_true), set.intersection(*per_false), set.intersection(*per_compare))


def _comparison(roots: Roots, func: Any, test: Any, truth: bool = True) -> Optional[Tuple[str, str, Any]]:
    """``x >= 0``, ``x is not None`` (with value ``truth``): (the root of ``x``, the operator
    that holds, the literal), else None."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    try:
        value = ast.literal_eval(code_of(target.comparator).strip())
    except (ValueError, SyntaxError):
        return None
    op = type(target.operator).__name__
    if op not in _OPS or not isinstance(value, (int, float, str, type(None), bool)):
        return None
    return roots.root(func, test.left), op if truth else _COMPLEMENT[op], value


#: the comparisons ``_excludes`` decides, by LibCST operator class name
_OPS = {
    "Equal": lambda a, b: a == b, "NotEqual": lambda a, b: a != b, "LessThan": lambda a, b: a < b,
    "LessThanEqual": lambda a, b: a <= b, "GreaterThan": lambda a, b: a > b,
    "GreaterThanEqual": lambda a, b: a >= b, "Is": lambda a, b: a is b, "IsNot": lambda a, b: a is not b,
}


#: the operator that holds where one does not
_COMPLEMENT = {
    "Equal": "NotEqual", "NotEqual": "Equal", "LessThan": "GreaterThanEqual", "GreaterThanEqual": "LessThan",
    "LessThanEqual": "GreaterThan", "GreaterThan": "LessThanEqual", "Is": "IsNot", "IsNot": "Is",
}


def _excludes(switch: Switch, found: Tuple[str, str, Any]) -> bool:
    """``found`` (``x == -1``, ``x is None``) is false wherever a comparison of the switch
    (``x >= 0``, ``x is not None``) holds: its one value fails it."""
    root, op, value = found
    if op not in ("Equal", "Is"):
        return False  # (x != c holds wherever x == c fails: only a value decides)
    for other_root, other_op, other in switch.comparisons:
        if other_root != root or type(other) is not type(value):
            continue
        try:
            if not _OPS[other_op](value, other):
                return True
        except TypeError:
            continue
    return False


def holds(roots: Roots, switch: Switch, func: Any, test: Any, want: bool, amp_tests: Dict[int, bool]) -> bool:
    """``test`` (in ``func``) is provably ``want`` wherever the GradScaler is on: ``amp_tests``
    are the apex.amp-or-None tests (id -> whether the test means amp is on) the rules rewrite
    to the GradScaler's own switch."""
    if id(test) in amp_tests:
        return amp_tests[id(test)] == want
    if roots.root(func, test) in (switch.roots if want else switch.false):
        return True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return holds(roots, switch, func, test.expression, not want, amp_tests)
    if isinstance(test, cst.BooleanOperation):
        left = holds(roots, switch, func, test.left, want, amp_tests)
        right = holds(roots, switch, func, test.right, want, amp_tests)
        every = isinstance(test.operator, cst.And) == want  # true `and`, false `or`: both parts
        return (left and right) if every else (left or right)
    found = _comparison(roots, func, test, want)
    if found is None:
        return False
    # the comparison itself (or its complement) holds, or one value of the switch fails it
    return found in switch.comparisons or _excludes(switch, _comparison(roots, func, test, not want))


def plain_covered(
    roots: Roots, switch: Switch, parents: Any, func: Any, call: Any, amp_tests: Dict[int, bool]
) -> bool:
    """A plain ``.backward()`` ``call`` of ``func`` never runs with the GradScaler on: an if
    around it takes the other way wherever the switch holds."""
    cur = call
    while cur is not None and cur is not func:
        parent = parents.get(cur)
        if isinstance(parent, cst.If):
            if parent.body is cur and holds(roots, switch, func, parent.test, False, amp_tests):
                return True
            if parent.orelse is cur and holds(roots, switch, func, parent.test, True, amp_tests):
                return True
        cur = parent
    return False


def _caller_conditions(rule: Any, roots: Roots, func: Any) -> List[Tuple[Any, Any, bool]]:
    """The conditions (function, test, its value) the calls of ``func`` (a method called as
    ``self.name()`` or a module-level function called by name, only in this file) all run
    under, by root."""
    if func is None or func.name.value in roots.elsewhere:
        return []
    parents = rule.parents
    cls = roots._class_of(func)
    if cls is None and parents.get(func) is not rule.tree:
        return []
    calls = []
    for node in names_spelled(rule.tree, func.name.value):
        if node is func.name or (cls is None and _member(parents, node)):
            continue
        holder = parents.get(node)
        if cls is not None:
            ok = isinstance(holder, cst.Attribute) and holder.attr is node and isinstance(holder.value, cst.Name)
            ok = ok and holder.value.value == "self" and roots._class_of(enclosing_function(parents, holder)) is cls
            call = parents.get(holder) if ok else None
            if not (isinstance(call, cst.Call) and call.func is holder):
                return []
        else:
            call = holder
            if not (isinstance(call, cst.Call) and call.func is node):
                return []
        calls.append(call)
    if not calls:
        return []
    found = []
    for call in calls:
        caller = enclosing_function(parents, call)
        found.append({(roots.root(caller, t), v): (caller, t, v) for t, v in conditions(parents, call, caller)})
    common = set.intersection(*(set(f) for f in found))
    return [found[0][key] for key in sorted(common)]


def stepped_apart(parents: Any, func: Any, call: Any, steps: List[Any]) -> bool:
    """A plain ``.backward()`` ``call`` that none of ``steps`` (those that step through the
    GradScaler) can follow: each lies on the other side of an if of ``func`` from it, and the
    branch of ``call`` steps after it (XLM: ``if params.amp == -1: loss.backward(); ...;
    optimizer.step() else: <scale>; optimizer.step()``), so its gradients are stepped there."""
    if not steps:
        return False
    sides = _sides(parents, func, call)
    for step in steps:
        cur, away = step, False
        while cur is not None and cur is not func and not away:
            parent = parents.get(cur)
            if id(parent) in sides and cur is not sides[id(parent)][1] and (parent.body is cur or parent.orelse is cur):
                branch = sides[id(parent)][1]
                order = list(walk(branch))
                at = next(i for i, n in enumerate(order) if n is call)
                away = any(  # a step of the same optimizer
                    isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step"
                    and code_of(n.func.value) == code_of(step.func.value)
                    for n in order[at:]
                )
            cur = parent
        if not away:
            return False
    return True


def _sides(parents: Any, func: Any, node: Any) -> Dict[int, Tuple[Any, Any]]:
    """The ifs of ``func`` around ``node``: id -> (the if, the branch holding ``node``)."""
    sides = {}
    cur = node
    while cur is not None and cur is not func:
        parent = parents.get(cur)
        if isinstance(parent, cst.If) and (parent.body is cur or parent.orelse is cur):
            sides[id(parent)] = (parent, cur)
        cur = parent
    return sides
