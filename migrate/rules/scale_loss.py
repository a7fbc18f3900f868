"""APX301-APX303: ``with amp.scale_loss(loss, opt) as s: s.backward()`` ->
``scaler.scale(loss).backward()``.

The body's other statements stay, in order, after it.  ``loss_id`` and ``delay_unscale``
are dropped: one GradScaler serves every loss and unscales lazily at ``step``/``unscale_``.
The old handle API (``handle.scale_loss``) is rewritten the same way once the initialize
rule has replaced ``amp.init()`` by a GradScaler.  An ``if``/``else`` whose branches read the
same once both scale (``if args.fp16: <scaled> else: loss.backward()``) is written once
(``_same_branches``)."""

from __future__ import annotations

from typing import Any, List, Optional

import libcst as cst

from ._amp_rule import APEX_AMP, AmpRule
from ._amp_sites import analyse, arg_value, code_of, find_scalers, names_in
from ._input_gradient import input_gradient
from ._input_gradient_examples import EXAMPLES as INPUT_GRADIENT_EXAMPLES
from ._edits import move_leading, statement, suite_statements, trailing_comment, with_trailing_comments
from ..tree_merge import WHOLE_NODE_READS
from ._same_branches import collapsed, enclosing_if
from ._tree import inside, walk_of
from .base import Example


def _once_if_alike(head: Any) -> List[Any]:
    """The ``if`` once where both its branches read the same (``_same_branches``)."""
    return collapsed(head) or [head]


class ScaleLossRule(AmpRule):
    """amp.scale_loss -> scaler.scale(loss).backward()."""

    CODES = {
        "APX301": "amp.scale_loss rewritten to scaler.scale(loss)",
        "APX302": "loss_id / delay_unscale dropped: one GradScaler serves every loss and unscales lazily",
        "APX303": "delay_overflow_check dropped: GradScaler always skips steps whose grads hold inf/nan",
        "APX268": (
            "a backward run for the gradient of an input (adversarial training) with no optimizer step after it: "
            "that gradient stays scaled as under apex and is read only through its sign, but apex's dynamic loss "
            "scale counted this backward and skipped the next step on its overflow, a GradScaler's does not"
        ),
    }
    TRIGGERS = (b"scale_loss",)
    CODE_WORDS = ("apex",)
    LIVE_TRIGGERS = ("scale_loss",)
    NAMESPACES = APEX_AMP

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if not info.scale_losses or info.inits:
            return  # nothing to do, or the initialize rule left this file on the shim
        lookup = find_scalers(self, module)
        for site in info.scale_losses:
            scaler = lookup(site.with_stmt)
            if scaler is None:
                continue
            self._rewrite(site, info.site_scaler(scaler.expr, site), by_loss_id=info.loss_scalers > 1)
        if info.carrier is not None:
            self.edits.replace(info.carrier.store, [])  # the carrier holds the GradScaler now

    def _rewrite(self, site, scaler: str, by_loss_id: bool = False) -> None:
        call = site.call
        loss = code_of(site.loss)
        body = suite_statements(site.with_stmt.body)
        new: List[cst.BaseStatement] = []
        rest = body
        first = body[0] if body else None
        backward = self._backward_args(first, site.as_name)
        used_later = any(site.as_name in names_in(s) for s in body[1:]) or self._read_after(site)
        # end-of-line comments of the `with` line and of the backward line it replaces
        comments = [_header_comment(site.with_stmt)]
        # a term backed after an earlier block's unscale_ runs plain (``_amp_after_backward``)
        scaled = loss if site.plain_backward else f"{scaler}.scale({loss})"
        if backward is not None and not used_later:
            comments.append(trailing_comment(first))
            new.append(move_leading(first, statement(f"{scaled}.backward({backward})\n")))
            rest = body[1:]
        else:
            new.append(statement(f"{site.as_name} = {scaled}\n"))
        new[0] = with_trailing_comments(new[0], [c for c in comments if c is not None])
        new.extend(rest)
        if site.exit_unscale:  # apex unscaled here, before the caller's code up to the step
            new.append(statement(f"{scaler}.unscale_({code_of(site.optimizers[0])})\n"))
        self.edits.replace(site.with_stmt, lambda upd, new=new: [move_leading(upd, new[0])] + new[1:])
        head = enclosing_if(self.parents, site.with_stmt)
        if head is not None and not self.edits.planned(head):
            # the other branch's plain backward may be scaled now too (``_same_branches``)
            finish = _once_if_alike
            self.edits.replace(head, finish)
            self.file_state().setdefault(WHOLE_NODE_READS, {})[head] = finish  # (``tree_merge``)
        if site.plain_backward:
            self.report(call, "APX301", f"amp.scale_loss -> {loss}.backward(), after {scaler}.unscale_", fixed=True,
                        severity="info")
        else:
            self.report(call, "APX301", f"amp.scale_loss -> {scaler}.scale({loss})", fixed=True, severity="info")
        self._report_input_gradient(site, scaler)
        # with one GradScaler per loss id, loss_id chose the scaler: it is not dropped
        kept = ("loss_id",) if by_loss_id else ()
        dropped = [k for k in ("loss_id", "delay_unscale") if self._has_arg(call, k) and k not in kept]
        if dropped:
            self.report(
                call,
                "APX302",
                f"{' and '.join(dropped)} dropped: one GradScaler serves every loss and unscales once per step",
                fixed=True,
                severity="info",
            )
        if self._has_arg(call, "delay_overflow_check"):
            self.report(
                call,
                "APX303",
                "delay_overflow_check dropped: GradScaler skips the step when grads hold inf/nan",
                fixed=True,
                severity="warning",
            )

    def _report_input_gradient(self, site, scaler: str) -> None:
        """APX268 for a backward run only for an input's gradient (``_input_gradient``)."""
        shape = input_gradient(self, site)
        if shape is None or shape.stepped or shape.magnitude:
            return
        grads = " and ".join(f"{t}.grad" for t in shape.tensors)
        opts = ", ".join(code_of(o) for o in site.optimizers)
        self.report(
            site.call,
            "APX268",
            f"this backward is run for {grads}, read only through its sign, and no {opts}.step() follows it "
            f"before another backward or zero_grad: {grads} stays scaled as under apex, and the parameters' "
            f"gradients it leaves are dropped by zero_grad or unscaled by the next {scaler}.step with the scale "
            "they were made with. With a dynamic loss scale apex counted this backward (growth after 2000 "
            f"backwards, not steps) and, when it overflowed, halved the scale and skipped the next step; {scaler} "
            "counts and checks at steps only, so its scale and the steps it skips may differ from apex's",
            fixed=True,
            severity="warning",
        )

    def _read_after(self, site) -> bool:
        """Whether the ``as`` name is read after the ``with`` block, in its function
        (``amp_scale = scaled_loss.item() // loss.item()``): it must stay bound then."""
        if not site.as_name:
            return False
        end = self.position(site.with_stmt).end.line
        scope = site.func.body if site.func is not None else self.tree
        rebinding = [  # another ``with ... as <name>`` binds its own (its backward reads that one)
            node
            for node in walk_of(scope, cst.With)
            if any(i.asname is not None and code_of(i.asname.name) == site.as_name for i in node.items)
        ]
        return any(
            node.value == site.as_name
            and self.line_of(node) > end
            and not any(inside(self.parents, node, other) for other in rebinding)
            for node in walk_of(scope, cst.Name)
        )

    @staticmethod
    def _has_arg(call: cst.Call, name: str) -> bool:
        index = {"loss_id": 2, "delay_unscale": 4, "delay_overflow_check": 5}[name]
        return arg_value(call, index, name) is not None

    @staticmethod
    def _backward_args(stmt: Optional[cst.BaseStatement], as_name: str) -> Optional[str]:
        """The argument text of ``<as_name>.backward(...)`` if ``stmt`` is exactly that call."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        expr = stmt.body[0]
        if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
            return None
        func = expr.value.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "backward"
            and isinstance(func.value, cst.Name)
            and func.value.value == as_name
        ):
            return None
        args = expr.value.args
        if any(as_name in names_in(a) for a in args):
            return None
        text = code_of(expr.value)
        return text[text.index("(") + 1 : text.rindex(")")]


def _header_comment(with_stmt: cst.With) -> Optional[cst.Comment]:
    """The comment at the end of the ``with ...:`` line (of the whole line for a one-line
    ``with``)."""
    body = with_stmt.body
    if isinstance(body, cst.IndentedBlock):
        return body.header.comment
    if isinstance(body, cst.SimpleStatementSuite):
        return body.trailing_whitespace.comment
    return None


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
EXAMPLES: List[Example] = [
    Example(
        "one-line-with-and-backward-kwargs",
        before="""\
