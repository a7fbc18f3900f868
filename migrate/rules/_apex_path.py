"""A name bound by an apex import with a torch fallback, and the flag that says which ran.

``try: from apex.parallel import DistributedDataParallel as DDP; has_apex = True`` /
``except ImportError: from torch.nn.parallel import DistributedDataParallel as DDP;
has_apex = False`` binds ``DDP`` to apex's class or torch's.  The apex run (the one a
migration must keep) took the import, so ``has_apex`` was True: a read of ``DDP`` in the body
of an ``if has_apex:`` is apex's class (the DDP rule rewrites that call as one of apex's), a
read in its ``else`` (or under ``if not has_apex:``) never ran.  Once every read on apex's path
is rewritten, the apex import can go: the guard keeps ``has_apex = True`` and the torch import
for the dead branch.  Proven only for a module-level ``try`` whose body sets the flag to True
and whose ``except ImportError`` handler sets it to False, the flag otherwise only read as the
whole test of an ``if`` (``if has_apex:`` / ``if not has_apex:``).
"""

from __future__ import annotations

from typing import Callable, List, Optional, Set, Tuple

import libcst as cst
from libcst.helpers import get_full_name_for_node

from ._tree import walk

Parent = Callable[[cst.CSTNode], Optional[cst.CSTNode]]

#: apex classes of a removed module whose torch counterpart a fallback import may bind instead
TORCH_TWINS = {
    "apex.parallel.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    "apex.parallel.distributed.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
}
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def apex_path_name(module: cst.Module, parent: Parent, node: cst.CSTNode, found: Set[str]) -> Set[str]:
    """``{apex's name}`` when ``node`` reads a name ``found`` says is apex's class or its
    torch twin, bound by such a guard, and runs only on apex's path; else empty."""
    apex = [name for name in found if name in TORCH_TWINS]
    if len(found) != 2 or len(apex) != 1 or TORCH_TWINS[apex[0]] not in found or not isinstance(node, cst.Name):
        return set()
    guard = twin_guard(module, node.value)
    if guard is None or branch_of(parent, node, guard[1]) != "apex":
        return set()
    # every read's path known: else the import stays, and so do the calls on apex's path
    if any(branch_of(parent, read, guard[1]) is None for read in _reads(module, node.value)):
        return set()
    return {apex[0]}


def twin_guard(module: cst.Module, binding: str) -> Optional[Tuple[cst.Try, str]]:
    """The module-level ``try`` importing ``binding`` from apex in its body and from torch (the
    twin module) in an ``except ImportError`` handler, and its flag; None when the shape
    differs or the flag is used otherwise."""
    for owner in module.body:
        if not isinstance(owner, cst.Try) or owner.finalbody is not None:
            continue
        handler = next((h for h in owner.handlers if _catches_import_error(h)), None)
        if handler is None:
            continue
        apex_bound = _imported(owner.body, binding)
        torch_bound = _imported(handler.body, binding)
        if not (apex_bound and torch_bound and TORCH_TWINS.get(apex_bound[0]) == torch_bound[0]):
            continue
        for flag in _flags(owner.body, "True") & _flags(handler.body, "False"):
            if _flag_only_tested(module, flag):
                return owner, flag
    return None


def branch_of(parent: Parent, node: cst.CSTNode, flag: str) -> Optional[str]:
    """``"apex"`` when ``node`` runs only where the flag is True (the body of ``if FLAG:``, the
    ``else`` of ``if not FLAG:``), ``"torch"`` when only where it is False; None otherwise."""
    child, current = node, parent(node)
    while current is not None:
        if isinstance(current, cst.If):
            negated = _negated(current.test, flag)
            if negated is not None:
                if current.body is child:
                    return "torch" if negated else "apex"
                if current.orelse is child and isinstance(child, cst.Else):
                    return "apex" if negated else "torch"
        child, current = current, parent(current)
    return None


def only_dead_reads_left(module: cst.Module, parent: Parent, binding: str, target: str) -> bool:
    """``binding`` (apex's ``target``) is bound by such a guard and every read of it left runs
    only where the flag is False: the apex import can go (the guard keeps the flag True)."""
    if target not in TORCH_TWINS:
        return False
    guard = twin_guard(module, binding)
    if guard is None:
        return False
    return all(branch_of(parent, node, guard[1]) == "torch" for node in _reads(module, binding))


