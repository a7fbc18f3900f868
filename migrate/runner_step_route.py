"""The runner-hook route's edit of one file without apex.amp: the runner method whose
forward pass fills the outputs a hook scales (``runner_hook_plan``).

cvpods' ``SimpleRunner.run_step`` runs ``loss_dict = self.model(data)``, sums the losses
and stores them (``self.step_outputs = {"loss_for_backward": losses}``); a hook reads them
off its runner and scales them.  Here the statements from the first call of the model
through the one that binds the stored loss go under ``torch.autocast``, enabled exactly when
the runner carries an enabled GradScaler (``getattr(self, "scaler", None)``: runners built
without one, by any other path, run as before).  Proven only for this shape:

- the class defines the method; it stores ``self.<outputs> = {...}`` once, directly in its
  body, a dict literal whose entry for the hook's key is a plain name;
- that name is bound once in the method, by a statement directly in its body before the
  store; the first statement of the body calling ``self.<model>(...)`` comes before it,
  and no statement before that one calls the model;
- the statements between them stand on lines of their own and hold no ``return``,
  ``break``, ``continue`` or ``yield``.

Pure ``ast``.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Union

from . import stdlib_trees
from .holder_route import HolderEdit, device_of, physical_lines, torch_import_after

_JUMPS = (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom, ast.Await)


def runner_step_route(path: str, shown: str, source: bytes, cls_name: str, method_name: str, outputs: str,
                      key: str, model: str, scaler: str) -> Union[HolderEdit, str]:
    """The edit putting the forward pass of ``cls_name.method_name`` that computes the
    ``key`` entry of ``self.<outputs>`` under autocast switched by ``self.<scaler>``, else
    why not."""
    tree = stdlib_trees.parse(source)
    text = stdlib_trees.decoded(source)
    if tree is None or text is None:
        return f"{shown} does not parse"
    cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == cls_name), None)
    method = cls and next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == method_name), None)
    where = f"{cls_name}.{method_name}() in {shown}"
    if method is None or not method.args.args:
        return f"{where} is not a plain method of a top-level class"
    me = method.args.args[0].arg
    if scaler in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}:
        return f"{shown} already reads an attribute named {scaler}"
    body = method.body
    store = _the_store(body, me, outputs)
    if store is None:
        return f"{where} does not store self.{outputs} once, as a dict literal, directly in its body"
    loss = _entry(store.value, key)
    if loss is None:
        return f"the {key!r} entry of self.{outputs} in {where} is not a plain name"
    binders = [s for s in body if _binds(s, loss)]
    if len(binders) != 1 or sum(_binds_anywhere(n, loss) for n in ast.walk(method)) != 1:
        return f"{loss} is not bound once, directly in the body of {where}"
    last = binders[0]
    first = next((s for s in body if _calls_model(s, me, model)), None)
    if first is None or body.index(first) > body.index(last) or body.index(last) > body.index(store):
        return f"no call of {me}.{model}(...) in {where} comes before the statement computing {loss}"
    span = body[body.index(first) : body.index(last) + 1]
    for n in (x for s in span for x in ast.walk(s)):
        if isinstance(n, _JUMPS):
            return f"a {type(n).__name__.lower()} at line {n.lineno} of {where} lies in the forward pass"
    lines = [line.rstrip("\r\n") for line in physical_lines(text)]
    inside = {id(x) for s in span for x in ast.walk(s)}
    if lines[first.lineno - 1][: first.col_offset].strip() or lines[last.end_lineno - 1][last.end_col_offset:].strip() \
            or any(isinstance(n, ast.stmt) and first.lineno <= n.lineno <= last.end_lineno and id(n) not in inside
                   for n in ast.walk(method)) or _strings_across(span):
        return f"the forward pass of {where} does not stand on lines of its own"
    unit = " " * (body[0].col_offset - method.col_offset or 4)
    holder = f'getattr({me}, "{scaler}", None)'
    head = (f"{' ' * first.col_offset}with torch.autocast({device_of(body[: body.index(first) + 1], me)}, "
            f"dtype=torch.float16, enabled={holder} is not None and {me}.{scaler}.is_enabled()):")
    moved = tuple(unit + line if line.strip() else line for line in lines[first.lineno - 1 : last.end_lineno])
    after = torch_import_after(tree)
    if after < 0:
        return f"{shown} imports nothing at its top, where import torch would go"
    return HolderEdit(path, shown, cls_name, method_name, outputs, scaler,
                      ((first.lineno, last.end_lineno, (head, *moved)),), torch_after=after)


def runner_step_message(edit: HolderEdit, launcher: str) -> str:
    return (
        f"{launcher} keeps its GradScaler on the runner (self.{edit.new_attribute}), whose hooks scale the losses "
        f"{edit.cls}.{edit.method}() stores in self.{edit.attribute}: that method runs the forward pass computing "
        "them under torch.autocast while the runner carries an enabled GradScaler"
    )


def _the_store(body: List[ast.stmt], me: str, outputs: str) -> Optional[ast.Assign]:
    stores = [n for s in body for n in ast.walk(s) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
              and any(_is_self_attr(t, me, outputs) for t in _targets(n))]
    if len(stores) != 1 or stores[0] not in body or not isinstance(stores[0], ast.Assign):
        return None
    return stores[0] if isinstance(stores[0].value, ast.Dict) and len(stores[0].targets) == 1 else None


def _entry(value: ast.Dict, key: str) -> Optional[str]:
    found = [v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant) and k.value == key]
    if any(k is None for k in value.keys) or len(found) != 1 or not isinstance(found[0], ast.Name):
        return None
    return found[0].id


def _targets(node: ast.AST) -> List[ast.expr]:
    if isinstance(node, ast.Assign):
        return [x for t in node.targets for x in ast.walk(t)]
    return list(ast.walk(node.target))  # type: ignore[attr-defined]


def _is_self_attr(node: ast.AST, me: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == me


def _binds(stmt: ast.stmt, name: str) -> bool:
    return isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)


def _binds_anywhere(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) or \
        isinstance(node, ast.arg) and node.arg == name


def _calls_model(stmt: ast.stmt, me: str, model: str) -> bool:
    return any(isinstance(n, ast.Call) and _is_self_attr(n.func, me, model) for n in ast.walk(stmt))


def _strings_across(span: List[ast.stmt]) -> bool:
    """A string literal over several lines: indenting its lines would change it."""
    return any(isinstance(n, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(n, "value", ""), (str, list))
               and n.end_lineno != n.lineno for s in span for n in ast.walk(s))
