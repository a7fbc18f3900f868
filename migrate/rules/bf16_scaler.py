"""APX231-APX232: ``--dtype bfloat16`` takes the GradScaler out again.

bfloat16 has float32's exponent range, so its gradients do not underflow and need no loss
scaling. The apex.amp rules build the float16 migration (a GradScaler where
``amp.initialize`` was, ``scaler.scale(loss).backward()``, ``scaler.step(opt)`` and
``scaler.update()``); this rule, run after them, removes the scaler they created (named by
the initialize rule's APX201/APX211 finding) and turns its uses back into plain PyTorch:
``scaler.scale(loss)`` -> ``loss``, ``scaler.step(opt)`` -> ``opt.step()``,
``scaler.update()`` / ``scaler.unscale_(opt)`` removed, ``scaler.is_enabled()`` -> the
scaler's ``enabled=`` switch. A scaler used in any other way (passed to another function,
returned) is kept, with a warning: it still trains correctly, only with a scale it does not
need.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Optional, Set, cast

import libcst as cst

from ._amp_examples import BF16_EXAMPLES
from ._amp_rule import AmpRule
from ._amp_sites import GRADSCALER_NAMES, arg_value, class_of_method, enclosing_function, self_name
from ._edits import code_of, expression, statement
from ._tree import walk

_CREATED = re.compile(r"rewritten: (\S+) = ")
_DROPPED_CALLS = ("update", "unscale_", "load_state_dict")
#: the attribute that carries a class's on/off switch once its scaler is gone
SWITCH_ATTR = "use_amp"


class Bfloat16ScalerRule(AmpRule):
    """--dtype bfloat16: the GradScaler the amp rules created -> plain backward() and step()."""

    CODES = {
        "APX231": "--dtype bfloat16: the GradScaler was removed (bfloat16 needs no loss scaling)",
        "APX232": "--dtype bfloat16: the GradScaler is kept because it leaves its function; remove it by hand",
    }
    TRIGGERS = (b"GradScaler",)
    LIVE_TRIGGERS = ("GradScaler",)

    def plan(self, module: cst.Module) -> None:
        if self.settings.dtype != "bfloat16":
            return
        path = self.context.filename or "<string>"
        created = {
            match.group(1)
            for f in self.findings
            if f.code in ("APX201", "APX211") and f.fixed and f.path == path
            for match in [_CREATED.search(f.message)]
            if match
        }
        for node in walk(module):
            if (
                isinstance(node, cst.Assign)
                and len(node.targets) == 1
                and isinstance(node.value, cst.Call)
                and code_of(node.targets[0].target) in created
                and self.qualified_names(node.value.func) & GRADSCALER_NAMES
            ):
                self._drop(module, node)

    def _drop(self, module: cst.Module, assign: cst.Assign) -> None:
        target: Any = assign.targets[0].target
        refs: List[Any]
        enabled_node = arg_value(cast(cst.Call, assign.value), 5, "enabled")
        enabled = code_of(enabled_node) if enabled_node is not None else None
        func = enclosing_function(self.parents, assign)
        if isinstance(target, cst.Name):
            refs = self._name_refs(module if func is None else func, target.value)
            switch = enabled
            creation: List[Any] = []
        else:
            cls = class_of_method(self.parents, func)
            attr = cast_attr(target)
            if cls is None or attr is None:
                return self._keep(assign, "it is not a local variable or an attribute of self")
            refs = self._attr_refs(cls, attr)
            switch = None if enabled is None else f"{{self}}.{SWITCH_ATTR}"
            if enabled is not None and self._attr_refs(cls, SWITCH_ATTR):
                return self._keep(assign, f"the class already has a {SWITCH_ATTR} attribute")
            creation = [] if enabled is None else [statement(f"{code_of(target.value)}.{SWITCH_ATTR} = {enabled}\n")]
        plan: Dict[cst.CSTNode, Any] = {}
        removed: Dict[cst.CSTNode, Set[int]] = {}
        for ref in refs:
            if ref is target:
                continue
            why = self._plan_use(ref, switch, plan, removed)
            if why is not None:
                return self._keep(assign, why)
        for node, new in plan.items():
            self.replace_node(node, new)
        for line, indexes in removed.items():
            self._remove_small(line, indexes)
        self.edits.replace(self.statement_of(assign), creation)
        self._restate_findings(code_of(target))
        self.report(
            assign,
            "APX231",
            f"--dtype bfloat16: {code_of(target)} removed: bfloat16 needs no loss scaling, so backward() and "
            "step() are plain again",
            fixed=True,
            severity="info",
        )

    def _restate_findings(self, scaler: str) -> None:
        """The earlier rules' messages name the scaler's calls; say what is written now."""
        path = self.context.filename or "<string>"
        name = re.escape(scaler)
        rewrites = (
            (rf"{name}\.scale\(([^()]*)\)", r"\1.backward() (no loss scaling with bfloat16)"),
            (rf"{name}\.step\(([^()]*)\) \+ {name}\.update\(\)", r"\1.step(), as before (no GradScaler with bfloat16)"),
            (rf",? after {name}\.unscale_\([^()]*\)", ""),
            (rf"{name} = [\w.]+\(\.\.\.\) and ", ""),
        )
        for index, finding in enumerate(self.findings):
            if finding.path != path or not finding.fixed:
                continue
            message = finding.message
            for pattern, replacement in rewrites:
                message = re.sub(pattern, replacement, message)
            if message != finding.message:
                self.findings[index] = dataclasses.replace(finding, message=message)

    def _keep(self, assign: cst.Assign, why: str) -> None:
        self.report(
            assign,
            "APX232",
            f"--dtype bfloat16: {code_of(assign.targets[0].target)} is kept ({why}); bfloat16 does not need it: "
            "replace scaler.scale(loss) by loss, scaler.step(opt) by opt.step() and drop scaler.update() by hand",
            fixed=True,
            severity="warning",
        )

    def _plan_use(
        self, ref: Any, switch: Optional[str], plan: Dict[cst.CSTNode, Any], removed: Dict[cst.CSTNode, Set[int]]
    ) -> Optional[str]:
        """Plan the rewrite of one use of the scaler; the reason it cannot be, else None."""
        attribute = self.parents.get(ref)
        call = self.parents.get(attribute)
        if not (
            isinstance(attribute, cst.Attribute)
            and attribute.value is ref
            and isinstance(call, cst.Call)
            and call.func is attribute
        ):
            return f"`{code_of(ref)}` is used as a value at line {self.line_of(ref)}"
        method = attribute.attr.value
        args = [a.value for a in call.args]
        if method == "scale" and len(args) == 1:
            plan[call] = args[0]
        elif method == "step" and len(args) == 1:
            plan[call] = expression(f"{code_of(args[0])}.step()")
        elif method == "is_enabled" and not args:
            if switch is None:
                plan[call] = cst.Name("True")
            else:
                func = enclosing_function(self.parents, call)
                plan[call] = expression(switch.replace("{self}", self_name(func)) if func is not None else switch)
        elif method == "state_dict" and not args:
            plan[call] = expression("{}")
        elif method in _DROPPED_CALLS:
            expr = self.parents.get(call)
            line = self.parents.get(expr)
            if not (isinstance(expr, cst.Expr) and expr.value is call and line is not None):
                return f"the result of {code_of(call)} is used at line {self.line_of(call)}"
            removed.setdefault(line, set()).add(next(i for i, s in enumerate(line.body) if s is expr))
        else:
            return f"{code_of(call)} at line {self.line_of(call)} has no plain counterpart"
        return None

    def _remove_small(self, line: Any, indexes: Set[int]) -> None:
        if len(indexes) == len(line.body) and isinstance(line, cst.SimpleStatementLine):
            self.edits.replace(line, [])
            return

        def without(upd: Any) -> Any:
            body = [s for i, s in enumerate(upd.body) if i not in indexes] or [cst.Pass()]
            last = body[-1]
            if isinstance(last, cst.BaseSmallStatement) and not isinstance(last, cst.Pass):
                body[-1] = last.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return upd.with_changes(body=body)

        self.replace_node(line, without)

    def _name_refs(self, scope: cst.CSTNode, name: str) -> List[cst.Name]:
        refs = []
        for node in walk(scope):
            if isinstance(node, cst.Name) and node.value == name:
                parent = self.parents.get(node)
                if isinstance(parent, cst.Attribute) and parent.attr is node:
                    continue  # `x.scaler` is another object's attribute
                if isinstance(parent, (cst.Param, cst.Arg)) and getattr(parent, "keyword", None) is node:
                    continue
                refs.append(node)
        return refs

    def _attr_refs(self, cls: cst.ClassDef, attr: str) -> List[cst.Attribute]:
        refs = []
        for node in walk(cls):
            if isinstance(node, cst.Attribute) and node.attr.value == attr and isinstance(node.value, cst.Name):
                func = enclosing_function(self.parents, node)
                if func is None or class_of_method(self.parents, func) is not cls:
                    continue
                if node.value.value == self_name(func):
                    refs.append(node)
        return refs


def cast_attr(target: Any) -> Optional[str]:
    """``self.scaler`` -> ``"scaler"``."""
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return target.attr.value
    return None


Bfloat16ScalerRule.EXAMPLES = BF16_EXAMPLES
