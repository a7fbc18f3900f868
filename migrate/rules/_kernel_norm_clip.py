"""A global-norm gradient clip written with apex's kernels, found and planned as
``torch.nn.utils.clip_grad_norm_``.

The shape (NVIDIA's BERT scripts and their copies carry it in a small clipper class)::

    grads = [p.grad for p in params if p.grad is not None]
    norm, _ = multi_tensor_applier(amp_C.multi_tensor_l2norm, buf, [grads], False)
    norm = norm.item()                           # optional
    if norm == float('inf'): return              # optional, with nothing after the clip
    coef = max_norm / (norm + 1e-6)
    if coef < 1:
        multi_tensor_applier(amp_C.multi_tensor_scale, buf, [grads, grads], coef)

is ``torch.nn.utils.clip_grad_norm_(params, max_norm)``: the same L2 norm over the gradients
that exist, the same coefficient ``max_norm / (norm + 1e-6)`` and an in-place scale when it is
below 1 (torch multiplies by the coefficient clamped at 1, which leaves the gradients as they
are otherwise).  With a finite norm the two agree up to rounding.  A non-finite norm (an
overflow) differs: apex's clip left those gradients alone, torch's multiplies them by 0 or
NaN; a GradScaler skips that step in both cases, as apex's loss scaler did.  torch takes each
gradient's norm in its own dtype, apex's kernel in float32: the same for the float32
gradients of a native model (autocast keeps the weights in float32).

torch's clip must see unscaled gradients, where apex's amp.scale_loss had left them: the
clip is rewritten only where the clipping rule puts ``scaler.unscale_`` before every call of
it (``_kernel_clip_callers``).

The kernels are named directly (``amp_C.multi_tensor_l2norm``) or through an attribute of the
instance that one assignment of the class binds to them (``self.l2 = amp_C.multi_tensor_l2norm``).
Once the clip is rewritten, those attributes and the overflow buffer go when nothing else reads
them, and so does an ``if multi_tensor_applier.available:`` left with only ``import amp_C``
(its ``else`` only raising).  Anything else keeps the kernels, with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from ._edits import code_of
from ._kernel_clip_callers import callers_unscale
from ._tree import walk

L2NORM = "amp_C.multi_tensor_l2norm"
SCALE = "amp_C.multi_tensor_scale"
APPLIER = frozenset(
    {"apex.multi_tensor_apply.multi_tensor_applier", "apex.multi_tensor_apply.multi_tensor_apply.multi_tensor_applier"}
)
AVAILABLE = frozenset(f"{name}.available" for name in APPLIER)

NamesOf = Callable[[cst.CSTNode], Set[str]]


@dataclass
class NormClip:
    """One recognised clip: the statements it spans, the parameters and threshold."""

    statements: List[cst.BaseStatement]
    params: cst.BaseExpression
    max_norm: cst.BaseExpression
    #: the apex references inside those statements (their imports may become unused)
    apex_refs: List[cst.CSTNode]


@dataclass
class NormClipPlan:
    """What the fused-kernels rule does with the clips of one file."""

    clips: List[NormClip] = field(default_factory=list)
    #: statements removed outright (attribute set-up, the availability guard)
    removed: List[cst.BaseStatement] = field(default_factory=list)
    #: (l2norm call, why the clip around it stays on apex's kernels)
    kept: List[Tuple[cst.Call, str]] = field(default_factory=list)

    def gone(self) -> Set[int]:
        """Ids of every node inside a statement that is replaced or removed."""
        out: Set[int] = set()
        for stmt in [s for clip in self.clips for s in clip.statements] + self.removed:
            out.update(id(n) for n in walk(stmt))
        return out


def plan_norm_clips(module: cst.Module, names_of: NamesOf) -> NormClipPlan:
    """Find the kernel-spelled clips of ``module`` (see the module docstring)."""
    plan = NormClipPlan()
    for owner, funcs in _functions_by_class(module):
        attrs = _kernel_attributes(funcs, names_of) if owner is not None else {}
        class_clips: List[NormClip] = []
        for func in funcs:
            for call in _l2norm_calls(func, attrs, names_of):
                found = _match(func, call, attrs, names_of)
                if not isinstance(found, str):
                    found = callers_unscale(module, func, owner) or found
                if isinstance(found, str):
                    if _scales(func, attrs, names_of):  # a norm computed for itself is no clip
                        plan.kept.append((call, found))
                else:
                    class_clips.append(found)
        plan.clips.extend(class_clips)
        if owner is not None and class_clips:
            plan.removed.extend(_unused_setup(owner, funcs, class_clips, attrs, names_of))
    return plan


# --- where the kernels are -------------------------------------------------------------------


def _functions_by_class(module: cst.Module) -> List[Tuple[Optional[cst.ClassDef], List[cst.FunctionDef]]]:
    """Each class with its methods, then (owner None) every function outside a class."""
    groups: List[Tuple[Optional[cst.ClassDef], List[cst.FunctionDef]]] = []
    methods: Set[int] = set()
    for node in walk(module):
        if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
            funcs = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
            methods.update(id(f) for f in funcs)
            groups.append((node, funcs))
    loose = [n for n in walk(module) if isinstance(n, cst.FunctionDef) and id(n) not in methods]
    groups.append((None, loose))
    return groups


def _self_of(func: cst.FunctionDef) -> Optional[str]:
    params = func.params.params
    return params[0].name.value if params else None


def _self_attr(node: cst.CSTNode, func: cst.FunctionDef) -> Optional[str]:
    """``X`` of ``self.X`` read in ``func`` (``self`` its first parameter)."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == _self_of(func):
        return node.attr.value
    return None


