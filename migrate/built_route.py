"""The cross-file plan's built-object route: the GradScaler rides on the object the launcher
builds.

A class of another file that scales its losses in its methods through an optimizer it keeps
on ``self`` (a trainer's ``run_step``), never called by the repository other than as the
class the launcher picks (``(MixedTrainer if fp16 else PlainTrainer)(model, data, opt)``),
cannot take the GradScaler as a parameter.  The object built there can carry it: the
launcher puts it on that object right after building it (``self._trainer.grad_scaler =
scaler``) and the class's methods read ``self.grad_scaler``.  That is proven only when

* every amp site of the class is an ``amp.scale_loss`` in one of its methods (not
  ``__init__``, not a method it calls on itself), given an optimizer kept on ``self``;
* the class is built in exactly one place of the repository: an assignment in the
  launcher's initializing function, after the initialize (the rule checks that it is given
  the optimizer the initialize returns); no other file names it, nothing derives from it,
  its own file neither decorates nor passes it on;
* the attribute name is free in both files.

An object of the class built anywhere else would lack the attribute and fail at its first
step (AttributeError), never train unscaled.  Pure data from the index.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Set, Tuple

from .ast_table import NodeTable
from .runner_frameworks import CARRIER_ATTRIBUTE

Def = Tuple[str, str]


@dataclass(frozen=True)
class ObjectBuild:
    """``target = Name(...)`` / ``target = (A if c else B)(...)`` in a top-level function or a
    method of a top-level class (``owner``, ``method``): the classes it may build."""

    owner: str
    method: str
    line: int
    target: str
    classes: Tuple[str, ...]


def read_object_builds(table: NodeTable) -> List[ObjectBuild]:
    """The object builds of one file (``table``: its nodes) whose target is a name or
    ``self.<attr>``."""
    builds: List[ObjectBuild] = []
    for top in table.nodes[0].body:  # type: ignore[attr-defined]
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions = [("", top)]
        elif isinstance(top, ast.ClassDef):
            functions = [(f.name, f) for f in top.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        else:
            continue
        for method, func in functions:
            for stmt in table.under(func):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)):
                    continue
                target = stmt.targets[0]
                if not (isinstance(target, ast.Name) or (
                    isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                )):
                    continue
                classes = _called_classes(stmt.value.func)
                if classes:
                    builds.append(ObjectBuild(top.name, method, stmt.value.lineno, ast.unparse(target), classes))
    return builds


def _called_classes(func: ast.expr) -> Tuple[str, ...]:
    if isinstance(func, ast.Name):
        return (func.id,)
    if isinstance(func, ast.IfExp):
        body, orelse = _called_classes(func.body), _called_classes(func.orelse)
        return body + orelse if body and orelse else ()
    return ()


@dataclass
class BuiltRoute:
    #: class -> (method, expression of the GradScaler in it)
    carried: Dict[Def, Tuple[Tuple[str, str], ...]] = field(default_factory=dict)
    #: launcher -> (function, target, line of the build)
    attach: Dict[str, Tuple[Tuple[str, str, int], ...]] = field(default_factory=dict)
    #: class -> the launcher that builds it
    built_in: Dict[Def, str] = field(default_factory=dict)
    #: why not, per file and definition (as ``RepoPlan`` notes)
    notes: Dict[str, Dict[str, str]] = field(default_factory=dict)


def built_route(
    by_path, launchers: Set[str], orphans: Set[Def], others: Sequence[Tuple[str, str, bytes]], definitions
) -> BuiltRoute:
    """The route for the classes among ``orphans`` (needy definitions no call reaches)."""
    route = BuiltRoute()
    for item in sorted(orphans):
        path, name = item
        summary = by_path[path]
        if name not in summary.classes or path in launchers:
            continue
        sites = [s for s in summary.amp_sites if s.owner == name]
        if not sites or any(
            s.member != "scale_loss" or s.method in ("", "__init__") or not s.receiver or not s.optimizer_attr
            for s in sites
        ):
            continue
        builds = _builds_of(item, by_path, definitions)
        if len(builds) != 1:
            continue  # no build of it, or several: the usual reason stays
        launcher, build = builds[0]
        reason = _refusal(item, launcher, build, by_path, launchers, others, definitions)
        if reason is not None:
            route.notes.setdefault(path, {})[name] = reason
            continue
        methods = sorted({(s.method, s.receiver) for s in sites})
        route.carried[item] = tuple((m, f"{receiver}.{CARRIER_ATTRIBUTE}") for m, receiver in methods)
        route.attach[launcher] = route.attach.get(launcher, ()) + ((build.owner, build.target, build.line),)
        route.built_in[item] = launcher
    return route


def _builds_of(item: Def, by_path, definitions) -> List[Tuple[str, ObjectBuild]]:
    found = []
    for path, summary in sorted(by_path.items()):
        for build in summary.object_builds:
            for local in build.classes:
                if path == item[0] and local == item[1]:
                    found.append((path, build))
                elif local in summary.imports and summary.imports[local][1]:
                    if definitions.find(*summary.imports[local], path) == item:
                        found.append((path, build))
    return found


def _refusal(item: Def, launcher: str, build: ObjectBuild, by_path, launchers, others, definitions):
    """Why the object built by ``build`` cannot carry the GradScaler to ``item`` (None: it can)."""
    from .repo_plan import derived_classes  # the plan imports this module
    path, name = item
    summary, user = by_path[path], by_path[launcher]
    where = f"{name} is built in {user.shown}:{build.line}"
    if launcher not in launchers:
        return f"{where}, a file without the training amp.initialize"
    inits = user.training_inits
    if any(s.owner != build.owner or s.method != build.method for s in inits) or build.line < min(
        s.line for s in inits
    ):
        return f"{where}, not after the amp.initialize in the same function"
    if name in summary.escaping - summary.super_only:
        return f"{name} is {summary.handed_away(name)} in {summary.shown}"
    scaling = {s.method for s in summary.amp_sites if s.owner == name}
    called = sorted(m for c, m in summary.self_calls if c == name and m in scaling)
    if called:
        return f"{name} calls its own {called[0]}() on self, maybe before the GradScaler is put on it"
    family = derived_classes(item, by_path, definitions) - {item}
    if family:
        sub_path, sub = sorted(family)[0]
        shown = by_path[sub_path].shown if sub_path in by_path else sub_path
        return f"{sub} in {shown} derives from {name}: its objects may be built where no GradScaler is put on them"
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    for other_path, other in sorted(by_path.items()):
        if other_path in (path, launcher):
            continue
        if name in other.identifiers | other.called_names or any(a == name for _m, a in other.imports.values()):
            return f"{name} is also named in {other.shown}, which may build it without the GradScaler"
    for _p, shown, source in others:
        if word.search(source):
            return f"{name} is also named in {shown}, which may build it without the GradScaler"
    taken = _attributes(summary) | _attributes(user)
    if CARRIER_ATTRIBUTE in taken:
        return f"the attribute name {CARRIER_ATTRIBUTE} is already used in {summary.shown} or {user.shown}"
    return None


def _attributes(summary) -> Set[str]:
    found: Set[str] = set(summary.identifiers) | summary.loaded_attributes | summary.object_attributes
    for names in summary.definition_attributes.values():
        found |= names
    return found
