"""APX234: ``amp.<member>`` where no ``amp`` is bound.  A file that imports apex.amp only
inside a function (``from apex import amp`` in ``__init__``) and reads ``amp.scale_loss`` in
another one raises NameError there when that line runs, before and after the migration: the
site is no apex.amp site the rules can rewrite, so the finding says where it fails."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Set, Tuple

import libcst as cst
from libcst.metadata import BuiltinScope, ScopeProvider

from ._edits import code_of
from ._tree import walk, walk_of

#: the fixed part of the APX234 message (its TODO is reported again by later runs)
UNBOUND_TODO = "(its apex.amp import), so this line raises NameError when it runs, in the original too"

#: the modules whose ``amp`` member is apex.amp for this check
AMP_PACKAGES = ("apex", "apexcompat")


def _amp_imports(parents: Any, module: cst.Module) -> Dict[str, Set[str]]:
    """The local names that ``from apex import amp [as x]`` binds inside a function -> the
    names of the functions that hold such an import (every enclosing one)."""
    names: Dict[str, Set[str]] = {}
    for node in walk_of(module, cst.ImportFrom):
        if node.module is None or node.relative:
            continue
        if code_of(node.module) not in AMP_PACKAGES or isinstance(node.names, cst.ImportStar):
            continue
        owners = []
        cur = node
        while cur in parents:
            cur = parents[cur]
            if isinstance(cur, cst.FunctionDef):
                owners.append(cur.name.value)
        for alias in node.names:
            if owners and code_of(alias.name) == "amp":
                local = code_of(alias.asname.name) if alias.asname is not None else "amp"
                names.setdefault(local, set()).update(owners)
    return names


def _declared_global(module: cst.Module, names: Iterable[str]) -> bool:
    wanted = set(names)
    return any(
        isinstance(node, cst.Global) and any(item.name.value in wanted for item in node.names) for node in walk(module)
    )


def unbound_amp_uses(rule: Any, module: cst.Module) -> List[Tuple[cst.Attribute, str]]:
    """``amp.<member>`` reads whose ``amp`` (a name the file binds to apex.amp inside some
    function only) resolves to no binding in its scope, each with its APX234 message."""
    imports = _amp_imports(rule.parents, module)
    if not imports or _declared_global(module, imports):
        return []
    found: List[Tuple[cst.Attribute, str]] = []
    for node in walk(module):
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value in imports):
            continue
        name = node.value.value
        scope = rule.get_metadata(ScopeProvider, node.value, None)
        if scope is None or [a for a in scope[name] if not isinstance(a.scope, BuiltinScope)]:
            continue
        where = " and ".join(f"{owner}()" for owner in sorted(imports[name]))
        found.append(
            (
                node,
                f"{code_of(node)}: the name {name} is bound only inside {where} {UNBOUND_TODO}; import apex.amp "
                "where it is used (or keep it on self) before migrating",
            )
        )
    return found
