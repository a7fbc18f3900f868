"""``amp.initialize(..., loss_scale=<expression>)`` whose value is only known at run time
(``args.loss_scale``, ``"dynamic" if s == 0 else s``): the GradScaler's options are read
from it as apex read them, instead of a TODO beside a dynamic GradScaler.

apex took ``"dynamic"`` (or None, the O1/O2 default) as a dynamic scale from 2**16 growing
every 2000 clean steps, and anything else as ``float(value)``, a static scale: the
GradScaler starts there and never grows.  The expression is evaluated where the GradScaler
is created, under the tests that chose the initialize; that is the initialize's own value
only where nothing between the two can change it: the GradScaler stands where the
initialize stood, or every name the expression starts from is a parameter of the enclosing
function that the function never rebinds (and nothing the expression reads is assigned
there), or a local the function binds once, before the initialize on its way there
(``loss_scale = "dynamic" if dali else 128.0`` in the ``if`` that initializes), the
GradScaler created after that ``if``.

The opt level is O1 or O2; or chosen at run time among literals of which O1 or O2 is one and
none but O0 is another (``"O2" if mixed else "O0"``: O0 turns the GradScaler off, so its
options then do not matter); or any other run-time expression that is as unchanged at the
GradScaler as the scale, read there to give None apex's per-level meaning.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ._amp_sites import enclosing_function, string_value
from ._edits import NO_GROWTH, code_of
from ._tree import walk

#: the opt levels whose ``loss_scale=None`` default is dynamic
DYNAMIC_BY_DEFAULT = ("O1", "O2")
#: an opt level that turns the GradScaler off: its options do not matter there
AMP_OFF = "O0"


def run_time_scale_lines(
    parents: Any,
    site: Any,
    loss_scale: cst.BaseExpression,
    level: Optional[str],
    guards: Sequence[Tuple[str, bool]],
    names: Tuple[str, str, str],
    in_place: bool,
    level_node: Optional[cst.BaseExpression] = None,
    start: str = "65536.0",
) -> Optional[Tuple[List[str], List[str]]]:
    """(statements before the GradScaler, its keyword arguments) for ``loss_scale``, or
    None where the value at the GradScaler may differ from the initialize's (or the opt
    level, a literal other than O1/O2, gives None another meaning).  ``names``: the locals
    for the value, the initial scale and the growth interval; ``in_place``: the GradScaler
    replaces the initialize statement itself; ``level_node``: the opt level expression when
    it is chosen at run time (``level`` None), read there to give None apex's meaning;
    ``start``: where the dynamic scale starts (below a ``max_loss_scale``, apex's min of the two)."""
    levels = {level} if level is not None else literal_levels(level_node)
    if levels and (not levels & set(DYNAMIC_BY_DEFAULT) or not levels <= {*DYNAMIC_BY_DEFAULT, AMP_OFF}):
        return None
    run_time_level = not levels and level_node is not None
    if not levels and not run_time_level:
        return None
    checked = [loss_scale] + ([level_node] if run_time_level and level_node is not None else [])
    if not in_place and not all(_unchanged_until_anchor(parents, site, e) for e in checked):
        return None
    value_name, scale, growth = names
    text = code_of(loss_scale)
    if isinstance(loss_scale, (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.NamedExpr)) and not loss_scale.lpar:
        text = f"({text})"
    if guards:
        joined = " and ".join(f"({t})" if paren else t for t, paren in guards)
        text = f'{text} if {joined} else "dynamic"'
    if run_time_level and level_node is not None:
        # None is apex's per-level default: dynamic for O1/O2, a static 1.0 for O0/O3
        dynamic = f'{value_name} == "dynamic" or {value_name} is None and {code_of(level_node)} in {DYNAMIC_BY_DEFAULT!r}'
        static = f"1.0 if {value_name} is None else {value_name}"
    else:
        dynamic, static = f'{value_name} in (None, "dynamic")', value_name
    lines = [
        f"{value_name} = {text}\n",
        f"{scale}, {growth} = ({start}, 2000) if {dynamic} else (float({static}), {NO_GROWTH})\n",
    ]
    return lines, [f"init_scale={scale}", f"growth_interval={growth}"]


def run_time_cap_start(
    parents: Any, site: Any, cap: cst.BaseExpression, guards: Sequence[Tuple[str, bool]], in_place: bool
) -> Optional[str]:
    """Where apex's dynamic scale started under a run-time ``max_loss_scale=cap``:
    ``min(65536.0, cap)``, read where the GradScaler is made (the tests that chose the
    initialize guard it: elsewhere the GradScaler is off and 2**16 is never used); None
    where the value there may differ from the initialize's."""
    if not in_place and not _unchanged_until_anchor(parents, site, cap):
        return None
    start = f"min(65536.0, {code_of(cap)})"
    if guards:
        joined = " and ".join(f"({t})" if paren else t for t, paren in guards)
        start = f"{start} if {joined} else 65536.0"
    return start


def literal_levels(node: Optional[cst.BaseExpression]) -> Set[str]:
    """The opt levels ``node`` can give when it is made of string literals only (``"O2" if
    mixed else "O0"``, nested conditionals of them); empty otherwise."""
    if isinstance(node, cst.IfExp):
        body, orelse = literal_levels(node.body), literal_levels(node.orelse)
        return body | orelse if body and orelse else set()
    value = string_value(node) if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)) else None
    return {value} if value is not None else set()