def _kernel_attributes(funcs: List[cst.FunctionDef], names_of: NamesOf) -> Dict[str, str]:
    """``self.X = amp_C.<kernel>``: X -> the kernel, for attributes assigned exactly once in the class."""
    assigned: Dict[str, List[Optional[str]]] = {}
    for func in funcs:
        for node in walk(func):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    attr = _self_attr(target.target, func)
                    if attr is not None:
                        kernel = names_of(node.value) & {L2NORM, SCALE}
                        assigned.setdefault(attr, []).append(kernel.pop() if len(kernel) == 1 else None)
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                attr = _self_attr(node.target, func)
                if attr is not None:
                    assigned.setdefault(attr, []).append(None)
    return {attr: kinds[0] for attr, kinds in assigned.items() if len(kinds) == 1 and kinds[0] is not None}


def _kernel(node: cst.CSTNode, func: cst.FunctionDef, attrs: Dict[str, str], names_of: NamesOf) -> Optional[str]:
    found = names_of(node) & {L2NORM, SCALE}
    if len(found) == 1:
        return found.pop()
    attr = _self_attr(node, func)
    return attrs.get(attr) if attr is not None else None


def _applier_call(
    node: cst.CSTNode, kernel: str, func: cst.FunctionDef, attrs: Dict[str, str], names_of: NamesOf
) -> Optional[cst.Call]:
    """``node`` is ``multi_tensor_applier(<kernel>, buf, [...], ...)`` with positional arguments."""
    if not (isinstance(node, cst.Call) and names_of(node.func) & APPLIER and node.args):
        return None
    if any(arg.keyword is not None or arg.star for arg in node.args):
        return None
    return node if _kernel(node.args[0].value, func, attrs, names_of) == kernel else None


def _scales(func: cst.FunctionDef, attrs: Dict[str, str], names_of: NamesOf) -> bool:
    return any(_applier_call(n, SCALE, func, attrs, names_of) is not None for n in walk(func.body))


