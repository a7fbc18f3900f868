"""Small rules used to test the driver on its own (the real rule families are tested by
their examples in test_rule_examples.py).

``ToyRule`` behaves like a real one: import-aware, byte-preserving, idempotent.
``apex.amp.initialize(m, ...)`` becomes ``m`` (a fixed warning), ``apex.amp.master_params``
is reported for manual work, and ``from apex import amp`` is removed once unused.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import RemoveImportsVisitor

from migrate.rules.base import Example, Rule


class ToyRule(Rule):
    CODES = {
        "APX990": "apex.amp.initialize(m) becomes m",
        "APX991": "amp.master_params needs manual work",
    }
    TRIGGERS = (b"apex",)
    EXAMPLES = [
        Example(
            "initialize-dropped",
            "from apex import amp\nmodel = amp.initialize(model, opt_level='O1')\n",
            "model = model\n",
            codes=("APX990",),
        ),
        Example(
            "master-params-reported",
            "from apex import amp\nclip(amp.master_params(opt))\n",
            None,
            codes=("APX991",),
        ),
    ]
    NOOP_EXAMPLES = [Example("local-name-amp", "amp = object()\namp.initialize(model)\n")]

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.refers_to(original_node.func, "apex.amp.initialize") and updated_node.args:
            self.report(original_node, "APX990", "amp.initialize dropped", fixed=True, severity="warning")
            RemoveImportsVisitor.remove_unused_import(self.context, "apex", "amp")
            return updated_node.args[0].value
        if self.refers_to(original_node.func, "apex.amp.master_params"):
            self.report(original_node, "APX991", "replace amp.master_params(opt) by the optimizer's parameters")
        return updated_node


class BrokenRule(Rule):
    """Turns a call ``apex_break()`` into a module-level ``return``: parses, but does not compile."""

    CODES = {"APX992": "produces code that does not compile"}
    TRIGGERS = (b"apex_break",)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        stmt = updated_node.body[0]
        if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and getattr(stmt.value.func, "value", None) == "apex_break":
            return updated_node.with_changes(body=[cst.Return(cst.Integer("1"))])
        return updated_node


class CrashRule(Rule):
    """Raises on files that mention ``apex_crash``."""

    CODES = {"APX993": "crashes"}
    TRIGGERS = (b"apex_crash",)

    def visit_Module(self, node):
        raise RuntimeError("boom")


class UnparsableRule(Rule):
    """Turns the string ``"apex_garble"`` into one LibCST accepts as a node but cannot parse
    back (a quote inside an unescaped string)."""

    CODES = {"APX993": "produces text that does not parse"}
    TRIGGERS = (b"apex_garble",)

    def leave_SimpleString(self, original_node, updated_node):
        if updated_node.value == '"apex_garble"':
            return updated_node.with_changes(value="'apex'garble'")
        return updated_node
