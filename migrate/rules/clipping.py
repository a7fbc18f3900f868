"""APX321-APX323: gradient clipping on ``amp.master_params(optimizer)``.

GradScaler leaves the grads scaled until ``scaler.step``, so anything that reads them
(clipping, norms) needs ``scaler.unscale_(optimizer)`` first: it is inserted once per
optimizer and function, right before the first statement that uses the grads (that is
after the last backward of the step, and inside the accumulation boundary when the clip
is).  ``amp.master_params(opt)`` becomes the optimizer's parameters: the sibling branch's
expression when an ``if fp16: ... else: ...`` clips ``model.parameters()`` the other way
(the two branches are then identical and are merged), else the parameters the optimizer
was built from in this file, else its param groups.  A NaN check on the clipped norm gets a
TODO: GradScaler also skips steps on inf."""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from ._amp_rule import AmpRule
from ._amp_sites import analyse, arg_value, code_of, find_scalers, walk
from ._edits import expression, move_leading, statement, suite_statements
from .base import Example


class ClippingRule(AmpRule):
    """amp.master_params(opt) -> the optimizer's parameters, after scaler.unscale_(opt)."""

    CODES = {
        "APX321": "amp.master_params(opt) -> the optimizer's parameters, after scaler.unscale_(opt)",
        "APX322": "the fp16 and fp32 clipping branches became identical and were merged",
        "APX323": "a NaN check on the gradient norm: GradScaler skips inf too, check with math.isfinite",
        "APX324": "a `continue` between unscale_ and the step: scaler.update() added before it",
    }
    TRIGGERS = (b"master_params",)
    LIVE_TRIGGERS = ("master_params",)

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if info.inits:
            return
        lookup = find_scalers(self, module)
        unscaled: Set[Tuple[Optional[cst.FunctionDef], str]] = set()
        for need in sorted((n for n in info.needs if n.kind == "master_params"), key=lambda n: self.line_of(n.node)):
            scaler = lookup(need.node)
            if scaler is None:
                continue
            call = need.node
            opt = arg_value(call, 0, "optimizer")
            if opt is None:
                continue
            opt_text = code_of(opt)
            stmt = self.statement_of(call)
            merged = self._merge_branches(stmt, call)
            if merged is not None:
                if_stmt, other, params = merged
                key = (need.func, opt_text)
                new = ([] if key in unscaled else [statement(f"{scaler.expr}.unscale_({opt_text})\n")]) + [other]
                unscaled.add(key)
                self.edits.replace(if_stmt, lambda upd, new=new: [move_leading(upd, new[0])] + new[1:])
                self._update_before_continue(if_stmt, scaler.expr)
                self.report(
                    if_stmt,
                    "APX322",
                    f"both branches clip {params} now; merged, after {scaler.expr}.unscale_({opt_text})",
                    fixed=True,
                    severity="info",
                )
                self._nan_todo(need.func, other)
                continue
            params = self._params_of(module, opt_text)
            self.replace_node(call, expression(params))
            key = (need.func, opt_text)
            if key not in unscaled:
                unscaled.add(key)
                self.edits.insert_before(stmt, [statement(f"{scaler.expr}.unscale_({opt_text})\n")])
                self._update_before_continue(stmt, scaler.expr)
            self.report(
                call,
                "APX321",
                f"amp.master_params({opt_text}) -> {params}, after {scaler.expr}.unscale_({opt_text})",
                fixed=True,
                severity="info",
            )
            self._nan_todo(need.func, stmt)

    def _update_before_continue(self, stmt: cst.BaseStatement, scaler: str) -> None:
        """A ``continue`` between ``unscale_`` and the step skips ``scaler.update()``, and the
        next ``unscale_`` would then raise: update (and back off the scale) before it."""
        block = self.parents.get(stmt)
        body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
        if stmt not in body:
            return
        for later in body[body.index(stmt) + 1 :]:
            if any(
                isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step"
                for n in walk(later)
            ):
                return
            for node in walk(later):
                if isinstance(node, (cst.For, cst.While, cst.FunctionDef)):
                    break
                if isinstance(node, cst.Continue):
                    line = self.parents.get(node)
                    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                        self.edits.insert_before(line, [statement(f"{scaler}.update()\n")])
                        self.report(
                            node,
                            "APX324",
                            f"continue after {scaler}.unscale_(): {scaler}.update() first, or the next unscale_ raises",
                            fixed=True,
                            severity="info",
                        )

    def _merge_branches(self, stmt, call) -> Optional[Tuple[cst.If, cst.BaseStatement, str]]:
        """``if c: clip(amp.master_params(o)) else: clip(X)`` -> ``(if, else-statement, X)``
        when the branches differ only there."""
        block = self.parents.get(stmt)
        if_stmt = self.parents.get(block) if block is not None else None
        if not isinstance(if_stmt, cst.If) or if_stmt.body is not block or not isinstance(if_stmt.orelse, cst.Else):
            return None
        body = suite_statements(if_stmt.body)
        other_body = suite_statements(if_stmt.orelse.body)
        if len(body) != 1 or len(other_body) != 1:
            return None
        mine = code_of(body[0].with_changes(leading_lines=[])).strip()
        theirs = code_of(other_body[0].with_changes(leading_lines=[])).strip()
        hole = code_of(call)
        if mine.count(hole) != 1:
            return None
        prefix, suffix = mine.split(hole)
        if not (theirs.startswith(prefix) and theirs.endswith(suffix)) or len(theirs) <= len(prefix) + len(suffix):
            return None
        params = theirs[len(prefix) : len(theirs) - len(suffix)]
        try:
            cst.parse_expression(params)
        except cst.ParserSyntaxError:
            return None
        return if_stmt, other_body[0].with_changes(leading_lines=[]), params

    def _params_of(self, module: cst.Module, opt_text: str) -> str:
        """``model.parameters()`` when the optimizer is built from it in this file."""
        for node in walk(module):
            if (
                isinstance(node, cst.Assign)
                and len(node.targets) == 1
                and code_of(node.targets[0].target) == opt_text
                and isinstance(node.value, cst.Call)
            ):
                first = arg_value(node.value, 0, "params")
                if (
                    isinstance(first, cst.Call)
                    and isinstance(first.func, cst.Attribute)
                    and first.func.attr.value == "parameters"
                    and not first.args
                ):
                    return code_of(first)
        return f'(p for group in {opt_text}.param_groups for p in group["params"])'

    def _nan_todo(self, func, clip_stmt) -> None:
        """A ``math.isnan(norm)`` / ``torch.isnan(norm)`` on the clipped norm gets a TODO."""
        targets: Set[str] = set()
        for node in walk(clip_stmt):
            if isinstance(node, cst.Assign):
                targets |= {code_of(t.target) for t in node.targets}
        if not targets:
            return
        scope = func.body if func is not None else self.tree
        for node in walk(scope):
            if (
                isinstance(node, cst.Call)
                and code_of(node.func).split(".")[-1] == "isnan"
                and node.args
                and code_of(node.args[0].value) in targets
            ):
                self.todo(
                    node,
                    "APX323",
                    f"{code_of(node)} misses inf: GradScaler skips steps with inf or nan grads, "
                    "use math.isfinite(...) (or torch.isfinite) if this check decides anything",
                    severity="warning",
                )


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
EXAMPLES: List[Example] = [
    Example(
        "fp16-and-fp32-branches-merged",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, args):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, batches, args):
    use_amp = args.fp16
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX322"),
    ),
    Example(
        "master-params-without-else",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, max_norm):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX321"),
    ),
    Example(
        "nan-check-gets-todo",
        before="""\
import math

import torch
from apex import amp


def train(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        if math.isnan(grad_norm):
            print("skipping a NaN step")
            continue
        optimizer.step()
""",
        after="""\
import math

import torch


def train(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # TODO(apexcompat): math.isnan(grad_norm) misses inf: GradScaler skips steps with inf or
        #   nan grads, use math.isfinite(...) (or torch.isfinite) if this check decides anything
        if math.isnan(grad_norm):
            print("skipping a NaN step")
            scaler.update()
            continue
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX321", "APX323", "APX324"),
    ),
]

NOOP_EXAMPLES: List[Example] = []

ClippingRule.EXAMPLES = EXAMPLES
ClippingRule.NOOP_EXAMPLES = NOOP_EXAMPLES