def _l2norm_calls(func: cst.FunctionDef, attrs: Dict[str, str], names_of: NamesOf) -> List[cst.Call]:
    """The l2norm applier calls written in ``func`` itself (not in a nested function)."""
    nested = {id(n) for inner in walk(func.body) if isinstance(inner, cst.FunctionDef) for n in walk(inner)}
    return [
        n
        for n in walk(func.body)
        if id(n) not in nested and _applier_call(n, L2NORM, func, attrs, names_of) is not None
    ]


# --- the clip itself --------------------------------------------------------------------------


def _match(
    func: cst.FunctionDef, call: cst.Call, attrs: Dict[str, str], names_of: NamesOf
) -> "NormClip | str":
    """The clip around ``call`` in ``func``'s body, or why it is not one torch has."""
    body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else []
    index = next(
        (i for i, s in enumerate(body) if _only_small(s) is not None and any(n is call for n in walk(s))), None
    )
    norm_target = _assign(body[index]) if index is not None else None
    if norm_target is None or norm_target[1] is not call:
        return "the norm is not assigned by its own statement of the function body"
    targets, _ = norm_target
    if len(call.args) != 4 or not isinstance(call.args[2].value, cst.List) or _literal(call.args[3].value) is not False:
        return "multi_tensor_l2norm is not called as (kernel, buffer, [gradients], False)"
    grads = _single_name_list(call.args[2].value, 1)
    norm, rest = _norm_names(targets)
    if grads is None or norm is None:
        return "the gradients or the norm are not plain names"
    built = _grads_of(body[index - 1], grads) if index > 0 else None
    if built is None:
        return f"{grads} is not built just before as [p.grad for p in <parameters> if p.grad is not None]"
    params = built
    spanned = [body[index - 1], body[index]]
    i = index + 1
    if i < len(body) and _is_item(body[i], norm):
        spanned.append(body[i])
        i += 1
    guarded = i < len(body) and _is_inf_return(body[i], norm)
    if guarded:
        spanned.append(body[i])
        i += 1
    coef = _coefficient(body[i]) if i < len(body) else None
    if coef is None or coef[1] != norm:
        return f"the coefficient is not max_norm / ({norm} + 1e-6) right after the norm"
    coef_name, _, max_norm = coef
    spanned.append(body[i])
    i += 1
    if not (i < len(body) and _is_scale(body[i], coef_name, grads, func, attrs, names_of)):
        return f"the gradients are not scaled by {coef_name} in place under `if {coef_name} < 1:` right after"
    spanned.append(body[i])
    i += 1
    if guarded and i < len(body):
        return f"statements follow the clip, and `if {norm} == float('inf'): return` skips them on an overflow"
    own = {norm, coef_name, grads} | set(rest)
    outside = [s for s in body if not any(s is t for t in spanned)]
    used = sorted({n.value for s in outside for n in walk(s) if isinstance(n, cst.Name) and n.value in own})
    if used:
        return f"{', '.join(used)} {'is' if len(used) == 1 else 'are'} also used outside the clip"
    if any(isinstance(n, cst.Name) and n.value in own for n in walk(params)) or any(
        isinstance(n, cst.Name) and n.value == norm for n in walk(max_norm)
    ):
        return "the parameters or the threshold depend on the clip's own names"
    refs = [n for s in spanned for n in walk(s) if isinstance(n, (cst.Name, cst.Attribute)) and names_of(n)]
    return NormClip(spanned, params, max_norm, refs)


def _only_small(stmt: cst.CSTNode) -> Optional[cst.BaseSmallStatement]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        return stmt.body[0]
    return None


def _assign(stmt: cst.CSTNode) -> Optional[Tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]]:
    small = _only_small(stmt)
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return small.targets[0].target, small.value
    return None


def _literal(node: cst.BaseExpression) -> object:
    text = code_of(node).strip()
    return {"False": False, "True": True}.get(text, text)


def _unparen(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) else node


