"""APX311-APX312: the optimizer step apex patched -> ``scaler.step(optimizer)``, then one
``scaler.update()`` after the last step of each phase.

Only ``step()`` calls of optimizers passed to an ``amp.scale_loss`` in the same function are
touched, so gradient-accumulation boundaries (``if (i + 1) % accum == 0:``) are kept: the
scaler steps and updates exactly where the original stepped."""

from __future__ import annotations

from typing import Dict, List, Tuple

import libcst as cst

from ._amp_rule import AmpRule
from ._amp_sites import analyse, code_of, find_scalers, step_calls, walk
from ._edits import expression, statement
from .base import Example


class StepRule(AmpRule):
    """optimizer.step() -> scaler.step(optimizer) + scaler.update()."""

    CODES = {
        "APX311": "optimizer.step() goes through the GradScaler, followed by scaler.update()",
    }
    TRIGGERS = (b"scale_loss",)

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if not info.scale_losses or info.inits:
            return
        lookup = find_scalers(self, module)
        chosen: Dict[cst.Call, str] = {}
        backward_lines: List[int] = []
        for site in info.scale_losses:
            scaler = lookup(site.with_stmt)
            if scaler is None:
                continue
            backward_lines.append(self.line_of(site.with_stmt))
            scope = site.func.body if site.func is not None else module
            for opt in site.optimizers:
                for call in step_calls(scope, code_of(opt)):
                    chosen[call] = scaler.expr
        for node in walk(module):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
                backward_lines.append(self.line_of(node))
        # group steps per block: a step followed (in the same block, with no backward in
        # between) by another step shares one update after the last of them
        by_block: Dict[Tuple[cst.CSTNode, str], List[Tuple[int, cst.Call, cst.CSTNode]]] = {}
        for call, scaler in chosen.items():
            holder = self.parents[call]
            line = self.parents[holder]
            anchor = line if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else holder
            block = self.parents[line]
            by_block.setdefault((block, scaler), []).append((self.line_of(call), call, anchor))
            opt = code_of(call.func.value)
            self.replace_node(call, expression(f"{scaler}.step({opt})"))
            self.report(call, "APX311", f"{opt}.step() -> {scaler}.step({opt}) + {scaler}.update()", fixed=True, severity="info")
        for (block, scaler), steps in by_block.items():
            steps.sort(key=lambda s: s[0])
            for index, (line, call, anchor) in enumerate(steps):
                nxt = steps[index + 1][0] if index + 1 < len(steps) else None
                if nxt is not None and not any(line < b < nxt for b in backward_lines):
                    continue
                self.edits.insert_after(anchor, [statement(f"{scaler}.update()\n")])


EXAMPLES: List[Example] = []
NOOP_EXAMPLES: List[Example] = []
