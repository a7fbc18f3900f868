"""APX90x: deprecated native spellings (FutureWarning since torch 2.4) -> the device-generic
API: ``torch.cuda.amp.autocast(...)`` -> ``torch.autocast("cuda", ...)``,
``torch.cuda.amp.GradScaler(...)`` -> ``torch.amp.GradScaler("cuda", ...)`` (torch >= 2.3),
``torch.cuda.amp.custom_fwd/custom_bwd`` -> ``torch.amp.custom_fwd(device_type="cuda")``
(torch >= 2.4); ``torch.cpu.amp.*`` likewise."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from ..settings import Settings
from ._neighbour_base import NeighbourRule, as_keyword, bind_args, kwarg
from .base import Example


def _device_table(kind: str, *modules: str) -> Dict[str, str]:
    """Qualified deprecated name -> device, for one API across its module spellings."""
    table = {}
    for device in ("cuda", "cpu"):
        for module in modules:
            table[f"torch.{device}.amp.{module}{kind}"] = device
    return table


AUTOCAST = _device_table("autocast", "", "autocast_mode.")
GRAD_SCALER = _device_table("GradScaler", "", "grad_scaler.")
CUSTOM_FWD = {name: dev for name, dev in _device_table("custom_fwd", "", "autocast_mode.").items() if dev == "cuda"}
CUSTOM_BWD = {name: dev for name, dev in _device_table("custom_bwd", "", "autocast_mode.").items() if dev == "cuda"}
AUTOCAST_PARAMS = ("enabled", "dtype", "cache_enabled")


def autocast_message(device: str) -> str:
    """APX901's message (also ``spelling_splices``')."""
    return f'torch.{device}.amp.autocast(...) -> torch.autocast("{device}", ...)'


def grad_scaler_message(device: str) -> str:
    """APX902's message for a call (also ``spelling_splices``')."""
    return f'torch.{device}.amp.GradScaler(...) -> torch.amp.GradScaler("{device}", ...)'


def custom_message(which: str) -> str:
    """APX903's message (also ``spelling_splices``')."""
    return f'torch.cuda.amp.{which} -> torch.amp.{which}(device_type="cuda")'


class TorchAmpSpellingsRule(NeighbourRule):
    """torch.cuda.amp.* / torch.cpu.amp.* -> torch.autocast / torch.amp.*."""

    DESCRIPTION = "Rewrite deprecated torch.cuda.amp / torch.cpu.amp spellings to torch.amp."
    CODES = {
        "APX901": 'torch.cuda.amp.autocast(...) -> torch.autocast("cuda", ...)',
        "APX902": 'torch.cuda.amp.GradScaler(...) -> torch.amp.GradScaler("cuda", ...) (torch >= 2.3)',
        "APX903": (
            'torch.cuda.amp.custom_fwd/custom_bwd -> torch.amp.custom_fwd/custom_bwd(device_type="cuda") (torch >= '
            '2.4)'
        ),
        "APX904": "deprecated torch.cuda.amp name used other than by a call: kept",
    }
    TRIGGERS = (b"cuda.amp", b"cpu.amp", b"custom_fwd", b"custom_bwd")
    NAMESPACES = ("torch.cuda.amp", "torch.cpu.amp")
    PRUNE_STATEMENTS = True

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = self.names_of(original_node.func)
        new: Optional[cst.Call] = None
        autocast_device = _lookup(names, AUTOCAST)
        scaler_device = _lookup(names, GRAD_SCALER)
        if autocast_device and self.settings.code_enabled("APX901"):
            new = self._autocast(original_node, updated_node, autocast_device)
        elif scaler_device and self.settings.code_enabled("APX902"):
            new = self._grad_scaler(original_node, updated_node, scaler_device)
        elif _lookup(names, {**CUSTOM_FWD, **CUSTOM_BWD}) and self.settings.code_enabled("APX903"):
            new = self._custom(original_node, updated_node, names)
        if new is None:
            return updated_node
        self.forget(original_node.func)
        return new

    def _autocast(self, original: cst.Call, call: cst.Call, device: str) -> Optional[cst.Call]:
        bound = bind_args(call, AUTOCAST_PARAMS)
        if bound is None:
            self.report(
                original,
                "APX904",
                f'torch.{device}.amp.autocast with *args/**kwargs kept: rewrite it as torch.autocast("{device}", ...) '
                'by hand',
                severity="warning",
            )
            return None
        args = [cst.Arg(cst.SimpleString(f'"{device}"'))] + [as_keyword(arg, name) for name, arg in bound.items()]
        self.report(
            original,
            "APX901",
            autocast_message(device),
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name("torch.autocast", original), args)

    def _grad_scaler(self, original: cst.Call, call: cst.Call, device: str) -> Optional[cst.Call]:
        if not self.settings.torch_at_least(2, 3):
            return None  # the spelling of torch < 2.3, which the target still needs
        if any(arg.star for arg in call.args):
            self.report(
                original,
                "APX904",
                f'torch.{device}.amp.GradScaler with *args/**kwargs kept: rewrite it as '
                f'torch.amp.GradScaler("{device}", ...) by hand',
                severity="warning",
            )
            return None
        args = [cst.Arg(cst.SimpleString(f'"{device}"'))] + list(call.args)
        self.report(
            original,
            "APX902",
            grad_scaler_message(device),
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name("torch.amp.GradScaler", original), args)

    def _custom(self, original: cst.Call, call: cst.Call, names) -> Optional[cst.Call]:  # type: ignore[no-untyped-def]
        if not self.settings.torch_at_least(2, 4):
            return None
        which = "custom_fwd" if _lookup(names, CUSTOM_FWD) else "custom_bwd"
        if any(arg.star for arg in call.args):
            return None
        # device_type leads the keywords: @torch.amp.custom_fwd(device_type="cuda", cast_inputs=...)
        positional = [a for a in call.args if a.keyword is None]
        keywords = [a for a in call.args if a.keyword is not None]
        args = positional + [kwarg("device_type", '"cuda"')] + keywords
        self.report(
            original,
            "APX903",
            custom_message(which),
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name(f"torch.amp.{which}", original), args)

    # --- references that are not calls -------------------------------------------------

    def leave_Decorator(self, original_node: cst.Decorator, updated_node: cst.Decorator) -> cst.Decorator:
        """A bare ``@torch.cuda.amp.custom_fwd`` becomes a call with the device."""
        if isinstance(original_node.decorator, cst.Call) or not self.settings.code_enabled("APX903"):
            return updated_node
        names = self.names_of(original_node.decorator)
        if not _lookup(names, {**CUSTOM_FWD, **CUSTOM_BWD}) or not self.settings.torch_at_least(2, 4):
            return updated_node
        which = "custom_fwd" if _lookup(names, CUSTOM_FWD) else "custom_bwd"
        self.report(
            original_node,
            "APX903",
            custom_message(which),
            fixed=True,
            severity="info",
        )
        self.forget(original_node.decorator)
        new = cst.Call(func=self.torch_name(f"torch.amp.{which}", original_node), args=[kwarg("device_type", '"cuda"')])
        return updated_node.with_changes(decorator=new)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def _reference(self, original, updated):  # type: ignore[no-untyped-def]
        names = self.names_of(original)
        if not names:  # most names: no parent link needed
            return updated
        if (
            self.is_callee(original)
            or not self.is_outermost(original)
            or isinstance(self.parent(original), cst.Decorator)
        ):
            return updated
        device = _lookup(names, GRAD_SCALER)
        if device and self.settings.torch_at_least(2, 3) and self.settings.code_enabled("APX902"):
            # torch.cuda.amp.GradScaler subclasses torch.amp.GradScaler: annotations and
            # isinstance checks against the generic class accept both
            self.report(
                original,
                "APX902",
                f"torch.{device}.amp.GradScaler -> torch.amp.GradScaler",
                fixed=True,
                severity="info",
            )
            self.forget(original)
            return self.replacement(self.torch_name("torch.amp.GradScaler", original))
        device = _lookup(names, AUTOCAST)
        if device:
            self.report(
                original,
                "APX904",
                f"torch.{device}.amp.autocast used as a value: kept (still works, with a FutureWarning); "
                f'use functools.partial(torch.autocast, "{device}") to pass it around',
                severity="info",
            )
        return updated

    EXAMPLES = [
        Example(
            # autocast(...) used as a decorator and its result called at once: only the
            # inner call is autocast's (mmgeneration's auto_fp16 wraps a method this way)
            "autocast-called-as-a-decorator-in-place",
            "from torch.cuda.amp import autocast\n\n\ndef run(method, *args):\n"
            "    return autocast(enabled=True)(method)(*args)\n",
            'import torch\n\n\ndef run(method, *args):\n    return torch.autocast("cuda", enabled=True)(method)(*args)\n',
            ("APX901",),
        ),
        Example(
            "cuda-autocast-context",
            "import torch\n\nwith torch.cuda.amp.autocast():\n    loss = model(x)\n",
            'import torch\n\nwith torch.autocast("cuda"):\n    loss = model(x)\n',
            ("APX901",),
        ),
        Example(
            "cuda-autocast-positional-enabled",
            "import torch\n\nwith torch.cuda.amp.autocast(args.amp, dtype=torch.bfloat16):\n    loss = model(x)\n",
            'import torch\n\nwith torch.autocast("cuda", enabled=args.amp, dtype=torch.bfloat16):\n'
            '    loss = model(x)\n',
            ("APX901",),
        ),
        Example(
            "from-import-autocast-and-grad-scaler",
            "from torch.cuda.amp import GradScaler, autocast\n\nscaler = GradScaler(enabled=use_amp)\n"
            "with autocast(enabled=use_amp):\n    loss = model(x)\nscaler.scale(loss).backward()\n",
            'import torch\n\nscaler = torch.amp.GradScaler("cuda", enabled=use_amp)\n'
            'with torch.autocast("cuda", enabled=use_amp):\n    loss = model(x)\nscaler.scale(loss).backward()\n',
            ("APX901", "APX902"),
        ),
        Example(
            "cuda-grad-scaler-kept-for-torch-2-2",
            "import torch\n\nscaler = torch.cuda.amp.GradScaler(init_scale=1024)\n",
            None,
            (),
            Settings(target_torch=(2, 2)),
        ),
        Example(
            "cpu-autocast",
            "import torch\n\nwith torch.cpu.amp.autocast(dtype=torch.bfloat16):\n    y = model(x)\n",
            'import torch\n\nwith torch.autocast("cpu", dtype=torch.bfloat16):\n    y = model(x)\n',
            ("APX901",),
        ),
        Example(
            "custom-fwd-bwd-decorators",
            "import torch\nfrom torch.cuda.amp import custom_bwd, custom_fwd\n\n\nclass Fn(torch.autograd.Function):\n"
            "    @staticmethod\n    @custom_fwd(cast_inputs=torch.float32)\n    def forward(ctx, x):\n"
            "        return x\n\n"
            "    @staticmethod\n    @custom_bwd\n    def backward(ctx, g):\n        return g\n",
            "import torch\n\n\nclass Fn(torch.autograd.Function):\n"
            '    @staticmethod\n    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)\n'
            '    def forward(ctx, x):\n        return x\n\n'
            '    @staticmethod\n    @torch.amp.custom_bwd(device_type="cuda")\n    def backward(ctx, g):\n'
            '        return g\n',
            ("APX903", "APX903"),
        ),
        Example(
            "grad-scaler-annotation",
            "from typing import Optional\n\nfrom torch.cuda.amp import GradScaler\n\n\n"
            "def step(scaler: Optional[GradScaler]):\n    pass\n",
            "from typing import Optional\n\nimport torch\n\n\ndef step(scaler: Optional[torch.amp.GradScaler]):\n"
            "    pass\n",
            ("APX902",),
        ),
    ]
    NOOP_EXAMPLES = [
        Example(
            "native-spelling",
            'import torch\n\nwith torch.autocast("cuda"):\n    y = model(x)\nscaler = torch.amp.GradScaler("cuda")\n',
        ),
        Example(
            "project-module-named-like-torch-cuda-amp",
            "from mylib.cuda.amp import autocast\n\nwith autocast():\n    y = model(x)\n",
        ),
        Example(
            "custom-fwd-kept-below-torch-2-4",
            "import torch\n\n\nclass Fn(torch.autograd.Function):\n    @staticmethod\n"
            "    @torch.cuda.amp.custom_fwd\n    def forward(ctx, x):\n        return x\n",
            settings=Settings(target_torch=(2, 3)),
        ),
    ]


def _lookup(names, table: Dict[str, str]) -> Optional[str]:  # type: ignore[no-untyped-def]
    for name in names:
        if name in table:
            return table[name]
    return None