def _unchanged_until_anchor(parents: Any, site: Any, expression: cst.BaseExpression) -> bool:
    """Every name ``expression`` starts from keeps its value from the initialize to the
    GradScaler beside the ``if`` that holds it (``site.anchor``): the ``if`` binds none of
    them, nor an attribute or item of one (``loss_scale = cfg.scale; if loss_scale < 0:
    loss_scale = "dynamic"`` before it is the initialize's value too); or each is either a
    parameter of the function holding the initialize that the function never binds again,
    with nothing the expression reads of it assigned there (no assignment target is a dotted
    path it reads, a part of one, or an attribute or item below one:
    ``config.TRAIN.BEGIN_EPOCH = e`` leaves ``config.TRAIN.FP16_LOSS_SCALE`` alone;
    ``config.TRAIN = t`` or ``config = c`` does not), or a local bound once before the
    initialize (``_bound_once_before``)."""
    function = enclosing_function(parents, site.stmt)
    if function is None:
        return False
    roots = _roots(expression)
    if not roots:
        return False
    if not any(_target_roots(target) & roots for target in _bound_targets(site.anchor)):
        return True
    params = {p.name.value for p in _all_params(function.params)}
    targets = _bound_targets(function.body)
    read = _paths(expression)
    for root in roots:
        if root in params:
            if any(
                _overlaps(bound, path)
                for target in targets
                for bound in _target_paths(target)
                if bound.split(".")[0] == root
                for path in read
            ):
                return False
            continue
        bindings = [t for t in targets if root in _target_roots(t)]
        if not _bound_once_before(parents, site, function, root, bindings):
            return False
    return True


def _overlaps(bound: str, path: str) -> bool:
    """Whether assigning dotted path ``bound`` may change what reading ``path`` gives."""
    return bound == path or path.startswith(bound + ".") or bound.startswith(path + ".")


def _paths(expression: cst.BaseExpression) -> Set[str]:
    """The dotted paths ``expression`` reads (``config.TRAIN.FP16_LOSS_SCALE``; the
    subscripted part of ``cfg.opts["scale"]``, ``cfg.opts``)."""
    inner = {id(n.value) for n in walk(expression) if isinstance(n, cst.Attribute)}
    return {
        code_of(n)
        for n in walk(expression)
        if isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in inner and _dotted(n)
    }


def _dotted(node: Any) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _bound_once_before(parents: Any, site: Any, function: cst.FunctionDef, name: str, bindings: List[Any]) -> bool:
    """``name`` is bound by one plain ``name = value`` of ``function`` (nothing else binds it
    or any attribute or item of it), whose statement lies in a block on the way from the
    function's body to the initialize, before it, inside no loop and in no ``else`` (the
    tests that chose the initialize, read again at the GradScaler, then say it ran), while
    the GradScaler is created after the ``if`` that holds the initialize (not before it)."""
    if site.scaler_first or len(bindings) != 1 or not isinstance(bindings[0], cst.Name):
        return False
    assign = parents.get(bindings[0])
    assign = parents.get(assign) if isinstance(assign, cst.AssignTarget) else None
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return False
    line = parents.get(assign)
    block = parents.get(line)
    if not isinstance(line, cst.SimpleStatementLine) or not isinstance(block, cst.IndentedBlock):
        return False
    # the initialize's statement, or the compound statement of ``block`` that holds it
    holder: Any = site.stmt
    while holder is not None and parents.get(holder) is not block:
        holder = parents.get(holder)
    if holder is None or list(block.body).index(holder) <= list(block.body).index(line):
        return False
    node: Any = block
    while node is not function.body:
        owner = parents.get(node)
        if not isinstance(owner, (cst.If, cst.With, cst.Try)) or getattr(owner, "body", None) is not node:
            return False  # a loop, an ``else``, a handler
        if isinstance(owner, cst.If) and isinstance(parents.get(owner), cst.If):
            return False  # an ``elif``: its test alone does not say it ran
        node = parents.get(owner)
        if not isinstance(node, cst.IndentedBlock):
            return False
    return True


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


def _target_paths(target: Any) -> Set[str]:
    """The dotted paths an assignment target binds (each element of a tuple or list); an
    item assignment binds the path it indexes (``x.a[0] = v``: ``x.a``)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return {r for e in target.elements for r in _target_paths(e.value)}
    if isinstance(target, cst.StarredElement):
        return _target_paths(target.value)
    while isinstance(target, cst.Subscript) or isinstance(target, cst.Attribute) and not _dotted(target):
        target = target.value
    return {code_of(target)} if isinstance(target, (cst.Name, cst.Attribute)) else set()


def _target_roots(target: Any) -> Set[str]:
    """The first names of an assignment target (each element of a tuple or list)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return {r for e in target.elements for r in _target_roots(e.value)}
    if isinstance(target, cst.StarredElement):
        return _target_roots(target.value)
    while isinstance(target, (cst.Attribute, cst.Subscript)):
        target = target.value
    return {target.value} if isinstance(target, cst.Name) else set()
