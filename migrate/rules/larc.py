"""APX62x: apex's LARC wrapper (removed with apex.parallel) has no torch equivalent: every use
is reported with what to do, and the code is left as it is."""

from __future__ import annotations

import libcst as cst

from ._neighbour_base import NeighbourRule
from .base import Example

LARC = {"apex.parallel.LARC", "apex.parallel.LARC.LARC"}
LARC_TODO = (
    "apex.parallel.LARC was removed and torch has no equivalent: keep a copy of a LARC optimizer "
    "wrapper in your project (per parameter, scale the gradient by trust_coefficient * |p| / (|g| + weight_decay * "
    "|p| + eps), "
    "clipped at 1 relative to the learning rate when clip=True, with the wrapped optimizer's weight_decay applied by "
    "LARC) "
    "or switch to a LARS/LAMB optimizer"
)


class LarcRule(NeighbourRule):
    """Report apex.parallel.LARC: there is nothing in torch to rewrite it to."""

    DESCRIPTION = "Report apex LARC, which torch does not have."
    CODES = {"APX621": "apex LARC was removed and has no torch equivalent"}
    TRIGGERS = (b"LARC",)
    STAR_EXPORTS = {"apex.parallel": ("LARC",)}
    KNOWN_TODOS = {LARC_TODO: ("APX621", "error")}

    def visit_Name(self, node: cst.Name) -> None:
        self._check(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._check(node)

    def _check(self, node: cst.CSTNode) -> None:
        if self.is_outermost(node) and self.names_of(node) & LARC:
            self.todo(node, "APX621", LARC_TODO)

    EXAMPLES = [
        Example(
            "larc-wrapper-reported",
            "from apex.parallel.LARC import LARC\n\noptimizer = LARC(optimizer, trust_coefficient=0.001, clip=False)\n",
            "from apex.parallel.LARC import LARC\n\n# TODO(apexcompat): " + LARC_TODO + "\n"
            "optimizer = LARC(optimizer, trust_coefficient=0.001, clip=False)\n",
            ("APX621",),
        ),
    ]
    NOOP_EXAMPLES = [
        Example(
            "own-larc-class",
            "class LARC:\n    def __init__(self, optimizer):\n        self.optim = optimizer\n\n\n"
            "optimizer = LARC(optimizer)\n",
        ),
    ]
