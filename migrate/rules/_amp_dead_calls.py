"""Calls of a scaling function that provably scale nothing: the disabled GradScaler route.

``run_nn(cfg, mode, model, loader, criterion=None, optim=None, apex=None)`` scales its loss
under ``if mode in ['train']: if apex: with amp.scale_loss(...)``.  The training function,
where the GradScaler is made, calls it with ``'train'`` and ``apex=cfg.apex``; an evaluation
function of the same file, where no GradScaler exists, calls it with ``'valid'`` and leaves
``apex`` at its default.  On that call the ``amp.scale_loss`` never runs: an ``if`` around it
tests the function's parameters against what the call passes (literals, or the defaults it
leaves), and is false.  Such a call hands the function a disabled GradScaler
(``torch.amp.GradScaler(..., enabled=False)``): what else the rules write there on the scaler
then does what the original did without apex's loss scaling (its autocast is off,
``scaler.step(opt)`` is ``opt.step()``, ``unscale_`` and ``update`` do nothing).

Proven only for sites every one of which lies under such an ``if`` (in its body with a false
test, or in its ``else`` with a true one) on every such call; the parameters tested are never
rebound in the function (``_amp_param._reads_only``), the call passes no ``*args``/``**kw``,
and the tests are built of ``not``/``and``/``or``, ``in``/``not in`` a literal sequence,
``==``/``!=``, ``is``/``is not`` None and the parameter's own truth.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

import libcst as cst

from ._amp_param import _reads_only
from ._edits import code_of

#: a value no literal can be: the argument is not known
UNKNOWN = object()


def dead_on_call(parents: Dict[Any, Any], func: cst.FunctionDef, call: cst.Call, sites: List[Any]) -> bool:
    """Whether none of ``sites`` (nodes in ``func``) can run on ``call`` of ``func``."""
    if not (isinstance(call.func, cst.Name) and call.func.value == func.name.value):
        return False  # a call through another name (a partial's) may hold bound arguments first
    values = _bound_literals(func, call)
    if values is None or not sites:
        return False
    return all(_under_a_false_test(parents, func, site, values) for site in sites)


def _bound_literals(func: cst.FunctionDef, call: cst.Call) -> Optional[Dict[str, Any]]:
    """The parameters of ``func`` -> the literal each gets on ``call`` (``UNKNOWN`` when it is
    not a literal); None when the call's arguments cannot be matched (a star, too many)."""
    params = list(func.params.posonly_params) + list(func.params.params)
    kwonly = list(func.params.kwonly_params)
    if any(arg.star for arg in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > len(params):
        return None
    values: Dict[str, Any] = {}
    for param in params + kwonly:
        values[param.name.value] = _literal(param.default) if param.default is not None else UNKNOWN
    for param, arg in zip(params, positional):
        values[param.name.value] = _literal(arg.value)
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in values:
                return None
            values[arg.keyword.value] = _literal(arg.value)
    return values


def _literal(node: Any) -> Any:
    try:
        return ast.literal_eval(code_of(node).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNKNOWN


def _under_a_false_test(parents: Dict[Any, Any], func: cst.FunctionDef, site: Any, values: Dict[str, Any]) -> bool:
    """Whether an ``if`` around ``site`` in ``func`` is decided against it by ``values``."""
    child, current = site, parents.get(site)
    while current is not None and current is not func:
        if isinstance(current, cst.If):
            test = _truth(func, current.test, values, parents)
            if current.body is child and test is False:
                return True
            if current.orelse is child and test is True:
                return True  # the else (or an elif chain) of a test that holds
        child, current = current, parents.get(current)
    return False


def _truth(func: cst.FunctionDef, test: Any, values: Dict[str, Any], parents: Dict[Any, Any]) -> Optional[bool]:
    """The truth of ``test`` given the parameters' ``values``; None when not known."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _truth(func, test.expression, values, parents)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left = _truth(func, test.left, values, parents)
        right = _truth(func, test.right, values, parents)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is False and right is False else None)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        left, right = _value(func, test.left, values, parents), _value(func, test.comparisons[0].comparator, values, parents)
        if left is UNKNOWN or right is UNKNOWN:
            return None
        op = test.comparisons[0].operator
        try:
            if isinstance(op, (cst.In, cst.NotIn)) and isinstance(right, (list, tuple, set, frozenset, str)):
                found = left in right
                return found if isinstance(op, cst.In) else not found
            if isinstance(op, (cst.Equal, cst.NotEqual)) and _plain(left) and _plain(right):
                return (left == right) if isinstance(op, cst.Equal) else (left != right)
            if isinstance(op, (cst.Is, cst.IsNot)) and (left is None or right is None):
                same = left is right
                return same if isinstance(op, cst.Is) else not same
        except TypeError:
            return None
        return None
    value = _value(func, test, values, parents)
    return None if value is UNKNOWN else bool(value)


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, tuple, list))


def _value(func: cst.FunctionDef, node: Any, values: Dict[str, Any], parents: Dict[Any, Any]) -> Any:
    """A parameter's literal (when the function only reads it) or a literal; else UNKNOWN."""
    if isinstance(node, cst.Name) and node.value in values:
        return values[node.value] if _reads_only(parents, func, node.value) else UNKNOWN
    if isinstance(node, cst.Name) and node.value not in ("None", "True", "False"):
        return UNKNOWN  # a global or a local: not followed
    return _literal(node)
