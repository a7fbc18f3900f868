"""apex.amp (or None) handed to a same-file helper that initializes it there, read as an
on/off flag.

unilm's s2s-ft: ``train()`` binds ``amp`` by ``if args.fp16: from apex import amp`` (in a
``try`` whose handlers raise) ``else: amp = None`` and calls ``prepare(args, model, state,
amp=amp)``; ``prepare`` tests ``if amp:`` and, inside such a test, calls
``amp.initialize(...)``, ``amp.load_state_dict(...)``, ``amp.scale_loss(...)``.  The
parameter is then only ever a switch plus apex.amp's members under that switch: its member
uses are read as apex.amp's (the GradScaler is created where the initialize was, enabled by
the test around it, as for a module-level import), its tests stay as they are, and each
call hands the test that bound apex.amp in the caller (``amp=args.fp16``): the same truth
value on every path, without the module.  Any other shape keeps the refusal of
``_amp_param.initializing_refusals``.

Proven only when every call of the helper in this file hands apex.amp at that slot
(``_handed``), no other walked file refers to the helper (the plan's ``used_elsewhere``),
the helper only reads the parameter, never from a nested scope (``_reads_only``), each read
being the whole test of an ``if`` or the object of a member inside the body of such an
``if``, and each argument's name is bound in its caller only by that ``if``/``else``, whose
test is a plain name or attribute chain that the statements between it and the call never
rebind (its root name).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ._amp_param import _handed, _initialize_of, _reads_only, _used_elsewhere
from ._edits import code_of
from ._tree import enclosing_function, walk

#: where the initialize rule keeps the helpers it rewrote for the rules after it
STATE_KEY = "flag_parameters"

#: nodes whose child ``Name`` is bound, not read
_BINDING_PARENTS = (
    cst.AssignTarget,
    cst.AugAssign,
    cst.AnnAssign,
    cst.For,
    cst.AsName,
    cst.NamedExpr,
    cst.Global,
    cst.Nonlocal,
    cst.NameItem,
    cst.Del,
    cst.Tuple,
    cst.List,
    cst.Element,
)


def flag_parameters(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, Tuple[str, Dict[cst.CSTNode, str]]]:
    """helper -> (its parameter read as an on/off flag, each call's argument there -> the
    test that bound apex.amp in that caller), for the helpers proven as above."""
    found: Dict[cst.FunctionDef, Tuple[str, Dict[cst.CSTNode, str]]] = {}
    elsewhere = _used_elsewhere(rule)
    for func, slots in _handed(rule, module).items():
        if func.name.value in elsewhere:
            continue
        param, args = next(((p, a) for p, a in slots if _initialize_of(func, p) is not None), ("", []))
        if not param or not _tested_members_only(rule.parents, func, param):
            continue
        flags = {arg.value: _caller_flag(rule, arg.value) for arg in args}
        if all(flags.values()):
            found[func] = (param, {node: flag for node, flag in flags.items() if flag})
    return found


def flag_members(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, str]:
    """helper -> its parameter whose member reads denote apex.amp's: the ones
    ``flag_parameters`` proves, and after the initialize rule ran (the calls then hand the
    caller's test) the ones it recorded (``record_flags``)."""
    found = {func: param for func, (param, _args) in flag_parameters(rule, module).items()}
    kept: Dict[str, str] = rule.file_state().get(STATE_KEY, {})
    if kept:
        found.update(
            (f, kept[f.name.value]) for f in module.body if isinstance(f, cst.FunctionDef) and f.name.value in kept
        )
    return found


def record_flags(rule: Any, helpers: Dict[str, str]) -> None:
    """Keep ``helpers`` (name -> parameter) for the rules that run after the initialize rule."""
    rule.file_state().setdefault(STATE_KEY, {}).update(helpers)


def _tested_members_only(parents: Any, func: cst.FunctionDef, name: str) -> bool:
    """Every read of ``name`` in ``func`` is the whole test of an ``if``, or the object of a
    member read in the body of an ``if`` whose whole test it is; it is never rebound or
    read from a nested scope."""
    if not _reads_only(parents, func, name):
        return False
    for node in walk(func.body):
        if not (isinstance(node, cst.Name) and node.value == name):
            continue
        parent = parents.get(node)
        if isinstance(parent, cst.If) and parent.test is node:
            continue
        if isinstance(parent, cst.Attribute) and parent.value is node and _under_its_test(parents, node, func, name):
            continue
        return False
    return True


def _under_its_test(parents: Any, node: cst.CSTNode, func: cst.FunctionDef, name: str) -> bool:
    """Whether ``node`` is inside the body (not the ``else``) of an ``if name:`` in ``func``."""
    child, cur = node, parents.get(node)
    while cur is not None and cur is not func:
        if isinstance(cur, cst.If) and cur.body is child and isinstance(cur.test, cst.Name) and cur.test.value == name:
            return True
        child, cur = cur, parents.get(cur)
    return False


def _caller_flag(rule: Any, arg: cst.CSTNode) -> str:
    """The test of the ``if`` that binds the argument ``arg`` (a name) to apex.amp in its
    caller, its ``else`` to None, when that is the name's only binding there and the test is
    still what it was at the call; "" when not proven."""
    parents = rule.parents
    if not isinstance(arg, cst.Name):
        return ""
    caller = enclosing_function(parents, arg)
    if caller is None:
        return ""
    statement = _statement_in_block(parents, arg, caller)
    block = parents.get(statement)
    if statement is None or not isinstance(block, cst.IndentedBlock):
        return ""
    earlier = list(block.body[: block.body.index(statement)])
    binding = next((s for s in reversed(earlier) if isinstance(s, cst.If) and _binds_amp_or_none(s, arg.value)), None)
    if binding is None or not _only_bindings(parents, caller, binding, arg.value):
        return ""
    root = _chain_root(binding.test)
    if root is None:
        return ""
    between = earlier[earlier.index(binding) + 1 :]
    if any(_binds(parents, s, root) for s in between):
        return ""
    return code_of(binding.test)


def _statement_in_block(parents: Any, node: cst.CSTNode, func: cst.FunctionDef) -> Optional[cst.CSTNode]:
    """The statement holding ``node`` that is a direct statement of a block in ``func``."""
    child, cur = node, parents.get(node)
    while cur is not None and cur is not func:
        if isinstance(cur, cst.IndentedBlock) and isinstance(child, cst.BaseStatement):
            return child
        child, cur = cur, parents.get(cur)
    return None


def _binds_amp_or_none(stmt: cst.If, name: str) -> bool:
    """``if <test>: from apex import amp`` (alone, or alone in a ``try`` whose handlers all
    raise) ``else: amp = None``, with no ``elif``."""
    if not isinstance(stmt.orelse, cst.Else) or not _assigns_none(stmt.orelse.body, name):
        return False
    body = list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else []
    if len(body) == 1 and isinstance(body[0], cst.Try) and not body[0].orelse and not body[0].finalbody:
        attempt = body[0]
        if not all(_ends_in_raise(h.body) for h in attempt.handlers):
            return False
        body = list(attempt.body.body) if isinstance(attempt.body, cst.IndentedBlock) else []
    return len(body) == 1 and _imports_amp_as(body[0], name)


def _imports_amp_as(stmt: cst.CSTNode, name: str) -> bool:
    """``from apex import amp`` binding ``name`` (and nothing else)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    imp = stmt.body[0]
    if not isinstance(imp, cst.ImportFrom) or imp.module is None or code_of(imp.module) != "apex":
        return False
    if isinstance(imp.names, cst.ImportStar) or len(imp.names) != 1:
        return False
    alias = imp.names[0]
    bound = alias.asname.name if alias.asname is not None else alias.name
    return code_of(alias.name) == "amp" and isinstance(bound, cst.Name) and bound.value == name


def _assigns_none(block: cst.BaseSuite, name: str) -> bool:
    """The block is the one statement ``name = None``."""
    body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    assign = body[0].body[0]
    return (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and assign.targets[0].target.value == name
        and isinstance(assign.value, cst.Name)
        and assign.value.value == "None"
    )


def _ends_in_raise(block: cst.BaseSuite) -> bool:
    body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Raise)


def _only_bindings(parents: Any, caller: cst.FunctionDef, binding: cst.If, name: str) -> bool:
    """``name`` is bound in ``caller`` nowhere but in ``binding`` (its import and its
    ``= None``), nor declared global/nonlocal there."""
    inside = set(walk(binding))
    return not any(_binding(parents, node, name) for node in walk(caller.body) if node not in inside)


def _chain_root(test: cst.BaseExpression) -> Optional[str]:
    """The root name of a plain name or attribute chain (``args.fp16``); None otherwise."""
    while isinstance(test, cst.Attribute):
        test = test.value
    return test.value if isinstance(test, cst.Name) else None


def _binds(parents: Any, stmt: cst.CSTNode, name: str) -> bool:
    """Whether ``stmt`` (re)binds ``name`` anywhere in it, a nested definition's name too."""
    return any(_binding(parents, node, name) for node in walk(stmt))


def _binding(parents: Any, node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` binds ``name``: an assignment or other binding target, an import's
    name, a definition's name."""
    if isinstance(node, cst.Name) and node.value == name:
        return isinstance(parents.get(node), _BINDING_PARENTS)
    if isinstance(node, cst.ImportAlias):
        bound = node.asname.name if node.asname is not None else node.name
        return isinstance(bound, cst.Name) and bound.value == name
    return isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name


def flag_args(rule: Any, module: cst.Module) -> List[Tuple[cst.CSTNode, str, str, str]]:
    """(argument, the caller's test, helper name, parameter) for every argument that becomes
    the caller's switch."""
    return [
        (node, flag, func.name.value, param)
        for func, (param, args) in flag_parameters(rule, module).items()
        for node, flag in args.items()
    ]
