"""A term backed after the model's scaled backward, from calls that run no model found here.

MiB's incremental-learning step (an EWC / RW / PI regularizer)::

    with amp.scale_loss(loss_tot, optim) as scaled_loss:
        scaled_loss.backward()
    if self.regularizer_flag:
        self.regularizer.update()            # reads p.grad: the Fisher information
        l_reg = self.reg_importance * self.regularizer.penalty()
        if l_reg != 0.:
            with amp.scale_loss(l_reg, optim) as scaled_loss:
                scaled_loss.backward()
    optim.step()

apex unscaled the first backward's gradients when its block exited, so whatever ran between
(``update()``) read them at their true size, and the second backward added its own, unscaled
on its exit too.  Natively the model's forward pass and loss go under autocast as for any
site; then:

* ``scaler.unscale_(optim)`` follows the first scaled backward (``ScaleLossSite.exit_unscale``):
  what runs between reads the gradients as apex left them, and ``scaler.step`` then takes them
  as they are (it unscales once per step);
* the second backward runs plain (``ScaleLossSite.plain_backward``): ``l_reg.backward()``.  Its
  loss is computed outside any autocast region, from calls that run no model found here, so
  its gradients are float32 and need no scale; they add to the unscaled ones at their true
  size, as under apex.

Proven only where each of these holds (else the site keeps its APX210 refusal):

* the two blocks are in one function, each scaling the same one optimizer, the first with a
  plain ``backward()`` (no ``retain_graph``: a second backward through its graph, whose
  activations are float16, would fail loudly rather than lose precision silently);
* the second block's loss is bound by a simple statement after the first block, in a block
  the first block's block holds (the second never runs without the first), and no model call
  (``_is_model_call``, the model handed to a helper included) runs between the two blocks;
* one step of the optimizer follows both blocks, in the first block's own block (once per
  first backward: a second ``unscale_`` before it would raise), with no other amp.scale_loss
  of the function before it, no loop between the blocks and the step, no clip, no
  ``amp.master_params`` and no ``.grad`` read between the first block and the step (the clip
  route would give those an ``unscale_`` of their own), and no guard on the GradScaler there.

What changes: apex checked the second backward's gradients for inf/nan as well; the GradScaler
checks at ``unscale_``, before that backward.  Its float32 gradients overflow only where the
term itself is inf/nan.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import libcst as cst

from ._amp_sites import AmpFile, ScaleLossSite, assigned_names, code_of, find_steps
from ._clip_functions import CLIP_FUNCTIONS
from ._tree import inside, loop_between, walk

#: the file state key: the scale_loss blocks (``_key``) whose backward is followed by
#: ``unscale_`` ("exit") and those whose backward runs plain ("plain")
STATE_KEY = "plain_terms_after_backward"


def _key(rule: Any, site: ScaleLossSite, info: AmpFile) -> Tuple[str, int, str]:
    """Names ``site`` across the rules of a file, each of which sees the text the one before
    it left (lines move): its function's dotted name, its rank among that function's
    amp.scale_loss blocks and its loss."""
    names, cur = [], site.func
    while cur is not None:
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
            names.append(cur.name.value)
        cur = rule.parents.get(cur)
    rank = [s for s in info.scale_losses if s.func is site.func].index(site)
    return ".".join(reversed(names)), rank, code_of(site.loss)


def _lone_backward(block: cst.With, as_name: Optional[str]) -> Optional[cst.Call]:
    """The block's one statement ``<as_name>.backward(...)``, or None."""
    body = block.body.body if isinstance(block.body, cst.IndentedBlock) else ()
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    expr = body[0].body[0]
    call = expr.value if isinstance(expr, cst.Expr) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return None
    if call.func.attr.value != "backward" or code_of(call.func.value) != as_name:
        return None
    return call


def _reads_gradients(rule: Any, nodes: List[Any]) -> bool:
    """A clip, ``amp.master_params`` or a ``.grad`` among ``nodes``."""
    for node in nodes:
        if isinstance(node, cst.Attribute) and node.attr.value in ("grad", "master_params"):
            return True
        if isinstance(node, cst.Call) and (
            rule.qualified_names(node.func) & CLIP_FUNCTIONS or "clip_grad" in code_of(node.func)
        ):
            return True
    return False


def plain_term_after(rule: Any, site: ScaleLossSite, info: AmpFile, lone: Any, models: set) -> Optional[Any]:
    """For ``site``, whose loss is bound by ``lone`` with no model call before it in its block:
    the scale_loss site before it whose backward is followed by ``unscale_`` while ``site``'s
    runs plain, as above; None where not proven."""
    func, parents = site.func, rule.parents
    if func is None or not isinstance(site.loss, cst.Name) or len(site.optimizers) != 1:
        return None
    if not isinstance(lone, cst.SimpleStatementLine) or site.loss.value not in assigned_names(lone):
        return None
    if func in info.scaler_guards or _lone_backward(site.with_stmt, site.as_name) is None:
        return None
    opt = code_of(site.optimizers[0])
    here = rule.position(site.with_stmt).start.line
    earlier = [
        s for s in info.scale_losses if s.func is func and s is not site and rule.position(s.with_stmt).end.line < here
    ]
    if not earlier:
        return None
    first = max(earlier, key=lambda s: rule.position(s.with_stmt).start.line)
    if len(first.optimizers) != 1 or code_of(first.optimizers[0]) != opt:
        return None
    backward = _lone_backward(first.with_stmt, first.as_name)
    if backward is None or backward.args:
        return None
    block = parents.get(first.with_stmt)
    body = list(getattr(block, "body", ()))
    if not (inside(parents, lone, block) or lone in body) or not inside(parents, site.with_stmt, block):
        return None
    if rule.position(lone).start.line <= rule.position(first.with_stmt).end.line:
        return None
    steps = find_steps(rule, site, opt)
    if len(steps) != 1 or find_steps(rule, first, opt) != steps:
        return None
    step_stmt = rule.statement_of(steps[0])
    if step_stmt not in body or body.index(step_stmt) < body.index(first.with_stmt):
        return None
    if any(s is not site and s is not first and steps[0] in find_steps(rule, s, opt) for s in info.scale_losses):
        return None
    between = body[body.index(first.with_stmt) + 1 : body.index(step_stmt)]
    if loop_between(parents, site.with_stmt, block) or any(isinstance(s, (cst.For, cst.While)) for s in between):
        return None
    nodes = [n for stmt in between for n in walk(stmt)]
    if _reads_gradients(rule, nodes):
        return None
    end = rule.position(site.with_stmt).start.line
    if any(
        isinstance(n, cst.Call) and rule.position(n).start.line < end and rule._is_model_call(n, models, via_args=True)
        for n in nodes
    ):
        return None
    return first


def remember(rule: Any, first: ScaleLossSite, site: ScaleLossSite, info: AmpFile) -> None:
    """Leave the decision for the rules that rewrite the blocks (``mark``)."""
    state = rule.file_state().setdefault(STATE_KEY, {"exit": set(), "plain": set()})
    state["exit"].add(_key(rule, first, info))
    state["plain"].add(_key(rule, site, info))


def mark(rule: Any, info: AmpFile) -> None:
    """Set ``exit_unscale`` / ``plain_backward`` on the sites the autocast placement decided
    (``remember``), for the rules that run after it."""
    state = rule.file_state().get(STATE_KEY)
    if not state:
        return
    for site in info.scale_losses:
        if site.func is None:
            continue
        where = _key(rule, site, info)
        if where in state["exit"]:
            site.exit_unscale = True
        if where in state["plain"]:
            site.plain_backward = True