def only_class_tests_with_twin(module: cst.Module, parent: Parent, binding: str, target: str) -> bool:
    """``try: from apex.parallel import DistributedDataParallel as Apex_DDP`` / ``except
    ImportError: Apex_DDP = DistributedDataParallel`` (torch's class, imported at module level
    under that name) where every read of ``binding`` is a class that ``isinstance`` or
    ``issubclass`` tests against (alone or in a tuple): the apex import can go.  Once apex is
    gone nothing builds apex's class (the DDP rule builds torch's where apex's was), so a test
    against torch's twin finds what the test against both found."""
    twin = TORCH_TWINS.get(target)
    if twin is None:
        return False
    guard = next(
        (
            owner for owner in module.body
            if isinstance(owner, cst.Try) and owner.finalbody is None and _imported(owner.body, binding)
        ),
        None,
    )
    if guard is None or _imported(guard.body, binding) != [target]:
        return False
    handler = next((h for h in guard.handlers if _catches_import_error(h)), None)
    if handler is None or len(guard.handlers) != 1:
        return False
    fallback = _assigned(handler.body, binding)
    top = cst.IndentedBlock(body=[s for s in module.body if isinstance(s, cst.SimpleStatementLine)])
    if fallback is None or _imported(top, fallback) != [twin]:
        return False
    if any(_is_store(parent, n) for n in _reads(module, fallback)):
        return False  # torch's class rebound somewhere: the fallback may not be it
    reads = _reads(module, binding)
    bound = [n for n in reads if _is_store(parent, n)]
    return len(bound) == 1 and all(n in bound or _tested_class(parent, n) for n in reads)


def _assigned(block: cst.BaseSuite, binding: str) -> Optional[str]:
    """``X`` of the one ``binding = X`` (a plain name) among the block's own statements."""
    found = [
        small.value.value
        for stmt in getattr(block, "body", ())
        for small in getattr(stmt, "body", ())
        if isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == binding
        and isinstance(small.value, cst.Name)
    ]
    return found[0] if len(found) == 1 else None


def _is_store(parent: Parent, node: cst.Name) -> bool:
    """``node`` is the whole target of an assignment."""
    target = parent(node)
    return isinstance(target, cst.AssignTarget) and target.target is node


def _tested_class(parent: Parent, node: cst.Name) -> bool:
    """``node`` is the class argument of ``isinstance(x, node)`` / ``issubclass(c, node)``,
    or an element of a tuple that is."""
    arg = parent(node)
    if isinstance(arg, cst.Element):
        tuple_ = parent(arg)
        arg = parent(tuple_) if isinstance(tuple_, cst.Tuple) else None
    call = parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value in ("isinstance", "issubclass")
        and len(call.args) == 2
        and call.args[1] is arg
        and arg.keyword is None
    )


def _reads(module: cst.Module, binding: str) -> List[cst.Name]:
    """Every occurrence of ``binding`` outside import statements."""
    in_imports = {id(n) for imp in walk(module) if isinstance(imp, (cst.Import, cst.ImportFrom)) for n in walk(imp)}
    return [n for n in walk(module) if isinstance(n, cst.Name) and n.value == binding and id(n) not in in_imports]


def _negated(test: cst.BaseExpression, flag: str) -> Optional[bool]:
    if isinstance(test, cst.Name) and test.value == flag:
        return False
    if (
        isinstance(test, cst.UnaryOperation)
        and isinstance(test.operator, cst.Not)
        and isinstance(test.expression, cst.Name)
        and test.expression.value == flag
    ):
        return True
    return None


def _flag_only_tested(module: cst.Module, flag: str) -> bool:
    """Every occurrence of ``flag`` is one of the guard's two assignments or the whole test
    of an ``if`` (``if flag:`` / ``if not flag:``)."""
    allowed: Set[int] = set()
    total = 0
    for node in walk(module):
        if isinstance(node, cst.If) and _negated(node.test, flag) is not None:
            test = node.test
            allowed.add(id(test if isinstance(test, cst.Name) else test.expression))  # type: ignore[attr-defined]
        elif isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and target.value == flag and isinstance(node.value, cst.Name):
                if node.value.value in ("True", "False"):
                    allowed.add(id(target))
        if isinstance(node, cst.Name) and node.value == flag:
            total += 1
    return total == len(allowed) and total >= 3


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    kind = handler.type
    return isinstance(kind, cst.Name) and kind.value in _IMPORT_ERRORS


def _imported(block: cst.BaseSuite, binding: str) -> List[str]:
    """The dotted names the block's own import statements bind to ``binding``."""
    found: List[str] = []
    for stmt in getattr(block, "body", ()):
        for small in getattr(stmt, "body", ()):
            if not isinstance(small, cst.ImportFrom) or small.relative or isinstance(small.names, cst.ImportStar):
                continue
            base = get_full_name_for_node(small.module) if small.module is not None else None
            for alias in small.names:
                name = get_full_name_for_node(alias.name) or ""
                bound = get_full_name_for_node(alias.asname.name) if alias.asname else name
                if base and bound == binding:
                    found.append(f"{base}.{name}")
    return found


def _flags(block: cst.BaseSuite, value: str) -> Set[str]:
    """Names the block's own statements set to ``value`` (``has_apex = True``)."""
    found: Set[str] = set()
    for stmt in getattr(block, "body", ()):
        for small in getattr(stmt, "body", ()):
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Name)
                and small.value.value == value
            ):
                found.add(small.targets[0].target.value)
    return found