from apex import amp


def step(model, optimizer, x, y, opt_level):
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    loss = (model(x) - y).pow(2).mean()
    with amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward(retain_graph=True)
    optimizer.step()
""",
        after="""\
import torch


def step(model, optimizer, x, y, opt_level):
    use_amp = opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        loss = (model(x) - y).pow(2).mean()
    scaler.scale(loss).backward(retain_graph=True)
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "scaled-loss-used-in-body",
        before="""\
from apex import amp


def step(model, optimizer, x):
    model, optimizer = amp.initialize(model, optimizer)
    loss = model(x).sum()
    with amp.scale_loss(loss, [optimizer]) as scaled_loss:
        scaled_loss.backward()
        log("scaled loss", scaled_loss.item())
    optimizer.step()
""",
        after="""\
import torch


def step(model, optimizer, x):
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).sum()
    scaled_loss = scaler.scale(loss)
    scaled_loss.backward()
    log("scaled loss", scaled_loss.item())
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "list-of-optimizers",
        before="""\
from apex import amp


def train(model, optimizers, batches):
    model, optimizers = amp.initialize(model, optimizers, opt_level="O1")
    enc_opt, dec_opt = optimizers
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, [enc_opt, dec_opt]) as scaled_loss:
            scaled_loss.backward()
        enc_opt.step()
        dec_opt.step()
""",
        after="""\
import torch


def train(model, optimizers, batches):
    scaler = torch.amp.GradScaler("cuda")
    enc_opt, dec_opt = optimizers
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(enc_opt)
        scaler.step(dec_opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX311"),
    ),
    Example(
        "end-of-line-comments-kept",
        before="""\
from apex import amp


def step(model, optimizer, x):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    loss = model(x).sum()
    with amp.scale_loss(loss, optimizer) as scaled_loss:  # scale to avoid underflow
        scaled_loss.backward()  # NOTE: keep retain_graph off
    optimizer.step()  # update
""",
        after="""\
import torch


def step(model, optimizer, x):
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).sum()
    # scale to avoid underflow
    scaler.scale(loss).backward()  # NOTE: keep retain_graph off
    scaler.step(optimizer)  # update
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
]

NOOP_EXAMPLES: List[Example] = []

ScaleLossRule.EXAMPLES = EXAMPLES + INPUT_GRADIENT_EXAMPLES
ScaleLossRule.NOOP_EXAMPLES = NOOP_EXAMPLES