def _single_name_list(node: cst.List, count: int) -> Optional[str]:
    """``[x]`` (count 1) or ``[x, x]`` (count 2): the name x."""
    values = [e.value for e in node.elements if isinstance(e, cst.Element)]
    if len(values) != count or len(node.elements) != count or not all(isinstance(v, cst.Name) for v in values):
        return None
    names = {v.value for v in values}  # type: ignore[attr-defined]
    return names.pop() if len(names) == 1 else None


def _norm_names(target: cst.BaseAssignTargetExpression) -> Tuple[Optional[str], List[str]]:
    """``norm, _`` -> ("norm", ["_"])."""
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        first, second = (e.value for e in target.elements)
        if isinstance(first, cst.Name) and isinstance(second, cst.Name) and first.value != second.value:
            return first.value, [second.value]
    return None, []


def _grads_of(stmt: cst.CSTNode, grads: str) -> Optional[cst.BaseExpression]:
    """``grads = [p.grad for p in P if p.grad is not None]`` -> P."""
    found = _assign(stmt)
    if found is None or not (isinstance(found[0], cst.Name) and found[0].value == grads):
        return None
    comp = found[1]
    if not isinstance(comp, cst.ListComp) or comp.for_in.inner_for_in is not None or comp.for_in.asynchronous is not None:
        return None
    loop = comp.for_in
    if not isinstance(loop.target, cst.Name) or len(loop.ifs) != 1:
        return None
    var = loop.target.value
    if code_of(comp.elt).strip() != f"{var}.grad":
        return None
    if " ".join(code_of(loop.ifs[0].test).split()) != f"{var}.grad is not None":
        return None
    return loop.iter


def _is_item(stmt: cst.CSTNode, norm: str) -> bool:
    found = _assign(stmt)
    return (
        found is not None
        and isinstance(found[0], cst.Name)
        and found[0].value == norm
        and code_of(found[1]).strip() == f"{norm}.item()"
    )


def _is_inf_return(stmt: cst.CSTNode, norm: str) -> bool:
    """``if norm == float('inf'): return`` (the test may be parenthesised)."""
    if not (isinstance(stmt, cst.If) and stmt.orelse is None):
        return False
    test = " ".join(code_of(_unparen(stmt.test)).replace('"', "'").split())
    if test != f"{norm} == float('inf')":
        return False
    inner = stmt.body.body
    only = inner[0] if len(inner) == 1 else None
    if isinstance(stmt.body, cst.IndentedBlock):
        only = _only_small(only) if only is not None else None
    return isinstance(only, cst.Return) and only.value is None


def _coefficient(stmt: cst.CSTNode) -> Optional[Tuple[str, str, cst.BaseExpression]]:
    """``coef = max_norm / (norm + 1e-6)`` -> (coef, norm, max_norm)."""
    found = _assign(stmt)
    if found is None or not isinstance(found[0], cst.Name):
        return None
    value = found[1]
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide)):
        return None
    denominator = _unparen(value.right)
    if not (isinstance(denominator, cst.BinaryOperation) and isinstance(denominator.operator, cst.Add)):
        return None
    if not isinstance(denominator.left, cst.Name) or _number(denominator.right) != 1e-6:
        return None
    return found[0].value, denominator.left.value, value.left


def _number(node: cst.BaseExpression) -> Optional[float]:
    try:
        return float(code_of(node).strip())
    except ValueError:
        return None


def _is_scale(
    stmt: cst.CSTNode, coef: str, grads: str, func: cst.FunctionDef, attrs: Dict[str, str], names_of: NamesOf
) -> bool:
    """``if coef < 1: multi_tensor_applier(<scale>, buf, [grads, grads], coef)``, nothing else."""
    if not (isinstance(stmt, cst.If) and stmt.orelse is None):
        return False
    test = _unparen(stmt.test)
    if not (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.LessThan)
        and code_of(test.left).strip() == coef
        and _number(test.comparisons[0].comparator) == 1.0
    ):
        return False
    inner = stmt.body.body
    if len(inner) != 1:
        return False
    small = _only_small(inner[0]) if isinstance(stmt.body, cst.IndentedBlock) else inner[0]
    if not isinstance(small, cst.Expr):
        return False
    call = _applier_call(small.value, SCALE, func, attrs, names_of)
    return (
        call is not None
        and len(call.args) == 4
        and isinstance(call.args[2].value, cst.List)
        and _single_name_list(call.args[2].value, 2) == grads
        and code_of(call.args[3].value).strip() == coef
    )


