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

from ..settings import Settings
from ._amp_examples import BF16_EXAMPLES
from ._amp_rule import AmpRule
from ._amp_sites import GRADSCALER_NAMES, arg_value, class_of_method, enclosing_function, self_name
from ._edits import code_of, expression, move_leading, statement
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

    @classmethod
    def applies_to(cls, settings: Settings) -> bool:
        return settings.dtype == "bfloat16" and super().applies_to(settings)

    def plan(self, module: cst.Module) -> None:
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
        self._module = module
        self._handled_calls: Dict[str, Set[cst.Call]] = {}
        why = self._plan_refs([r for r in refs if r is not target], switch, plan, removed)
        if why is None:
            why = self._unhandled_calls()
        if why is not None:
            return self._keep(assign, why)
        for node, new in plan.items():
            self.replace_node(node, new)
        for line, indexes in removed.items():
            self._remove_small(line, indexes)
        self._replace_keeping_comments(self.statement_of(assign), creation)
        self._restate_findings(code_of(target))
        self.report(
            assign,
            "APX231",
            f"--dtype bfloat16: {code_of(target)} removed: bfloat16 needs no loss scaling, so backward() and "
            "step() are plain again",
            fixed=True,
            severity="info",
        )

    def _replace_keeping_comments(self, stmt: Any, new: List[Any]) -> None:
        """``stmt`` -> ``new``; its blank lines and comments stay (on the next statement when
        nothing replaces it)."""
        if new:
            self.edits.replace(stmt, lambda upd: [move_leading(upd, new[0])] + new[1:])
            return
        self.edits.replace(stmt, [])
        block = self.parents.get(stmt)
        body = list(getattr(block, "body", []))
        index = body.index(stmt) if stmt in body else -1
        if 0 <= index < len(body) - 1 and stmt.leading_lines and body[index + 1] not in self.node_replacements:
            self.replace_node(
                body[index + 1], lambda upd: upd.with_changes(leading_lines=[*stmt.leading_lines, *upd.leading_lines])
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

    def _plan_refs(
        self, refs: List[Any], switch: Optional[str], plan: Dict[cst.CSTNode, Any], removed: Dict[cst.CSTNode, Set[int]]
    ) -> Optional[str]:
        for ref in refs:
            parent = self.parents.get(ref)
            if isinstance(parent, cst.Param):
                continue  # the parameter the scaler was threaded in by
            if isinstance(parent, cst.Arg) and parent.value is ref:
                why = self._plan_threaded(ref, parent, switch, plan, removed)
            else:
                why = self._plan_use(ref, switch, plan, removed)
            if why is not None:
                return why
        return None

    def _plan_threaded(
        self,
        ref: Any,
        arg: cst.Arg,
        switch: Optional[str],
        plan: Dict[cst.CSTNode, Any],
        removed: Dict[cst.CSTNode, Set[int]],
    ) -> Optional[str]:
        """The scaler passed to a same-file function (the initialize rule threads it so): the
        function gets the on/off switch instead when it asks ``is_enabled()``, else neither
        the argument nor the parameter stays."""
        call = self.parents.get(arg)
        callee = self._function_named(call.func) if isinstance(call, cst.Call) else None
        if callee is None:
            return f"`{code_of(ref)}` is passed to {code_of(call) if call is not None else 'a call'}"
        param = self._param_for(callee, call, arg)
        if param is None:
            return f"no parameter of {callee.name.value}() takes `{code_of(ref)}`"
        inner = [r for r in self._name_refs(callee, param.name.value) if r is not param.name]
        asks_switch = any(self._method_of(r) == "is_enabled" for r in inner)
        self._handled_calls.setdefault(callee.name.value, set()).add(call)
        if asks_switch and switch is not None:
            name = switch if switch.isidentifier() else SWITCH_ATTR
            if name != param.name.value and self._name_refs(callee, name):
                return f"{callee.name.value}() already uses the name {name}"
            plan[param] = param.with_changes(name=cst.Name(name))
            keyword = cst.Name(name) if arg.keyword is not None else None
            plan[arg] = arg.with_changes(value=expression(switch), keyword=keyword)
            return self._plan_refs(inner, name, plan, removed)
        pname = param.name.value
        plan[callee.params] = lambda upd: upd.with_changes(params=_without_last_comma(
            [p for p in upd.params if p.name.value != pname]))
        index = call.args.index(arg)
        plan[call] = lambda upd: upd.with_changes(args=_without_last_comma(
            [a for i, a in enumerate(upd.args) if i != index]))
        return self._plan_refs(inner, None, plan, removed)

    def _function_named(self, func: Any) -> Optional[cst.FunctionDef]:
        """The module-level function a call names, if exactly one is defined."""
        if not isinstance(func, cst.Name):
            return None
        found = [s for s in self._module.body if isinstance(s, cst.FunctionDef) and s.name.value == func.value]
        return found[0] if len(found) == 1 else None

    @staticmethod
    def _param_for(callee: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> Optional[cst.Param]:
        params = list(callee.params.params) + list(callee.params.kwonly_params)
        if arg.keyword is not None:
            return next((p for p in params if p.name.value == arg.keyword.value), None)
        if arg.star:
            return None
        index = [a for a in call.args if a.keyword is None].index(arg)
        positional = list(callee.params.params)
        return positional[index] if index < len(positional) else None

    def _unhandled_calls(self) -> Optional[str]:
        """A function that got the scaler as a parameter must get it at every call."""
        for name, handled in self._handled_calls.items():
            calls = [
                n for n in walk(self._module)
                if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == name
            ]
            if len(calls) != len(handled):
                return f"{name}() is also called without the scaler"
        return None

    def _method_of(self, ref: Any) -> Optional[str]:
        attribute = self.parents.get(ref)
        if isinstance(attribute, cst.Attribute) and attribute.value is ref:
            return attribute.attr.value
        return None

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


def _without_last_comma(items: List[Any]) -> List[Any]:
    if items:
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return items


def cast_attr(target: Any) -> Optional[str]:
    """``self.scaler`` -> ``"scaler"``."""
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return target.attr.value
    return None


Bfloat16ScalerRule.EXAMPLES = BF16_EXAMPLES
