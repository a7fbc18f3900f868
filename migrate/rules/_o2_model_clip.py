"""A clip of the model's own parameters after ``amp.scale_loss`` where apex ran O2 on every
amp run (second.pytorch: ``opt_level="O2"``, then ``clip_grad_norm_(net.parameters(), 10)``).

Under O2 ``amp.initialize`` casts the model to float16 and hands the optimizer fp32 master
copies; the block's exit unscales the model's gradients into the masters', and the step reads
only those.  ``model.parameters()`` are the float16 copies, whose gradients are still
multiplied by the loss scale: the clip cut gradients no step reads (apex's clip did nothing,
but to an fp32 parameter kept beside them, ``keep_batchnorm_fp32``, which it cut by a norm
inflated by the loss scale).  Natively the model stays fp32, the clip cuts the gradients the
step reads after ``scaler.unscale_``: the output would train otherwise than the original on
every amp run, so the file keeps apex.amp through the shim, with the reason.

Only an opt level that is O2 whatever the flags (the literal, or a choice of literals among
O2 and O0) is refused here; a level read at run time (O1 by default) trains as apex did
under the default flags, and is left to the native route.  A clip that reads
``amp.master_params`` or the optimizer's own parameter groups (the masters under O2) is
exact natively and is not concerned.
"""

from __future__ import annotations

from typing import Any, Dict, List, Set, Tuple

import libcst as cst

from ._clip_functions import CLIP_FUNCTIONS
from ._edits import code_of
from ._exit_unscale import opt_levels
from ._tree import inside, walk, walk_of

#: the reason the file keeps apex.amp (APX220)
O2_MODEL_CLIP = (
    "{clip} clips {params} after amp.scale_loss under opt level O2 on every amp run: apex's O2 model "
    "is a float16 copy whose gradients are still scaled and which the step never reads (the fp32 master "
    "weights are stepped), so apex's clip did not cut what trains, while natively the model is fp32 and "
    "the clip cuts the gradients the step uses"
)


def o2_model_clips(rule: Any, module: cst.Module, info: Any) -> List[Tuple[cst.Call, str]]:
    """(clip call, reason) for every torch clip of ``X.parameters()`` after a scale_loss block
    of its function (or of the module's top level), on a path that can follow it, when every
    training initialize of the file runs O2 whenever amp is on."""
    from ._amp_sites import enclosing_function, exclusive

    if not info.scale_losses or not _o2_on_every_amp_run(info):
        return []
    found: List[Tuple[cst.Call, str]] = []
    order = {id(node): index for index, node in enumerate(walk(module))}
    backs: Dict[Any, List[Any]] = {}
    for site in info.scale_losses:
        backs.setdefault(site.func, []).append(site.with_stmt)
    for caller, call in _backward_helper_calls(rule, module, info):
        backs.setdefault(caller, []).append(call)  # ``backward(loss, optimizer)``: its scale_loss runs there
    for func, blocks in backs.items():
        for node in walk_of(func.body if func is not None else module, cst.Call):
            if not (rule.qualified_names(node.func) & CLIP_FUNCTIONS and node.args):
                continue
            if enclosing_function(rule.parents, node) is not func:
                continue
            params = node.args[0].value
            if not reads_module_parameters(params):
                continue
            after = [b for b in blocks if order[id(b)] < order[id(node)] and not inside(rule.parents, node, b)]
            scaling_tests = {t for b in after for t in _tests_holding(rule.parents, b, in_body=True)}
            if scaling_tests & _tests_holding(rule.parents, node, in_body=False):
                continue  # ``if fp16: <scale_loss> ... if fp16: <clip masters> else: <this>``: the fp32 path
            if any(not exclusive(rule.parents, b, node) for b in after):
                found.append((node, O2_MODEL_CLIP.format(clip=code_of(node.func), params=code_of(params))))
    return found


def _backward_helper_calls(rule: Any, module: cst.Module, info: Any) -> List[Tuple[Any, cst.Call]]:
    """(calling function, call) for each call of a same-file function that holds a scale_loss
    block: by its name for a module-level one, through ``self`` in a method of its class."""
    from ._amp_sites import class_of_method, enclosing_function, self_name

    functions = {site.func.name.value for site in info.scale_losses
                 if site.func is not None and isinstance(rule.parents.get(site.func), cst.Module)}
    methods = {(class_of_method(rule.parents, site.func), site.func.name.value) for site in info.scale_losses
               if site.func is not None and class_of_method(rule.parents, site.func) is not None}
    found: List[Tuple[Any, cst.Call]] = []
    for call in walk_of(module, cst.Call):
        caller = enclosing_function(rule.parents, call)
        func = call.func
        if isinstance(func, cst.Name) and func.value in functions:
            found.append((caller, call))
        elif (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
              and (class_of_method(rule.parents, caller), func.attr.value) in methods
              and func.value.value == self_name(caller)):
            found.append((caller, call))
    return found


def _o2_on_every_amp_run(info: Any) -> bool:
    """Every training initialize of the file names its opt level, and each level it can give
    is O2 or O0 (amp off), with O2 among them."""
    from ._amp_sites import arg_value

    training = [s for s in info.inits if s.has_optimizers and not s.old_api]
    if not training:
        return False
    for site in training:
        level = arg_value(site.call, 3, "opt_level")
        if site.options is not None or level is None:
            return False
        levels = opt_levels(site.func, level) or set()
        if "O2" not in levels or not levels <= {"O2", "O0"}:
            return False
    return True


def reads_module_parameters(params: cst.BaseExpression) -> bool:
    """``net.parameters()`` (or ``named_parameters()``, in a comprehension or filter over
    them), with no ``amp.master_params`` or ``param_groups`` read in it."""
    text = code_of(params)
    if "master_params" in text or "param_groups" in text:
        return False
    return any(
        isinstance(n, cst.Call)
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value in ("parameters", "named_parameters")
        for n in walk(params)
    )


def _tests_holding(parents: Any, node: Any, in_body: bool) -> Set[str]:
    """The tests of the ifs ``node`` is in the body of (``in_body``) or in the else of."""
    tests: Set[str] = set()
    child, cur = node, parents.get(node)
    while cur is not None:
        if isinstance(cur, cst.If) and (child is cur.body) == in_body and (in_body or child is cur.orelse):
            tests.add(code_of(cur.test))
        child, cur = cur, parents.get(cur)
    return tests
