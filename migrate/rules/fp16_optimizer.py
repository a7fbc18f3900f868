"""APX70x: apex's old mixed-precision API (``apex.fp16_utils.FP16_Optimizer`` and helpers,
removed from apex) -> an fp32 model, ``torch.autocast`` and a ``GradScaler``.

Only the simple, provable forms are rewritten: the wrapper is built in one function (or one
class, on ``self``) and used there through ``backward(loss)``, ``clip_master_grads(c)``,
``step()`` and ``zero_grad()``.  Everything else (closures, ``update_master_grads=False``,
``.overflow``, the wrapper handed to other functions) is reported with a TODO.  Copies of
``fp16_utils`` vendored inside a project are not apex: they are only mentioned.

This module rewrites the calls, attributes and blocks; which constructions are provable and
what edits they need is decided in ``_fp16_plan``."""

from __future__ import annotations

import libcst as cst

from ._edits import block_body
from ._neighbour_base import bind_args, code_of, expr, kwarg
from ._fp16_plan import (
    AUTOCAST_TODO,
    CAST_TODO,
    CASTS,
    CLIP_GRAD_NORM,
    FP16_OPTIMIZER,
    LOAD_TODO,
    MANUAL,
    MANUAL_TODO,
    NOT_SIMPLE_TODO,
    STAR_NAMES,
    STATIC_TODO,
    TO_PYTHON_FLOAT,
    FP16Planning,
    _construction_call,
    _Plan,
)
from .base import Example


