"""``amp.initialize(..., loss_scale=<expression>)`` whose value is only known at run time
(``args.loss_scale``, ``"dynamic" if s == 0 else s``): the GradScaler's options are read
from it as apex read them, instead of a TODO beside a dynamic GradScaler.

apex took ``"dynamic"`` (or None, the O1/O2 default) as a dynamic scale from 2**16 growing
every 2000 clean steps, and anything else as ``float(value)``, a static scale: the
GradScaler starts there and never grows.  The expression is evaluated where the GradScaler
is created, under the tests that chose the initialize; that is the initialize's own value
only where nothing between the two can change it: the GradScaler stands where the
initialize stood, or every name the expression starts from is a parameter of the enclosing
function that the function never rebinds (and no attribute of it is assigned there).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ._amp_sites import enclosing_function
from ._edits import NO_GROWTH, code_of
from ._tree import walk

#: the opt levels whose ``loss_scale=None`` default is dynamic
DYNAMIC_BY_DEFAULT = ("O1", "O2")


def run_time_scale_lines(
    parents: Any,
    site: Any,
    loss_scale: cst.BaseExpression,
    level: Optional[str],
    guards: Sequence[Tuple[str, bool]],
    names: Tuple[str, str, str],
    in_place: bool,
) -> Optional[Tuple[List[str], List[str]]]:
    """(statements before the GradScaler, its keyword arguments) for ``loss_scale``, or
    None where the value at the GradScaler may differ from the initialize's (or the opt
    level, not O1/O2, gives None another meaning).  ``names``: the locals for the value,
    the initial scale and the growth interval; ``in_place``: the GradScaler replaces the
    initialize statement itself."""
    if level not in DYNAMIC_BY_DEFAULT:
        return None
    if not in_place and not _unchanged_until_anchor(parents, site, loss_scale):
        return None
    value_name, scale, growth = names
    text = code_of(loss_scale)
    if isinstance(loss_scale, (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.NamedExpr)) and not loss_scale.lpar:
        text = f"({text})"
    if guards:
        joined = " and ".join(f"({t})" if paren else t for t, paren in guards)
        text = f'{text} if {joined} else "dynamic"'
    lines = [
        f"{value_name} = {text}\n",
        f'{scale}, {growth} = (65536.0, 2000) if {value_name} in (None, "dynamic") '
        f"else (float({value_name}), {NO_GROWTH})\n",
    ]
    return lines, [f"init_scale={scale}", f"growth_interval={growth}"]


def _unchanged_until_anchor(parents: Any, site: Any, expression: cst.BaseExpression) -> bool:
    """Every name ``expression`` starts from keeps its value from the initialize to the
    GradScaler after the ``if`` that holds it (``site.anchor``): the ``if`` binds none of
    them, nor an attribute or item of one (``loss_scale = cfg.scale; if loss_scale < 0:
    loss_scale = "dynamic"`` before it is the initialize's value too, second.pytorch), or
    each is a parameter of the enclosing function that the function never binds again."""
    function = enclosing_function(parents, site.stmt)
    if function is None:
        return False
    roots = _roots(expression)
    if not roots:
        return False
    if not any(_target_roots(target) & roots for target in _bound_targets(site.anchor)):
        return True
    params = {p.name.value for p in _all_params(function.params)}
    if not roots <= params:
        return False
    return not any(_target_roots(target) & roots for target in _bound_targets(function.body))


def _all_params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def _roots(expression: cst.BaseExpression) -> Set[str]:
    """The names ``expression`` reads its value from (``args`` of ``args.loss_scale``);
    a call, lambda or comprehension makes it unprovable (empty set)."""
    nodes = list(walk(expression))
    if any(isinstance(n, (cst.Call, cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)) for n in nodes):
        return set()
    attributes = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)}
    return {n.value for n in nodes if isinstance(n, cst.Name) and id(n) not in attributes} - {"None", "True", "False"}


def _bound_targets(code: cst.CSTNode) -> List[Any]:
    """What ``code`` assigns, deletes, loops over, imports or binds with ``as``."""
    out: List[Any] = []
    for node in walk(code):
        if isinstance(node, cst.Assign):
            out.extend(t.target for t in node.targets)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            out.append(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            out.append(node.target)
        elif isinstance(node, cst.AsName):
            out.append(node.name)
        elif isinstance(node, cst.NamedExpr):
            out.append(node.target)
        elif isinstance(node, cst.Del):
            out.append(node.target)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            out.append(node.name)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            out.extend(n.name for n in node.names)
    return out


def _target_roots(target: Any) -> Set[str]:
    """The first names of an assignment target (each element of a tuple or list)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return {r for e in target.elements for r in _target_roots(e.value)}
    if isinstance(target, cst.StarredElement):
        return _target_roots(target.value)
    while isinstance(target, (cst.Attribute, cst.Subscript)):
        target = target.value
    return {target.value} if isinstance(target, cst.Name) else set()
