"""LibCST's ``AddImportsVisitor`` on the module's own statements only, with the same result.

The visitor only ever reads and edits the block of import lines at the top of a module
(after a docstring or a ``__strict__`` flag): it merges wanted names into a ``from m import``
line there, and puts the other wanted imports at the end of that block.  But it is a
matcher-aware transformer, so LibCST walks and rebuilds every node of the file to get
there: over a second on a big training script, for one ``import functools``, and every
statement comes back as a new object, so what was known of the old ones is lost too.
``add_imports`` does the same edits on the statement list and keeps every other statement
as it was.  The behaviour it reproduces, step by step (tested against LibCST's visitor):

1. the top block: the statements after the first one if that is a docstring (a plain
   string) or a ``__strict__ = ...`` line, up to the first that is not a line holding one
   ``import`` or ``from ... import``;
2. what the block imports is taken off what is wanted (a ``from m import *`` there covers
   every name of ``m``; an ``import m as a`` only the same alias; an ``import m.sub`` covers
   ``import m`` too, since it binds ``m``: the one place where LibCST would add a line that
   only repeats a binding);
3. the first ``from m import ...`` line of the block that names a module still wanted gets
   the wanted names in front of its own, sorted, the aliased ones after the plain ones;
4. the rest becomes new lines after the block: ``from __future__`` ones before it, then
   ``import m`` (sorted), ``import m as a``, ``from m import ...``; the first statement after
   them gets a blank line above it unless it has one already.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, ImportItem
from libcst.helpers import get_absolute_module_from_package_for_import

_Wanted = Tuple[str, Optional[str]]  # (object, alias) of a from-import


def add_imports(context: CodemodContext, tree: cst.Module) -> Optional[cst.Module]:
    """``AddImportsVisitor(context).transform_module(tree)``, printing the same text; None
    when a relative import or a ``__future__`` module is wanted (LibCST's visitor resolves
    the first and refuses the second)."""
    items: List[ImportItem] = list(context.scratch.get(AddImportsVisitor.CONTEXT_KEY, ()))
    if any(item.relative or (item.module == "__future__" and (item.obj_name is None or item.alias)) for item in items):
        return None
    package = context.full_package_name
    start = 1 if _leading_statement_skipped(tree) else 0
    block = _top_block(tree, start)

    plain: Set[str] = {i.module for i in items if i.obj_name is None and i.alias is None}
    aliased: Dict[str, str] = {i.module: i.alias for i in items if i.obj_name is None and i.alias is not None}
    names: Dict[str, Set[str]] = {}
    for module in sorted({i.module for i in items if i.obj_name is not None and i.alias is None}):
        names[module] = {i.obj_name for i in items if i.module == module and i.obj_name is not None and i.alias is None}
    renamed: Dict[str, List[_Wanted]] = {}
    for module in sorted({i.module for i in items if i.obj_name is not None and i.alias is not None}):
        renamed[module] = [(i.obj_name, i.alias) for i in items if i.module == module and i.obj_name is not None and i.alias is not None]

    _take_off_what_the_block_imports(block, package, plain, aliased, names, renamed)
    body = list(tree.body)
    for index in range(start, start + len(block)):
        body[index] = _merged(body[index], package, names, renamed)
    if not (plain or aliased or names or renamed):
        return tree.with_changes(body=body) if body != list(tree.body) else tree
    return tree.with_changes(body=_with_new_lines(tree, body, start, start + len(block), plain, aliased, names, renamed))


def _leading_statement_skipped(tree: cst.Module) -> bool:
    if not tree.body or not isinstance(tree.body[0], cst.SimpleStatementLine) or len(tree.body[0].body) != 1:
        return False
    first = tree.body[0].body[0]
    if isinstance(first, cst.Expr):
        return isinstance(first.value, cst.SimpleString)
    return (
        isinstance(first, cst.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0].target, cst.Name)
        and first.targets[0].target.value == "__strict__"
    )


def _top_block(tree: cst.Module, start: int) -> List[cst.SimpleStatementLine]:
    block = []
    for statement in tree.body[start:]:
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))
        ):
            break
        block.append(statement)
    return block


def _take_off_what_the_block_imports(
    block: List[cst.SimpleStatementLine],
    package: Optional[str],
    plain: Set[str],
    aliased: Dict[str, str],
    names: Dict[str, Set[str]],
    renamed: Dict[str, List[_Wanted]],
) -> None:
    have_plain: Set[str] = set()
    have_aliased: Dict[str, str] = {}
    have_names: Dict[str, Set[str]] = {}
    have_renamed: Dict[str, List[_Wanted]] = {}
    for line in block:
        statement = line.body[0]
        if isinstance(statement, cst.Import):
            for alias in statement.names:
                if alias.asname is None:
                    # ``import torch.utils.data`` binds ``torch`` too: a wanted ``import torch``
                    # would only repeat it (LibCST's visitor adds it all the same)
                    parts = alias.evaluated_name.split(".")
                    have_plain.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                else:
                    have_aliased[alias.evaluated_name] = str(alias.evaluated_alias)
            continue
        module = get_absolute_module_from_package_for_import(package, statement)  # type: ignore[arg-type]
        if module is None:
            continue
        if isinstance(statement.names, cst.ImportStar):
            have_names[module] = {"*"}
            continue
        pairs = [(a.evaluated_name, str(a.evaluated_alias)) for a in statement.names if a.asname is not None]
        if pairs:
            have_renamed.setdefault(module, []).extend(pairs)
        objects = {a.evaluated_name for a in statement.names if a.asname is None}
        if objects:
            known = have_names.setdefault(module, set())
            if "*" in known:
                have_names[module] = {"*"}
            else:
                known.update(objects)
    plain -= have_plain
    for module, alias in have_aliased.items():
        if aliased.get(module) == alias:
            del aliased[module]
    for module, pairs in have_renamed.items():
        for pair in pairs:
            if pair in renamed.get(module, ()):
                renamed[module].remove(pair)
                if not renamed[module]:
                    del renamed[module]
    for module, objects in have_names.items():
        if module not in names:
            continue
        left = set() if "*" in objects else names[module] - objects
        if left:
            names[module] = left
        else:
            del names[module]


def _merged(
    line: cst.BaseStatement, package: Optional[str], names: Dict[str, Set[str]], renamed: Dict[str, List[_Wanted]]
) -> cst.BaseStatement:
    """``line`` (of the top block) with the wanted names of its ``from`` module in front."""
    statement = line.body[0]  # type: ignore[attr-defined]
    if not isinstance(statement, cst.ImportFrom) or isinstance(statement.names, cst.ImportStar):
        return line
    module = get_absolute_module_from_package_for_import(package, statement)
    if module is None or (module not in names and module not in renamed):
        return line
    new = [cst.ImportAlias(name=cst.Name(name)) for name in sorted(names.pop(module, ()))]
    new += [
        cst.ImportAlias(name=cst.Name(name), asname=cst.AsName(name=cst.Name(alias)))
        for name, alias in sorted(renamed.pop(module, ()))
    ]
    return line.with_changes(body=[statement.with_changes(names=[*new, *statement.names])])  # type: ignore[attr-defined]


def _with_new_lines(
    tree: cst.Module,
    body: List[cst.BaseStatement],
    start: int,
    end: int,
    plain: Set[str],
    aliased: Dict[str, str],
    names: Dict[str, Set[str]],
    renamed: Dict[str, List[_Wanted]],
) -> List[cst.BaseStatement]:
    after = body[end:]
    if after:
        first = after[0]
        if not first.leading_lines:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(),))
        elif first.leading_lines[0].comment is not None:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(), *first.leading_lines))
    by_module: Dict[str, List[Tuple[str, Optional[str]]]] = defaultdict(list)
    for module, pairs in renamed.items():
        by_module[module].extend(pairs)
    for module, objects in names.items():
        by_module[module].extend((name, None) for name in objects)
    from_lines = {module: sorted(pairs) for module, pairs in by_module.items()}  # type: ignore[type-var]

    def parsed(text: str) -> cst.BaseStatement:
        return cst.parse_statement(text, config=tree.config_for_parsing)

    def from_line(module: str, pairs: List[Tuple[str, Optional[str]]]) -> cst.BaseStatement:
        listed = ", ".join(name if alias is None else f"{name} as {alias}" for name, alias in pairs)
        return parsed(f"from {module} import {listed}")

    return [
        *body[:start],
        *(from_line(m, p) for m, p in from_lines.items() if m == "__future__"),
        *body[start:end],
        *(parsed(f"import {module}") for module in sorted(plain)),
        *(parsed(f"import {module} as {alias}") for module, alias in aliased.items()),
        *(from_line(m, p) for m, p in from_lines.items() if m != "__future__"),
        *after,
    ]