# --- the set-up the clip no longer needs ------------------------------------------------------


def _unused_setup(
    owner: cst.ClassDef,
    funcs: List[cst.FunctionDef],
    clips: List[NormClip],
    attrs: Dict[str, str],
    names_of: NamesOf,
) -> List[cst.BaseStatement]:
    """``self.X = ...`` of the kernels and buffers only the rewritten clips read, and an
    ``if multi_tensor_applier.available:`` left with nothing but ``import amp_C``."""
    gone = {id(n) for clip in clips for s in clip.statements for n in walk(s)}
    used_by_clips: Set[str] = set()
    for clip in clips:
        for stmt in clip.statements:
            for node in walk(stmt):
                if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
                    used_by_clips.add(node.attr.value)
    removed: List[cst.BaseStatement] = []
    for func in funcs:
        for node in walk(func):
            found = _assign(node)
            if found is None or id(node) in gone:
                continue
            attr = _self_attr(found[0], func)
            if attr is None or attr not in used_by_clips or not _harmless(found[1], attr, attrs, names_of):
                continue
            if not _read_elsewhere(owner, attr, gone, node):
                removed.append(node)  # type: ignore[arg-type]
    dropped = gone | {id(n) for s in removed for n in walk(s)}
    for func in funcs:
        for node in walk(func):
            if isinstance(node, cst.If) and names_of(node.test) & AVAILABLE and _guard_empties(node, dropped, func):
                removed.append(node)
    return removed


def _harmless(value: cst.BaseExpression, attr: str, attrs: Dict[str, str], names_of: NamesOf) -> bool:
    """A kernel reference, or a buffer built by a torch call (nothing else happens there)."""
    if attrs.get(attr) is not None:
        return True
    return isinstance(value, cst.Call) and any(name.startswith("torch.") for name in names_of(value.func))


def _read_elsewhere(owner: cst.ClassDef, attr: str, gone: Set[int], assignment: cst.CSTNode) -> bool:
    """Any ``<x>.attr`` of the class outside the rewritten clips and this assignment."""
    mine = {id(n) for n in walk(assignment)}
    return any(
        isinstance(n, cst.Attribute) and n.attr.value == attr and id(n) not in gone and id(n) not in mine
        for n in walk(owner)
    )


def _guard_empties(guard: cst.If, dropped: Set[int], func: cst.FunctionDef) -> bool:
    """Every statement of the guard's body is dropped or an ``import amp_C`` that nothing
    else of ``func`` reads; the ``else`` (if any) only raises."""
    if not isinstance(guard.body, cst.IndentedBlock):
        return False
    for stmt in guard.body.body:
        if id(stmt) in dropped:
            continue
        small = _only_small(stmt)
        if not (isinstance(small, cst.Import) and code_of(small).strip() == "import amp_C"):
            return False
    imports = {id(n) for s in guard.body.body if isinstance(_only_small(s), cst.Import) for n in walk(s)}
    if any(
        isinstance(n, cst.Name) and n.value == "amp_C" and id(n) not in dropped and id(n) not in imports
        for n in walk(func)
    ):
        return False
    orelse = guard.orelse
    if orelse is None:
        return True
    if not isinstance(orelse, cst.Else) or not isinstance(orelse.body, cst.IndentedBlock):
        return False
    return all(isinstance(_only_small(s), cst.Raise) for s in orelse.body.body)
