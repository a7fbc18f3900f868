"""The glue route with one GradScaler per apex loss id (``num_losses=N``).

A model factory that initializes with ``num_losses=2`` makes apex keep two loss scalers;
its helper scales each loss with ``amp.scale_loss(loss, optimizer, loss_id=loss_id)``,
``loss_id`` a parameter that the launcher without apex.amp gives a number at each call
(few-shot-vid2vid's ``loss_backward(opt, d_losses, optimizer_D, 1)``).  Natively the factory
returns the list of GradScalers, the launcher hands it on, and the helper picks
``scalers[loss_id]`` where apex picked its loss scaler.  That matches apex only when

- every ``amp.scale_loss`` of the helpers is given its optimizer and its ``loss_id`` as
  parameters of the helper (both bare names);
- every call of a helper in the launcher gives that parameter a literal number below N, by
  position or keyword, and no ``*``/``**`` argument;
- each optimizer the launcher hands a helper is handed with one loss id only (one GradScaler
  steps it, as one apex loss scaler's overflow skipped its step).

Pure stdlib ``ast`` over the launcher's bytes.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

from . import stdlib_trees
from .repo_index import ModuleSummary

Def = Tuple[str, str]


def _given(call: ast.Call, params: Sequence[str], name: str) -> Optional[ast.expr]:
    """What ``call`` passes for the parameter ``name`` (by position or keyword), if anything."""
    index = params.index(name)
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == name), None)


def glue_loss_ids(
    source: bytes,
    helper_texts: Dict[str, str],
    helpers: Sequence[Def],
    by_path: Dict[str, ModuleSummary],
    losses: int,
) -> Union[Tuple[Def, ...], str]:
    """(helper, its loss-id parameter) of each helper, or why the launcher's calls do not
    prove one GradScaler per loss id (a clause finishing "..., one per loss id, and ...")."""
    params: Dict[str, Tuple[str, ...]] = {}
    wanted: Dict[str, List[Tuple[str, str]]] = {}
    for hpath, name in helpers:
        summary = by_path[hpath]
        own = summary.function_params.get(name, ())
        params[name] = own
        for site in summary.amp_sites:
            if site.owner != name or site.member != "scale_loss":
                continue
            if site.loss_id_name not in own or site.optimizer_name not in own:
                return (f"an amp.scale_loss of {name}() is not given its optimizer and its loss_id as parameters "
                        f"of {name}()")
            wanted.setdefault(name, []).append((site.optimizer_name, site.loss_id_name))
    tree = stdlib_trees.parse(source)
    if tree is None:
        return "the launcher does not parse"
    ids_of: Dict[str, Set[int]] = {}
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or ast.unparse(call.func) not in helper_texts:
            continue
        name = helper_texts[ast.unparse(call.func)]
        line = call.lineno
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return f"the call of {name}() at line {line} passes `*` or `**` arguments"
        for optimizer_param, loss_param in wanted.get(name, ()):
            loss_id = _given(call, params[name], loss_param)
            if not (isinstance(loss_id, ast.Constant) and type(loss_id.value) is int and 0 <= loss_id.value < losses):
                return f"the call of {name}() at line {line} does not give {loss_param} a number below {losses}"
            optimizer = _given(call, params[name], optimizer_param)
            if optimizer is None:
                return f"the call of {name}() at line {line} gives no {optimizer_param}"
            ids_of.setdefault(ast.unparse(optimizer), set()).add(loss_id.value)
    shared = next((text for text, ids in sorted(ids_of.items()) if len(ids) > 1), None)
    if shared is not None:
        return f"{shared} is handed on with the losses of loss ids {', '.join(map(str, sorted(ids_of[shared])))}"
    return tuple(sorted({(name, loss_param) for name, pairs in wanted.items() for _o, loss_param in pairs}))