class FP16OptimizerRule(FP16Planning):
    """apex FP16_Optimizer (old API) -> fp32 model + torch.autocast + torch.amp.GradScaler."""

    DESCRIPTION = "Rewrite simple FP16_Optimizer loops to autocast + GradScaler; report the rest."
    CODES = {
        "APX701": "FP16_Optimizer -> fp32 model + torch.autocast + GradScaler",
        "APX702": "FP16_Optimizer used in a way that cannot be rewritten safely",
        "APX703": "FP16_Optimizer static loss scale kept as a GradScaler that does not grow",
        "APX704": "forward pass not found next to the backward: autocast left to the user",
        "APX705": "model.half() / network_to_half and fp16 input casts removed (autocast casts instead)",
        "APX706": "apex.fp16_utils helper without a native equivalent",
        "APX707": "apex.fp16_utils to_python_float / clip_grad_norm -> tensor.item() / torch.nn.utils.clip_grad_norm_",
        "APX708": "vendored copy of fp16_utils (not apex): left unchanged",
        "APX709": "FP16_Optimizer checkpoint loading needs a look",
    }
    TRIGGERS = (b"FP16_Optimizer", b"fp16_utils", b"fp16util", b"network_to_half", b"FP16Model", b"to_python_float")
    STAR_EXPORTS = {"apex.fp16_utils": STAR_NAMES}
    KNOWN_TODOS = {
        NOT_SIMPLE_TODO: ("APX702", "error"),
        STATIC_TODO: ("APX703", "warning"),
        AUTOCAST_TODO: ("APX704", "warning"),
        LOAD_TODO: ("APX709", "error"),
        # CAST_TODO starts with the helper's name, so each name is its own prefix
        **{CAST_TODO.format(name=name.rsplit(".", 1)[1]): ("APX706", "error") for name in CASTS},
        MANUAL_TODO.split("{", 1)[0]: ("APX706", "error"),
    }

    # --- rewriting ---------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = code_of(node.module) if node.module is not None else ""
        vendored = module.split(".")[-1] in ("fp16_utils", "fp16util", "fp16_optimizer", "fp16")
        if vendored and (node.relative or not module.startswith("apex")) and "FP16_Optimizer" in code_of(node) + module:
            self.report(
                node,
                "APX708",
                f"{'.' * len(node.relative)}{module} is a copy of apex's fp16_utils inside this project, not apex: "
                "left unchanged (migrating it to torch.amp is optional)",
                severity="info",
            )
        return False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        plan = self._plan_calls.get(id(original_node))
        if plan is not None:
            return self._rewrite_method(plan, original_node, updated_node)
        for plan in self._plans:
            if id(original_node) in plan.thread_calls and plan.scaler:
                args = list(updated_node.args) + [kwarg(plan.scaler, plan.scaler)]
                return self.replace_call(updated_node, updated_node.func, args)
        if id(original_node) in self._half_calls:
            self._report_casts(original_node)
            return updated_node.func.value  # type: ignore[attr-defined]
        if id(original_node) in self._dtype_calls:
            self._report_casts(original_node)
            args = [a for a in updated_node.args if not (a.keyword is not None and a.keyword.value == "dtype")]
            return self.replace_call(updated_node, updated_node.func, args)
        names = self.names_of(original_node.func)
        if id(original_node) in self._cast_calls:
            self._report_casts(original_node)
            self.forget(original_node.func)
            return updated_node.args[0].value
        if names & CASTS:
            name = sorted(names & CASTS)[0].rsplit(".", 1)[1]
            self.todo(original_node, "APX706", CAST_TODO.format(name=name))
        elif names & TO_PYTHON_FLOAT and len(updated_node.args) == 1 and not updated_node.args[0].keyword:
            self.report(original_node, "APX707", "to_python_float(t) -> t.item()", fixed=True, severity="info")
            self.forget(original_node.func)
            value = updated_node.args[0].value
            if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            return cst.Call(func=cst.Attribute(value=value, attr=cst.Name("item")))
        elif names & CLIP_GRAD_NORM:
            self.report(
                original_node,
                "APX707",
                "apex.fp16_utils.clip_grad_norm -> torch.nn.utils.clip_grad_norm_",
                fixed=True,
                severity="info",
            )
            self.forget(original_node.func)
            return updated_node.with_changes(func=self.torch_name("torch.nn.utils.clip_grad_norm_", original_node))
        else:
            for name in names:
                if name in MANUAL:
                    self.todo(original_node, "APX706", MANUAL_TODO.format(name=MANUAL[name]))
                    break
        if names & FP16_OPTIMIZER:
            plan = next((p for p in self._plans if _construction_call(p.statement) is original_node), None)
            if plan is not None:
                self.forget(original_node.func)
                message = "FP16_Optimizer -> fp32 model + torch.autocast + torch.amp.GradScaler"
                if plan.scaler is None:
                    message = "FP16_Optimizer with loss scale 1 -> fp32 model + torch.autocast (no loss scaling needed)"
                self.report(original_node, "APX701", message, fixed=True, severity="info")
                if plan.static:
                    self.report(original_node, "APX703", STATIC_TODO, fixed=True, severity="warning")
            else:
                for call, message in self._rejected:
                    if call is original_node:
                        self.todo(original_node, "APX702", message)
                        break
        return updated_node

    def _report_casts(self, node: cst.CSTNode) -> None:
        if not self._casts_reported:
            self._casts_reported = True
            self.report(
                node,
                "APX705",
                "fp16 casts of the model and its inputs removed: the model stays fp32 and autocast picks fp16 per op",
                fixed=True,
                severity="info",
            )

    def _rewrite_method(self, plan: _Plan, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        method = plan.calls[id(original)]
        if id(original) in self._autocast_todos:
            self.todo(original, "APX704", AUTOCAST_TODO, fixed=True, severity="warning")
        bound = bind_args(call, ("loss", "update_master_grads", "retain_graph")) if method == "backward" else None
        if method == "backward" and bound is not None:
            loss = code_of(bound["loss"].value)
            retain = f"retain_graph={code_of(bound['retain_graph'].value)}" if "retain_graph" in bound else ""
            if plan.scaler:
                return expr(f"{plan.scaler}.scale({loss}).backward({retain})")
            needs_parens = not isinstance(bound["loss"].value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
            return expr(f"{'(' + loss + ')' if needs_parens else loss}.backward({retain})")
        if method == "clip":
            target = plan.targets.get(id(original), plan.target)
            every_param = f'[p for group in {target}.param_groups for p in group["params"]]'
            params = self._params_at(plan, original) or every_param
            clip = self.torch_name("torch.nn.utils.clip_grad_norm_", original)
            return cst.Call(
                func=clip,
                args=[cst.Arg(expr(params), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))]
                + list(call.args),
            )
        if method == "step" and plan.scaler:
            return expr(f"{plan.scaler}.step({plan.targets.get(id(original), plan.target)})")
        if method == "load":
            self.todo(original, "APX709", LOAD_TODO)
        if method == "zero_grad":
            # FP16_Optimizer.zero_grad(set_grads_to_None=...) is torch's set_to_none
            args = [
                a.with_changes(keyword=cst.Name("set_to_none"))
                if a.keyword is not None and a.keyword.value == "set_grads_to_None"
                else a
                for a in call.args
            ]
            return call.with_changes(args=args)
        return call

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        """A function the wrapper is passed to gets the GradScaler as a parameter."""
        for plan in self._plans:
            if id(original_node) not in plan.threads or not plan.scaler:
                continue
            params = updated_node.params
            new = cst.Param(cst.Name(plan.scaler))
            if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params:
                return updated_node.with_changes(params=params.with_changes(kwonly_params=[*params.kwonly_params, new]))
            if params.params and params.params[-1].default is not None:
                new = new.with_changes(
                    default=cst.Name("None"),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                    ),
                )
            existing = list(params.params)
            if existing:
                last = existing[-1]
                trailing = isinstance(last.comma, cst.Comma)  # a multi-line signature keeps its style
                separator = last.comma if trailing else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                existing[-1] = last.with_changes(comma=separator)
                new = new.with_changes(comma=last.comma if trailing else cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(params=params.with_changes(params=[*existing, new]))
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        plan = self._plan_attributes.get(id(original_node))
        if plan is not None:
            return expr(plan.attributes[id(original_node)])
        return updated_node

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        if not self._edits:
            return updated_node
        return block_body(updated_node, self._edits.apply(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._edits:
            updated_node = updated_node.with_changes(body=self._edits.apply(original_node.body, updated_node.body))
        return super().leave_Module(original_node, updated_node)

    EXAMPLES = [
        Example(
            "static-loss-scale-loop",
            "import torch\nfrom apex.fp16_utils import FP16_Optimizer\n\n\ndef train(model, loader):\n"
            "    model = model.cuda().half()\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    optimizer = FP16_Optimizer(optimizer, static_loss_scale=128.0)\n    for x, y in loader:\n"
            "        optimizer.zero_grad()\n        out = model(x.cuda().half())\n        loss = criterion(out, y)\n"
            "        optimizer.backward(loss)\n        optimizer.clip_master_grads(1.0)\n        optimizer.step()\n",
            "import torch\n\n\ndef train(model, loader):\n"
            "    model = model.cuda()\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    # TODO(apexcompat): " + STATIC_TODO + "\n"
            '    scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=10**9)\n'
            "    for x, y in loader:\n"
            '        optimizer.zero_grad()\n        with torch.autocast("cuda", dtype=torch.float16):\n'
            "            out = model(x.cuda())\n            loss = criterion(out, y)\n"
            "        scaler.scale(loss).backward()\n        scaler.unscale_(optimizer)\n"
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n        scaler.step(optimizer)\n"
            "        scaler.update()\n",
            ("APX701", "APX703", "APX705"),
        ),
        Example(
            "dynamic-loss-scale-with-args",
            "import torch\nfrom apex.fp16_utils import FP16_Optimizer, network_to_half\n\n\ndef main():\n"
            "    model = network_to_half(Net().cuda())\n    opt = torch.optim.Adam(model.parameters())\n"
            '    opt = FP16_Optimizer(opt, dynamic_loss_scale=True, dynamic_loss_args={"scale_window": 500})\n'
            "    for batch in data:\n        loss = model(batch).sum()\n        opt.zero_grad()\n"
            "        opt.backward(loss)\n        opt.step()\n",
            "import torch\n\n\ndef main():\n"
            "    model = Net().cuda()\n    opt = torch.optim.Adam(model.parameters())\n"
            '    scaler = torch.amp.GradScaler("cuda", growth_interval=500)\n'
            '    for batch in data:\n        with torch.autocast("cuda", dtype=torch.float16):\n'
            "            loss = model(batch).sum()\n"
            "        opt.zero_grad()\n        scaler.scale(loss).backward()\n        scaler.step(opt)\n"
            "        scaler.update()\n",
            ("APX701", "APX705"),
        ),
        Example(
            "flag-guarded-word-language-model",
            "import torch\nfrom apex.fp16_utils import FP16_Optimizer\n\n\ndef main(args):\n"
            "    model = RNNModel().cuda()\n    if args.fp16:\n        model.half()\n"
            "    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)\n"
            "    if args.fp16:\n"
            "        optimizer = FP16_Optimizer(optimizer, static_loss_scale=args.static_loss_scale,\n"
            "                                   dynamic_loss_scale=args.dynamic_loss_scale)\n"
            "    for data, targets in batches:\n        output = model(data)\n"
            "        loss = criterion(output, targets)\n"
            "        optimizer.zero_grad()\n        if args.fp16:\n            optimizer.backward(loss)\n"
            "        else:\n            loss.backward()\n"
            "        optimizer.step()\n",
            "import torch\n\n\ndef main(args):\n"
            "    model = RNNModel().cuda()\n"
            "    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)\n"
            "    # TODO(apexcompat): " + STATIC_TODO + "\n"
            '    scaler = torch.amp.GradScaler(\n        "cuda",\n'
            "        init_scale=2.0**16 if args.dynamic_loss_scale else args.static_loss_scale,\n"
            "        growth_interval=2000 if args.dynamic_loss_scale else 10**9,\n"
            "        enabled=bool(args.fp16),\n    )\n"
            "    for data, targets in batches:\n"
            '        with torch.autocast("cuda", dtype=torch.float16, enabled=bool(args.fp16)):\n'
            "            output = model(data)\n            loss = criterion(output, targets)\n"
            "        optimizer.zero_grad()\n        if args.fp16:\n            scaler.scale(loss).backward()\n"
            "        else:\n            loss.backward()\n"
            "        scaler.step(optimizer)\n        scaler.update()\n",
            ("APX701", "APX703", "APX705"),
        ),
        Example(
            "imagenet-style-flag-and-train-function",
            "import torch\nfrom apex.fp16_utils import *\n\n\ndef main(args):\n    model = build_model().cuda()\n"
            "    if args.fp16:\n        model = network_to_half(model)\n"
            "    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum)\n"
            "    if args.fp16:\n        optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)\n"
            "    for epoch in range(args.epochs):\n        train(loader, model, criterion, optimizer, args)\n\n\n"
            "def train(loader, model, criterion, optimizer, args):\n    for input, target in loader:\n"
            "        if args.fp16:\n            input = input.half()\n        output = model(input.cuda())\n"
            "        loss = criterion(output, target)\n        optimizer.zero_grad()\n"
            "        if args.fp16:\n            optimizer.backward(loss)\n        else:\n            loss.backward()\n"
            "        optimizer.step()\n        print(to_python_float(loss.data))\n",
            "import torch\n\n\ndef main(args):\n    model = build_model().cuda()\n"
            "    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum)\n"
            '    scaler = torch.amp.GradScaler("cuda", enabled=bool(args.fp16))\n'
            "    for epoch in range(args.epochs):\n"
            "        train(loader, model, criterion, optimizer, args, scaler=scaler)\n\n\n"
            "def train(loader, model, criterion, optimizer, args, scaler):\n    for input, target in loader:\n"
            '        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):\n'
            "            output = model(input.cuda())\n            loss = criterion(output, target)\n"
            "        optimizer.zero_grad()\n"
            "        if args.fp16:\n            scaler.scale(loss).backward()\n        else:\n"
            "            loss.backward()\n"
            "        scaler.step(optimizer)\n        scaler.update()\n        print(loss.data.item())\n",
            ("APX701", "APX705", "APX707"),
        ),
        Example(
            "closure-step-reported",
            "from apex.fp16_utils import FP16_Optimizer\n\n\ndef fit(model, optimizer):\n"
            "    optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)\n    optimizer.step(closure)\n",
            "from apex.fp16_utils import FP16_Optimizer\n\n\ndef fit(model, optimizer):\n"
            "    # TODO(apexcompat): " + NOT_SIMPLE_TODO + "\n"
            "    optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)\n    optimizer.step(closure)\n",
            ("APX702",),
        ),
        Example(
            "to-python-float",
            "import torch\nfrom apex.fp16_utils import to_python_float\n\nreduced = to_python_float(loss.data)\n",
            "import torch\n\nreduced = loss.data.item()\n",
            ("APX707",),
        ),
        Example(
            "vendored-fp16-utils-copy",
            "from .fp16_utils import FP16_Optimizer\n\n"
            "optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)\n",
            None,
            ("APX708",),
        ),
    ]
    NOOP_EXAMPLES = [
        Example(
            "fp16-optimizer-in-comment",
            "# apex.fp16_utils.FP16_Optimizer(optimizer) was replaced by GradScaler\n"
            'scaler = torch.amp.GradScaler("cuda")\n',
        ),
        Example(
            "local-fp16-optimizer-class",
            "class FP16_Optimizer:\n    def __init__(self, opt):\n        self.opt = opt\n\n\n"
            "opt = FP16_Optimizer(opt)\nopt.step()\n",
        ),
    ]
