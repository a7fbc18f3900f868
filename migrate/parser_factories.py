"""Top-level functions that build an argparse parser and return it, with the defaults of
the flags they add.

A script often takes its flags from a helper of another file (``parser =
get_argument_parser(); args = parser.parse_args()``), so the defaults the per-file rules
read (``rules/_default_flags``) are written there.  Only a function of one exact shape is
read: an ``argparse.ArgumentParser(...)`` bound to a name, then nothing but
``<name>.add_argument(...)`` statements, then ``return <name>``.  A parser handed on, added
to under a condition or in a loop, given ``set_defaults`` or an argument group is not one
(the defaults could then differ from what is written).  The plan hands the answer to the
files that call such a function (``FilePlan.parser_factories``).
"""

from __future__ import annotations

import ast
from typing import Dict, Optional, Set, Tuple, Union

#: a flag's default: an int or str literal; None for anything else (unknown)
Default = Union[int, str, None]
#: (dest, default) of each flag a parser factory adds, in order
FlagDefaults = Tuple[Tuple[str, Default], ...]


def parser_factories(tree: ast.Module) -> Dict[str, FlagDefaults]:
    """Name -> the flags it adds, for each top-level parser factory of ``tree``."""
    names = _parser_classes(tree)
    found: Dict[str, FlagDefaults] = {}
    if not names:
        return found
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
            flags = _factory_flags(stmt, names)
            if flags is not None:
                found[stmt.name] = flags
    return found


def _parser_classes(tree: ast.Module) -> Set[str]:
    """How the module-level imports name ``argparse.ArgumentParser`` (``argparse.ArgumentParser``,
    ``ArgumentParser``, ``ap.ArgumentParser``)."""
    names: Set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            names |= {f"{a.asname or a.name}.ArgumentParser" for a in stmt.names if a.name == "argparse"}
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "argparse" and not stmt.level:
            names |= {a.asname or a.name for a in stmt.names if a.name == "ArgumentParser"}
    return names


def _factory_flags(func: ast.FunctionDef, classes: Set[str]) -> Optional[FlagDefaults]:
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) < 2:
        return None
    first, last = body[0], body[-1]
    if not (
        isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
        and isinstance(first.value, ast.Call)
        and _dotted(first.value.func) in classes
    ):
        return None
    parser = first.targets[0].id
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id == parser):
        return None
    flags = []
    for stmt in body[1:-1]:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "add_argument"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == parser
        ):
            return None
        dest = _dest(call)
        if dest is None:
            return None  # a flag stored where we cannot tell: any dest may be it
        flags.append((dest, _default(call)))
    return tuple(flags)


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return f"{expr.value.id}.{expr.attr}"
    return ""


def _dest(call: ast.Call) -> Optional[str]:
    """Where argparse stores the flag: ``dest=``, else its first long option, else its
    first short one, else a positional's name (dashes become underscores)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    for keyword in call.keywords:
        if keyword.arg == "dest":
            value = keyword.value
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
    options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(options) != len(call.args) or not options:
        return None
    long = [o for o in options if o.startswith("--")]
    short = [o for o in options if o.startswith("-") and not o.startswith("--")]
    if long:
        return long[0][2:].replace("-", "_")
    if short:
        return short[0][1:].replace("-", "_")
    return options[0] if len(options) == 1 else None


def _default(call: ast.Call) -> Default:
    value = next((k.value for k in call.keywords if k.arg == "default"), None)
    if isinstance(value, ast.Constant) and type(value.value) in (int, str):
        return value.value
    return None
