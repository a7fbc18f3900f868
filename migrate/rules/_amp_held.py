"""The rules' side of the held-optimizer route (``held_optimizer_plan``): the GradScaler is an
attribute of the object that holds the optimizers apex initialized.

* The models as the methods it reaches read them: a loss class that trains the discriminator
  keeps the model wrapper as ``self.model`` and runs ``self.model.D(fake)``; no initialize of
  its file names the model, so the autocast search would find no forward pass before the
  loss.  There an attribute of ``self`` named like a model (``model``, ``net``,
  ``discriminator``) is one: calling it, or what it holds (``self.model.D``), runs a forward.
* The holder's step: ``self.optimizer.step()`` whose class's ``step`` only calls
  ``self.G.step()`` steps the optimizer scaled as ``self.optimizer.G``.
* In the launcher: the report of the attach (APX258), and the disabled GradScaler its class's
  ``__init__`` creates first.
"""

from __future__ import annotations

from typing import Any, Set

import libcst as cst

from ._edits import code_of
from ._tree import walk


def held_model_texts(rule: Any, info: Any) -> Set[str]:
    """``self.model`` and the like, read in this file's methods the held-optimizer route reaches."""
    from ._amp_sites import MODEL_CALL, class_of_method, self_name

    plan = info.plan
    held = set(plan.held_methods) if plan is not None else set()
    if not held:
        return set()
    found: Set[str] = set()
    for func in walk(rule.tree):
        if not isinstance(func, cst.FunctionDef):
            continue
        cls = class_of_method(rule.parents, func)
        if cls is None or (cls.name.value, func.name.value) not in held:
            continue
        me = self_name(func)
        for node in walk(func.body):
            if (
                isinstance(node, cst.Attribute)
                and isinstance(node.value, cst.Name)
                and node.value.value == me
                and MODEL_CALL.search(node.attr.value)
            ):
                found.add(code_of(node))
    return found


def through_held(rule: Any, site: Any, info: Any) -> None:
    """An optimizer ``self.<holder>.<attr>`` that a method the held-optimizer route reaches
    never steps itself, but steps through ``self.<holder>.step()``, whose class's ``step``
    only calls ``self.<attr>.step()`` (the plan's ``held_delegates``): recorded in
    ``site.delegated``, so ``find_steps`` finds that step and the GradScaler steps the
    optimizer there."""
    from ._amp_sites import class_of_method, find_steps, self_name

    plan = info.plan
    if plan is None or not plan.held_delegates or site.func is None:
        return
    cls = class_of_method(rule.parents, site.func)
    if cls is None or (cls.name.value, site.func.name.value) not in set(plan.held_methods):
        return
    stepped = dict(plan.held_delegates).get("step")
    me = self_name(site.func)
    for opt in site.optimizers:
        if not (isinstance(opt, cst.Attribute) and opt.attr.value == stepped):
            continue
        holder = opt.value
        if not (isinstance(holder, cst.Attribute) and isinstance(holder.value, cst.Name) and holder.value.value == me):
            continue
        if find_steps(rule, site, code_of(opt)):
            continue
        site.delegated[code_of(opt)] = code_of(holder)


def held_attach(rule: Any, call: Any, target: str, instance: str, attribute: str, info: Any) -> list:
    """Where the held-optimizer route's launcher creates its GradScaler (``target``): the
    statement that puts it on the object (none when it is created there already), reported
    with the sites that read it (APX258)."""
    from ._edits import statement

    held = f"{instance}.{attribute}"
    rule.report(
        call,
        "APX258",
        f"{held} holds the GradScaler, with the optimizers it initialized; "
        f"{', '.join(info.plan.held_readers)} read it there, through the object that keeps them",
        fixed=True,
        severity="info",
    )
    return [] if held == target else [statement(f"{held} = {target}\n")]


def held_scaler_in_init(rule: Any, info: Any) -> None:
    """The initializing method may never run (the launcher calls it only when amp is on): the
    class's ``__init__`` creates the GradScaler disabled first, which that method replaces, so
    the sites that read it on the object find one on every path and train as before."""
    from ._amp_sites import class_of_method, init_method, self_name
    from ._edits import statement

    site = info.training_inits[0]
    cls = class_of_method(rule.parents, site.func) if site.func is not None else None
    if cls is None or site.func.name.value == "__init__":
        return
    init = init_method(cls)
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return  # the plan proved there is one
    body = list(init.body.body)
    docstring = (
        isinstance(body[0], cst.SimpleStatementLine)
        and isinstance(body[0].body[0], cst.Expr)
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
    anchor = body[1] if docstring and len(body) > 1 else body[0]
    me = self_name(init)
    names = [a for d, i, a in info.plan.attach_scaler if i == "self" and d == cls.name.value]
    if info.storage == "self" and info.scaler_name not in names:
        names.insert(0, info.scaler_name)
    rule.need_torch()
    ctor = "torch.amp.GradScaler" if rule.settings.torch_at_least(2, 3) else "torch.cuda.amp.GradScaler"
    lines = [statement(f"{me}.{names[0]} = {ctor}(enabled=False)\n")]
    lines += [statement(f"{me}.{n} = {me}.{names[0]}\n") for n in names[1:]]
    rule.edits.insert_before(anchor, lines)
    rule.report(
        anchor,
        "APX258",
        f"{me}.{names[0]} is created disabled here and replaced in {site.func.name.value}() where amp.initialize "
        "was: the sites that read it find one when that method never runs (amp off)",
        fixed=True,
        severity="info",
    )
