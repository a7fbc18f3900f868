"""What a value is when the script runs with its default command-line flags.

A training loop that steps only at an accumulation boundary (``if (step + 1) %
args.gradient_accumulation_steps == 0: optimizer.step()``) steps after every backward when
the count is 1.  Whether it is 1 under the default flags is read from the file's own
``parser.add_argument("--gradient_accumulation_steps", type=int, default=1)``, where nothing
else in the file can give the attribute another value, or from the parser factory of another
file the script takes its parser from (``parser = get_argument_parser()``), whose flags the
cross-file plan hands over (``FilePlan.parser_factories``).  Every answer is None when unsure.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping, Optional, Tuple, Union

import libcst as cst

from ._edits import code_of
from ._tree import walk, walk_of

#: call text of a parser factory of another file -> (dest, default) of each flag it adds
Factories = Mapping[str, Tuple[Tuple[str, Union[int, str, None]], ...]]
NO_FACTORIES: Factories = MappingProxyType({})


def parser_factories(rule: Any) -> Factories:
    """The parser factories of other files that ``rule``'s file calls (from its plan)."""
    plan = rule.repo_plan()
    return dict(plan.parser_factories) if plan is not None else {}


def every_time_by_default(
    module: cst.Module, func: Any, test: cst.BaseExpression, factories: Factories = NO_FACTORIES
) -> Optional[str]:
    """The count ``K`` (its code) of an accumulation test ``<x> % K == 0`` when ``K`` is 1
    under the default flags, so that the test holds on every pass; else None."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    if not (isinstance(target.operator, cst.Equal) and _integer(target.comparator) == 0):
        return None
    left = test.left
    if not (isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Modulo)):
        return None
    if default_literal(module, func, left.right, factories) != 1:
        return None
    return code_of(left.right)


def default_literal(
    module: cst.Module, func: Any, expr: cst.BaseExpression, factories: Factories = NO_FACTORIES
) -> Union[int, str, None]:
    """The integer or string ``expr`` holds under the default flags: a literal;
    ``<args>.<dest>`` of an ``add_argument`` of this file (or of the parser factory in
    ``factories`` that made the parser) with a literal default, ``args`` bound once in
    ``func`` by ``parse_args()`` and the attribute never assigned in the file; or a local of
    ``func`` bound once, by a plain assignment of one of those."""
    literal = _literal(expr)
    if literal is not None:
        return literal
    if not isinstance(func, cst.FunctionDef):
        return None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        parsed = bound_once(func, expr.value.value)
        if not _parsed_flags(module, parsed):
            return None  # args rebuilt from a config file, a Namespace(...), a caller
        return _flag_default(module, expr.attr.value, _factory_flags(func, parsed, factories))
    if isinstance(expr, cst.Name):
        value = bound_once(func, expr.value)
        if value is None or isinstance(value, cst.Name):
            return None
        return default_literal(module, func, value, factories)
    return None


def _factory_flags(func: cst.FunctionDef, parsed: cst.Call, factories: Factories) -> Tuple[Tuple[str, Any], ...]:
    """The flags of the factory whose parser ``parsed`` parses: ``F().parse_args()``, or
    ``parser.parse_args()`` with ``parser = F()`` the one binding of ``parser`` in ``func``
    (a parser handed through anything else is not followed); () otherwise."""
    if not factories or not isinstance(parsed.func, cst.Attribute):
        return ()
    parser = parsed.func.value
    if isinstance(parser, cst.Name):
        parser = bound_once(func, parser.value)
    if not isinstance(parser, cst.Call):
        return ()
    return tuple(factories.get(code_of(parser.func), ()))


def _parsed_flags(module: cst.Module, value: Any) -> bool:
    """``parser.parse_args()``, or a call of a function of the file whose every return is
    that (``def parse_args(): ...; return parser.parse_args()``)."""
    if not isinstance(value, cst.Call) or value.args:
        return False
    if isinstance(value.func, cst.Attribute):
        return value.func.attr.value == "parse_args"
    if not isinstance(value.func, cst.Name):
        return False
    defs = [s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == value.func.value]
    if len(defs) != 1 or defs[0].asynchronous is not None:
        return False
    returns = [n for n in walk(defs[0].body) if isinstance(n, cst.Return)]
    nested = any(isinstance(n, (cst.FunctionDef, cst.Lambda)) for n in walk(defs[0].body))
    return bool(returns) and not nested and all(_parsed_flags(module, r.value) for r in returns)


def _literal(expr: Any) -> Union[int, str, None]:
    if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str):
        return expr.evaluated_value
    return _integer(expr)


def _integer(expr: Any) -> Optional[int]:
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value, 0)
        except ValueError:
            return None
    return None


def _flag_default(module: cst.Module, dest: str, added: Tuple[Tuple[str, Any], ...] = ()) -> Union[int, str, None]:
    """The default of the flag stored in ``dest``: every ``add_argument`` of the file storing
    there (and every flag of ``added``, the factory's) gives the same literal default, and
    nothing else in the file sets it (an attribute assignment, ``set_defaults``, ``setattr``)."""
    defaults = {default for name, default in added if name == dest}
    if None in defaults:
        return None
    for node in walk_of(module, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Attribute, cst.Call):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(isinstance(t, cst.Attribute) and t.attr.value == dest for tg in targets for t in walk(tg)):
                return None
        if isinstance(node, cst.Attribute) and node.attr.value == "__dict__":
            return None  # args.__dict__.update(...)
        if not isinstance(node, cst.Call):
            continue
        name = code_of(node.func).rsplit(".", 1)[-1]
        if name == "set_defaults" and any(a.star or (a.keyword is not None and a.keyword.value == dest) for a in node.args):
            return None
        if name == "setattr" and not _names_other(node, dest):
            return None
        if name != "add_argument" or _dest(node) != dest:
            continue
        default = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "default"), None)
        value = _literal(default)
        if value is None:
            return None
        defaults.add(value)
    return defaults.pop() if len(defaults) == 1 else None


def _names_other(call: cst.Call, dest: str) -> bool:
    """``setattr(x, "name", v)`` with a literal name other than ``dest``."""
    if len(call.args) < 2 or not isinstance(call.args[1].value, cst.SimpleString):
        return False
    return call.args[1].value.evaluated_value != dest


def _dest(call: cst.Call) -> Optional[str]:
    """Where argparse stores the flag ``call`` adds: ``dest=``, else its first long option,
    else its first short one (dashes become underscores)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dest":
            return arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else None
    options = [
        a.value.evaluated_value
        for a in call.args
        if a.keyword is None and isinstance(a.value, cst.SimpleString) and isinstance(a.value.evaluated_value, str)
    ]
    long = [o for o in options if o.startswith("--")]
    short = [o for o in options if o.startswith("-") and not o.startswith("--")]
    chosen = long[0][2:] if long else (short[0][1:] if short else None)
    return chosen.replace("-", "_") if chosen else None


def bound_once(func: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    """The value of the one plain ``name = value`` of ``func`` when nothing else there binds
    ``name`` (no parameter, other assignment, loop or with target, global, nested scope)."""
    params = func.params
    every = (*params.posonly_params, *params.params, *params.kwonly_params)
    star = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    if any(p.name.value == name for p in (*every, *star)):
        return None
    found = []
    for node in walk(func.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
            return None
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if any(isinstance(n, cst.Name) and n.value == name for n in walk(node)):
                return None
        if isinstance(node, cst.Assign):
            hits = [t for t in node.targets if name in _bound_names(t.target)]
            if hits:
                plain = len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
                found.append(node.value if plain else None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            if isinstance(node.target, cst.Name) and node.target.value == name:
                found.append(None)
        elif isinstance(node, (cst.For, cst.CompFor)):
            if name in _bound_names(node.target):
                return None
        elif isinstance(node, (cst.AsName, cst.NamedExpr)):
            if name in _bound_names(node.name if isinstance(node, cst.AsName) else node.target):
                return None
    return found[0] if len(found) == 1 else None


def _bound_names(target: Any) -> set:
    """The names a target binds (``a``, ``a, (b, *c)``); not those an attribute or subscript
    target only reads (``args.fp16 = ...`` binds nothing)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_bound_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return set()
