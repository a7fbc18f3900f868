"""Whether a definition and a training amp.initialize may run in one process, one run of a
script at a time: the runs split at the script's module-level if/else statements.

``optional_scaler.runs_alone`` asks whether any run that may execute a file's code reaches a
training ``amp.initialize``.  A script whose ``__main__`` block renders in one branch and trains
in the other (Enigmatisms/NeRF's ``train.py``: ``if do_render: render_only(...)`` / ``else:
main(args)``) reaches both, so a ``loadFromFile(path, use_amp)`` call in ``render_only()``,
which passes no GradScaler, kept the whole component on apex.amp.  That call is harmless where
no single run executes both it and a training initialize: there apex loaded the state of loss
scalers no loss of that run is scaled with.

For every script that may run the calling definition (its own file and each file importing it,
directly or through others), each run is the module-level code with one branch of each of its
if statements that hold calls (its ``__main__`` block's included), at most ``MOST_RUNS`` of
them; the definitions that code names (called or handed on) are walked as ``reach`` walks a
script, and a run that reaches both the definition and a training initialize is the answer.
Anything not read (a file that cannot be parsed, too many branches) answers as if every branch
ran.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from . import stdlib_trees
from .reach import what_a_run_reaches
from .repo_index import MODULE_LEVEL, ModuleSummary

Def = Tuple[str, str]  # (file path, top-level definition name)
#: the most runs one script is split into (the product of its ifs' branch counts)
MOST_RUNS = 16


def runs_apart(
    item: Def, definitions: Any, importers: Callable[[str], List[str]], sources: Dict[str, bytes]
) -> Optional[str]:
    """None when no run of a script that may execute ``item`` (a definition) also reaches a
    training initialize; otherwise why not."""
    path, _name = item
    files, work = {path}, [path]
    while work:
        for importer in importers(work.pop()):
            if importer not in files:
                files.add(importer)
                work.append(importer)
    for script in sorted(files):
        summary = definitions.summary(script)
        source = sources.get(script) if script in sources else definitions.unindexed.get(script, ("", None))[1]
        tree = stdlib_trees.parse(source) if source is not None and summary is not None else None
        if tree is None:
            return f"{script} cannot be read"
        # an initialize in the script's own module-level code: every run may train
        at_top = [f"the module level of {summary.shown}"] if any(
            site.owner == MODULE_LEVEL for site in summary.training_inits) else []
        for seeds in _runs(tree, script, summary, definitions):
            reached: Set[Def] = set()
            trains: List[str] = list(at_top)
            why = what_a_run_reaches(script, definitions, lambda _p, _s: None, _recorder(reached, trains),
                                     follow_stars=True, seeds=seeds)
            if why is not None:
                return why
            if item in reached and trains:
                return (f"a run of {summary.shown} reaches both {item[1]}() and {trains[0]}, which initializes amp "
                        "for training")
    return None


def _recorder(reached: Set[Def], trains: List[str]) -> Callable[[str, ModuleSummary, str], Optional[str]]:
    """A ``reach`` item check that records each definition walked into ``reached`` and each
    one holding a training initialize into ``trains``, and stops nothing."""

    def note(at: str, read: ModuleSummary, name: str) -> Optional[str]:
        reached.add((at, name))
        if any(site.owner == name for site in read.training_inits):
            trains.append(f"{name} of {read.shown}")
        return None

    return note


def _runs(tree: ast.Module, path: str, summary: ModuleSummary, definitions: Any) -> Iterable[Optional[Set[Def]]]:
    """The definitions each run of the script names at module level, one set per run; None
    (every definition of the script may run) where its module-level code names none of them
    (a script some runner outside calls into) or may call them by name (``fire.Fire()``,
    ``globals()[name]()``)."""
    body = _module_code(tree.body)
    if _dispatches(body) or not any(True for stmt in body for _ in _named(stmt, path, summary, definitions)):
        yield None
        return
    splits = [stmt for stmt in body if isinstance(stmt, ast.If) and _calls_in(stmt)]
    choices = [_branches(stmt) for stmt in splits]
    count = 1
    for branches in choices:
        count *= len(branches)
    if count > MOST_RUNS:
        splits, choices = [], []
    common = [stmt for stmt in body if not any(stmt is s for s in splits)]
    for picked in itertools.product(*choices) if choices else [()]:
        code = common + [stmt for branch in picked for stmt in branch]
        yield {found for stmt in code for found in _named(stmt, path, summary, definitions)}


#: calls that may run a module's definitions by name
_BY_NAME = frozenset({"globals", "locals", "vars", "getattr", "eval", "exec"})


def _dispatches(body: List[ast.stmt]) -> bool:
    """Whether the module-level code may call definitions it does not name: a call of one of
    ``_BY_NAME``, or a command-line runner given nothing (``fire.Fire()``, jsonargparse's ``CLI()``)."""
    for stmt in body:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in _BY_NAME or (name in ("Fire", "CLI") and not node.args and not node.keywords):
                return True
    return False


def _module_code(body: List[ast.stmt]) -> List[ast.stmt]:
    """The module's statements, with the body of ``if __name__ == "__main__":`` in its place."""
    out: List[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If) and _is_main_guard(stmt.test) and not stmt.orelse:
            out.extend(_module_code(stmt.body))
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(stmt)
    return out


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _branches(stmt: ast.If) -> List[List[ast.stmt]]:
    """The statements each path through an if/elif/else chain runs, its tests included (an
    absent ``else`` runs nothing but the tests)."""
    out: List[List[ast.stmt]] = []
    tests: List[ast.stmt] = []
    current: Any = stmt
    while True:
        tests = tests + [ast.Expr(current.test)]
        out.append(tests + list(current.body))
        if len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
            continue
        out.append(tests + list(current.orelse))
        return out


def _calls_in(stmt: ast.stmt) -> bool:
    return any(isinstance(node, ast.Call) for node in ast.walk(stmt))


def _named(stmt: ast.stmt, path: str, summary: ModuleSummary, definitions: Any) -> Iterable[Def]:
    """The repository definitions ``stmt`` names: its own file's functions and classes, names
    it imported, and ``module.name`` of a module it imported."""
    own = summary.functions | summary.classes
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in own:
                yield (path, node.id)
            elif node.id in summary.imports:
                module, attr = summary.imports[node.id]
                found = definitions.find(module, attr, path, anywhere=True) if attr else None
                if found is not None:
                    yield found
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module, attr = summary.imports.get(node.value.id, ("", ""))
            if module:
                dotted = f"{module}.{attr}" if attr else module
                found = definitions.find(dotted, node.attr, path, anywhere=True)
                if found is not None:
                    yield found
