"""APX60x: apex's DistributedDataParallel (removed with apex.parallel) -> torch's, with the
local rank found in scope, ``broadcast_buffers=False`` to keep apex's behaviour, and apex's
tuning knobs dropped or turned into TODOs; ``Reducer`` is reported."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import libcst as cst
from libcst.metadata import ScopeProvider

from ._binding import bound_at
from ._neighbour_base import NeighbourRule, bind_args, code_of, kwarg, literal_value
from ._tree import module_code, walk
from .base import Example

APEX_DDP = {
    "apex.parallel.DistributedDataParallel",
    "apex.parallel.distributed.DistributedDataParallel",
}
REDUCER = {"apex.parallel.Reducer", "apex.parallel.distributed.Reducer"}
#: apex.parallel and its submodules (``LARC`` is left to the LARC rule: the package's name is the class)
PARALLEL_MODULES = {
    "apex.parallel",
    "apex.parallel.distributed",
    "apex.parallel.sync_batchnorm",
    "apex.parallel.sync_batchnorm_kernel",
    "apex.parallel.optimized_sync_batchnorm",
    "apex.parallel.optimized_sync_batchnorm_kernel",
    "apex.parallel.multiproc",
}
TORCH_DDP = "torch.nn.parallel.DistributedDataParallel"

DDP_PARAMS = (
    "module",
    "message_size",
    "delay_allreduce",
    "shared_param",
    "allreduce_trigger_params",
    "retain_allreduce_buffers",
    "allreduce_always_fp32",
    "num_allreduce_streams",
    "allreduce_communicators",
    "gradient_average",
    "gradient_predivide_factor",
    "gradient_average_split_factor",
    "prof",
)
#: apex options that only tune communication (torch DDP buckets and overlaps by itself) or,
#: with fp32 gradients under native AMP, do not change the result
#: torch's DistributedDataParallel parameters that apex's class does not have
TORCH_ONLY_PARAMS = (
    "device_ids",
    "output_device",
    "dim",
    "broadcast_buffers",
    "process_group",
    "bucket_cap_mb",
    "find_unused_parameters",
    "check_reduction",
    "gradient_as_bucket_view",
    "static_graph",
)

TUNING_ONLY = (
    "message_size",
    "delay_allreduce",
    "shared_param",
    "allreduce_trigger_params",
    "retain_allreduce_buffers",
    "allreduce_always_fp32",
    "num_allreduce_streams",
    "allreduce_communicators",
    "gradient_predivide_factor",
    "gradient_average_split_factor",
    "prof",
)
LOCAL_RANK_NAMES = ("local_rank", "LOCAL_RANK", "localrank", "local_gpu")
GRADIENT_SUM_TODO = (
    "apex DDP summed gradients here (gradient_average=False) but torch DDP averages them: "
    "multiply the loss (or the learning rate) by torch.distributed.get_world_size() to keep the same update"
)
NO_LOCAL_RANK_TODO = (
    "pass device_ids=[local_rank], output_device=local_rank (the GPU this process uses) "
    "to DistributedDataParallel if the model sits on one GPU; no local-rank variable was found in scope"
)
REBOUND_RANK_TODO = (
    "pass device_ids=[local_rank], output_device=local_rank (the GPU this process uses) to "
    "DistributedDataParallel if the model sits on one GPU; {text} is assigned anew after "
    "torch.cuda.set_device({text}), so it may no longer be this process's GPU (a global rank)"
)
REDUCER_TODO = (
    "apex.parallel.Reducer was removed: after backward, call torch.distributed.all_reduce(p.grad) "
    "on every gradient and divide by torch.distributed.get_world_size() (or wrap the model in "
    "torch.nn.parallel.DistributedDataParallel)"
)
MODULE_VALUE_TODO = (
    "apex.parallel is passed on as a value here; its uses cannot be followed: migrate them by hand "
    "(DistributedDataParallel -> torch.nn.parallel.DistributedDataParallel, convert_syncbn_model -> "
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm, SyncBatchNorm -> torch.nn.SyncBatchNorm) and drop the import"
)

SUBCLASS_INIT = (
    "def __init__(self, module, **kwargs):\n"
    "    # apex DistributedDataParallel's options: torch's DDP buckets and overlaps the all-reduce\n"
    "    # by itself, and apex did not broadcast buffers\n"
    "    for option in (\n"
    "{options}"
    "    ):\n"
    "        kwargs.pop(option, None)\n"
    "    if not kwargs.pop(\"gradient_average\", True):\n"
    "        raise ValueError(\"gradient_average=False (apex summed the gradients) has no torch DDP equivalent\")\n"
    "    kwargs.setdefault(\"broadcast_buffers\", False)\n"
    "    super().__init__(module, **kwargs)\n"
)
SUBCLASS_INIT_TODO = (
    "this class subclassed apex's DistributedDataParallel and now subclasses torch's: its __init__ must not "
    "hand apex's options (delay_allreduce, message_size, ...) on to torch's DDP, which rejects them"
)


class DistributedDataParallelRule(NeighbourRule):
    """apex.parallel.DistributedDataParallel -> torch.nn.parallel.DistributedDataParallel."""

    DESCRIPTION = "Rewrite apex DistributedDataParallel to torch's."
    CODES = {
        "APX601": "apex DistributedDataParallel -> torch.nn.parallel.DistributedDataParallel",
        "APX602": "apex DistributedDataParallel: no local rank in scope, device_ids left to the user",
        "APX603": "apex DistributedDataParallel option without a torch equivalent",
        "APX604": "apex.parallel.Reducer was removed",
        "APX605": "apex.parallel module passed on as a value: its uses cannot be followed",
    }
    TRIGGERS = (b"DistributedDataParallel", b"Reducer", b"parallel")
    CODE_WORDS = ("apex",)
    STAR_EXPORTS = {"apex.parallel": ("DistributedDataParallel", "Reducer")}
    NAMESPACES = ("apex.parallel",)
    # every site is a name bound into apex.parallel; the local-rank search also reads the
    # skipped functions (set_device calls, parse_args), through the whole tree's parents
    PRUNE_STATEMENTS = True
    WHOLE_TREE_PARENTS = True
    KNOWN_TODOS = {
        GRADIENT_SUM_TODO: ("APX603", "error"),
        NO_LOCAL_RANK_TODO: ("APX602", "warning"),
        REBOUND_RANK_TODO.split("{", 1)[0]: ("APX602", "warning"),
        REDUCER_TODO: ("APX604", "error"),
        MODULE_VALUE_TODO: ("APX605", "error"),
    }

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = self.names_of(original_node.func)
        if names & APEX_DDP and self.settings.code_enabled("APX601"):
            new = self._ddp(original_node, updated_node)
            if new is not None:
                self.forget(original_node.func)
                return new
        elif names & REDUCER:
            self.todo(original_node, "APX604", REDUCER_TODO)
        return updated_node

    def _ddp(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        bound = bind_args(call, DDP_PARAMS)
        torch_own = [name for name in (bound or {}) if name not in DDP_PARAMS]
        if bound is not None and "module" in bound and torch_own and set(torch_own) <= set(TORCH_ONLY_PARAMS):
            return self._ddp_written_for_torch(original, call, bound, torch_own)
        if bound is None or "module" not in bound or not set(bound) <= set(DDP_PARAMS):
            unknown = sorted(set(bound or ()) - set(DDP_PARAMS))
            why = (
                f"{', '.join(unknown)} {'is no argument' if len(unknown) == 1 else 'are no arguments'} of apex's "
                "DistributedDataParallel: this call raises TypeError under apex too"
                if unknown
                else "its arguments could not be read"
            )
            self.todo(
                original,
                "APX603",
                "replace apex.parallel.DistributedDataParallel with torch.nn.parallel.DistributedDataParallel"
                f"(module, device_ids=[local_rank], output_device=local_rank, broadcast_buffers=False); {why}",
            )
            return None
        args: List[cst.Arg] = [bound["module"].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)]
        gloo = self._uses_gloo()
        local_rank = None if gloo else self._local_rank(original)
        if local_rank is not None:
            args.append(kwarg("device_ids", f"[{local_rank}]"))
            args.append(kwarg("output_device", local_rank))
        args.append(kwarg("broadcast_buffers", "False"))
        dropped = [name for name in TUNING_ONLY if name in bound]
        note = (
            "apex DistributedDataParallel -> torch.nn.parallel.DistributedDataParallel (broadcast_buffers=False as "
            "apex did"
        )
        if dropped:
            note += "; dropped " + ", ".join(dropped) + ": torch DDP buckets and overlaps the all-reduce itself"
        average = bound.get("gradient_average")
        if average is not None and literal_value(average.value) is not True:
            self.todo(original, "APX603", GRADIENT_SUM_TODO)
        if gloo:
            note += "; no device_ids: the gloo process group means CPU modules"
        self.report(original, "APX601", note + ")", fixed=True, severity="info")
        if local_rank is None and not gloo:
            rebound = self._rebound_ranks(original)
            message = REBOUND_RANK_TODO.format(text=rebound[0]) if rebound else NO_LOCAL_RANK_TODO
            self.todo(original, "APX602", message, fixed=True, severity="warning")
        return self.replace_call(call, self.torch_name(TORCH_DDP, original), args)

    def _ddp_written_for_torch(
        self, original: cst.Call, call: cst.Call, bound: Dict[str, cst.Arg], torch_own: List[str]
    ) -> cst.Call:
        """apex's DDP handed only keywords of torch's (``device_ids=[rank]``): apex raised
        TypeError there, so no apex run ever got past it; torch's DDP is what the arguments
        were written for, and gets them as written (apex's tuning options dropped, buffers
        not broadcast as under apex unless the call says otherwise)."""
        args: List[cst.Arg] = [bound["module"].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)]
        args += [bound[name] for name in torch_own]
        if "broadcast_buffers" not in bound:
            args.append(kwarg("broadcast_buffers", "False"))
        average = bound.get("gradient_average")
        if average is not None and literal_value(average.value) is not True:
            self.todo(original, "APX603", GRADIENT_SUM_TODO)
        named = ", ".join(torch_own)
        dropped = [name for name in TUNING_ONLY if name in bound]
        tail = f"; dropped {', '.join(dropped)}: torch DDP buckets and overlaps the all-reduce itself" if dropped else ""
        self.report(
            original,
            "APX601",
            f"apex DistributedDataParallel called with {named}, which apex's class does not take (the original raised "
            "TypeError here, so no apex run got past this call) and torch's does: it becomes "
            "torch.nn.parallel.DistributedDataParallel with them as written (broadcast_buffers=False as apex did); "
            f"check that this is the wrapping you meant{tail}",
            fixed=True,
            severity="warning",
        )
        return self.replace_call(call, self.torch_name(TORCH_DDP, original), args)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        """A subclass of apex's DDP (its base becomes torch's) is built with apex's options,
        here or in other files (``CustomApexDDP(model, delay_allreduce=True)``): without an
        ``__init__`` of its own it gets one that drops them, as the call rewrite does."""
        if not self.settings.code_enabled("APX601"):
            return updated_node
        if not any(self.names_of(base.value) & APEX_DDP for base in original_node.bases):
            return updated_node
        body = updated_node.body
        if not isinstance(body, cst.IndentedBlock):
            return updated_node
        if any(isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__" for stmt in body.body):
            self.todo(original_node, "APX603", SUBCLASS_INIT_TODO)
            return updated_node
        options = "".join(f'        "{o}",\n' for o in TUNING_ONLY)
        init = cst.parse_statement(SUBCLASS_INIT.format(options=options))
        stmts = list(body.body)
        first = stmts[0] if stmts else None
        docstring = (
            isinstance(first, cst.SimpleStatementLine)
            and isinstance(first.body[0], cst.Expr)
            and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        )
        if docstring:
            init = init.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        at = 1 if docstring else 0
        if at < len(stmts) and isinstance(stmts[at], (cst.FunctionDef, cst.ClassDef)) and not stmts[at].leading_lines:
            stmts[at] = stmts[at].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        stmts.insert(at, init)
        self.report(
            original_node,
            "APX601",
            "subclass of apex DistributedDataParallel: its new __init__ drops apex's options (its callers pass "
            "them) and keeps broadcast_buffers=False as apex did",
            fixed=True,
            severity="info",
        )
        return updated_node.with_changes(body=body.with_changes(body=stmts))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def _reference(self, original, updated):  # type: ignore[no-untyped-def]
        """``isinstance(model, DDP)``, ``wrapper_cls = DDP``: the class itself maps 1:1.
        ``self._ddp = parallel``: the module handed on is reported."""
        if not self.names_of(original):  # most names: no parent link needed
            return updated
        if self._module_passed_on(original):
            self.todo(original, "APX605", MODULE_VALUE_TODO)
            return updated
        if self.is_callee(original) or not self.settings.code_enabled("APX601"):
            return updated
        if not self.names_of(original) & APEX_DDP:
            return updated
        self.report(
            original,
            "APX601",
            "apex DistributedDataParallel class -> torch.nn.parallel.DistributedDataParallel",
            fixed=True,
            severity="info",
        )
        self.forget(original)
        return self.replacement(self.torch_name(TORCH_DDP, original))

    def _module_passed_on(self, node: cst.CSTNode) -> bool:
        """``node`` is apex.parallel (or a submodule) used other than as ``parallel.<name>``
        or as an availability test (``if parallel:``, ``parallel is None``, ``not parallel``)."""
        if not self.names_of(node) & PARALLEL_MODULES:
            return False
        parent = self.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return False
        if isinstance(parent, (cst.If, cst.While, cst.Assert, cst.IfExp)) and parent.test is node:
            return False
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            return False
        if isinstance(parent, (cst.BooleanOperation, cst.Del)):
            return False
        if isinstance(parent, cst.Comparison) and parent.left is node and len(parent.comparisons) == 1:
            target = parent.comparisons[0]
            if isinstance(target.operator, (cst.Is, cst.IsNot)) and code_of(target.comparator) == "None":
                return False
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return False
        return True

    # --- finding the local rank --------------------------------------------------------

    def _local_rank(self, call: cst.Call) -> Optional[str]:
        """The expression that holds this process's GPU index at ``call``, if provable: its
        root name must be bound whenever ``call`` runs (see ``_bound_at``)."""
        scope = self.get_metadata(ScopeProvider, call, None)
        if scope is None:
            return None
        regions = self._enclosing_regions(call)

        rebound = set(self._rebound_ranks(call))

        def reachable(text: str) -> bool:
            root = text.split(".", 1)[0].split("[", 1)[0]
            return text not in rebound and self._bound_at(root, call, scope)

        for region in regions:
            found = self._candidates(region)
            candidates = found.set_device + found.cuda_device + found.local_rank_names
            for text in candidates + found.local_rank_attributes + found.env_assignments:
                if reachable(text):
                    return text
        for name in LOCAL_RANK_NAMES:
            if reachable(name):
                return name
        parsed = self._parsed_args_with_local_rank(call, scope)
        return None if parsed in rebound else parsed

    def _rebound_ranks(self, call: cst.Call) -> List[str]:
        """The set_device arguments around ``call`` that are assigned anew after that call."""
        return [t for region in self._enclosing_regions(call) for t in self._candidates(region).rebound_after_set_device]

    def _candidates(self, region: cst.CSTNode) -> "_Candidates":
        """The scan of ``region``, made once per region and text."""
        scans = self.__dict__.setdefault("_scans", {})
        key = (id(self._module), id(region))
        if key not in scans:
            scans[key] = (region, _Candidates(self).scan(region))
        return scans[key][1]  # type: ignore[no-any-return]

    def _bound_at(self, name: str, node: cst.CSTNode, scope) -> bool:  # type: ignore[no-untyped-def]
        return bound_at(name, node, self.parent, scope)

    def _enclosing_regions(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """The function around ``node``, then its class (methods share ``self``), then the module."""
        regions: List[cst.CSTNode] = []
        current = self.parent(node)
        while current is not None:
            if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
                regions.append(current)
            current = self.parent(current)
        regions.append(self._module)
        return regions

    def _parsed_args_with_local_rank(self, call: cst.Call, scope) -> Optional[str]:  # type: ignore[no-untyped-def]
        """``parser.add_argument("--local_rank")`` + ``args = parser.parse_args()`` bound at ``call``."""
        found = self._candidates(self._module)
        if not found.local_rank_flag:
            return None
        for name in found.parse_args_targets:
            if self._bound_at(name, call, scope):
                return f"{name}.local_rank"
        return None

    def _uses_gloo(self) -> bool:
        """A gloo process group means CPU modules, for which torch DDP rejects device_ids."""
        if "gloo" not in module_code(self._module):
            return False  # no such string: no walk of the whole file
        return any(
            isinstance(node, cst.Call)
            and any(isinstance(a.value, cst.SimpleString) and a.value.value.strip("\"'") == "gloo" for a in node.args)
            for node in walk(self._module)
        )

    EXAMPLES = [
        Example(
            # torch's device_ids handed to apex's DDP, which has no such parameter: the call
            # raised TypeError under apex, so no apex run got past it; torch's DDP is what the
            # arguments were written for and takes them as written
            "ddp-given-torchs-keyword-apex-never-took-becomes-torchs",
            "from apex.parallel import DistributedDataParallel\n\n\ndef wrap(model, rank):\n"
            "    return DistributedDataParallel(model, device_ids=[rank])\n",
            "import torch\n\n\ndef wrap(model, rank):\n"
            "    return torch.nn.parallel.DistributedDataParallel(\n"
            "        model,\n        device_ids=[rank],\n        broadcast_buffers=False,\n    )\n",
            ("APX601",),
        ),
        Example(
            # a keyword neither apex's DDP nor torch's takes: left for a person, saying why
            "ddp-given-a-keyword-no-ddp-takes",
            "from apex.parallel import DistributedDataParallel\n\n\ndef wrap(model, rank):\n"
            "    return DistributedDataParallel(model, devices=[rank])\n",
            "from apex.parallel import DistributedDataParallel\n\n\ndef wrap(model, rank):\n"
            "    # TODO(apexcompat): replace apex.parallel.DistributedDataParallel with "
            "torch.nn.parallel.DistributedDataParallel(module, device_ids=[local_rank], output_device=local_rank, "
            "broadcast_buffers=False); devices is no argument of apex's DistributedDataParallel: this call "
            "raises TypeError under apex too\n"
            "    return DistributedDataParallel(model, devices=[rank])\n",
            ("APX603",),
        ),
        Example(
            "ddp-with-args-local-rank",
            "import torch\nfrom apex.parallel import DistributedDataParallel as DDP\n\n\n"
            "def main(args):\n    torch.cuda.set_device(args.local_rank)\n    model = Net().cuda()\n"
            "    model = DDP(model, delay_allreduce=True)\n",
            "import torch\n\n\n"
            "def main(args):\n    torch.cuda.set_device(args.local_rank)\n    model = Net().cuda()\n"
            "    model = torch.nn.parallel.DistributedDataParallel(\n        model,\n"
            "        device_ids=[args.local_rank],\n"
            "        output_device=args.local_rank,\n        broadcast_buffers=False,\n    )\n",
            ("APX601",),
        ),
        Example(
            # the local rank handed to set_device, then replaced by the global rank: from there
            # on it is no GPU index of this node, so device_ids is left out (torch DDP then uses
            # the module's device, as apex's did) and the TODO says why
            "ddp-local-rank-rebound-after-set-device-is-not-used",
            "import torch\nimport torch.distributed as dist\nfrom apex.parallel import DistributedDataParallel as DDP\n\n\n"
            "def main(args):\n    torch.cuda.set_device(args.local_rank)\n    args.local_rank = dist.get_rank()\n"
            "    model = Net().cuda()\n    model = DDP(model, delay_allreduce=True)\n",
            "import torch\nimport torch.distributed as dist\n\n\n"
            "def main(args):\n    torch.cuda.set_device(args.local_rank)\n    args.local_rank = dist.get_rank()\n"
            "    model = Net().cuda()\n"
            "    # TODO(apexcompat): " + REBOUND_RANK_TODO.format(text="args.local_rank") + "\n"
            "    model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)\n",
            ("APX601", "APX602"),
        ),
        Example(
            "ddp-local-rank-from-environment",
            'import os\nimport apex\n\nlocal_rank = int(os.environ["LOCAL_RANK"])\n'
            'model = apex.parallel.DistributedDataParallel(model)\n',
            'import os\nimport torch\n\nlocal_rank = int(os.environ["LOCAL_RANK"])\n'
            "model = torch.nn.parallel.DistributedDataParallel(\n    model,\n    device_ids=[local_rank],\n"
            "    output_device=local_rank,\n    broadcast_buffers=False,\n)\n",
            ("APX601",),
        ),
        Example(
            "ddp-isinstance-keeps-working",
            "from torch.nn.parallel import DistributedDataParallel\n"
            "from apex.parallel import DistributedDataParallel as ApexDDP\n\n"
            "def unwrap(model):\n    if isinstance(model, (DistributedDataParallel, ApexDDP)):\n"
            "        return model.module\n    return model\n",
            "from torch.nn.parallel import DistributedDataParallel\n\n"
            "def unwrap(model):\n    if isinstance(model, DistributedDataParallel):\n        return model.module\n"
            "    return model\n",
            ("APX601",),
        ),
        Example(
            "ddp-tuple-of-wrapper-classes-stays-a-tuple",
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel\n"
            "from apex.parallel import DistributedDataParallel as ApexDDP\n\n"
            "WRAPPERS = (ApexDDP, DistributedDataParallel)\n"
            "ALL_WRAPPERS = WRAPPERS + (torch.nn.DataParallel,)\n",
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel\n\n"
            "WRAPPERS = (DistributedDataParallel,)\n"
            "ALL_WRAPPERS = WRAPPERS + (torch.nn.DataParallel,)\n",
            ("APX601",),
        ),
        Example(
            "ddp-no-local-rank-in-scope",
            "from apex.parallel import DistributedDataParallel\n\n\ndef wrap(model):\n"
            "    return DistributedDataParallel(model)\n",
            "import torch\n\n\ndef wrap(model):\n"
            "    # TODO(apexcompat): " + NO_LOCAL_RANK_TODO + "\n"
            "    return torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)\n",
            ("APX601", "APX602"),
        ),
        Example(
            "ddp-local-rank-bound-only-in-the-other-branch",
            "import torch.distributed as dist\nfrom apex import parallel\n\n\ndef wrap(net, use_apex):\n"
            "    if use_apex:\n        net = parallel.DistributedDataParallel(net)\n    else:\n"
            "        local_rank = dist.get_rank()\n        net = dist_wrap(net, local_rank)\n    return net\n",
            "import torch.distributed as dist\nimport torch\n\n\ndef wrap(net, use_apex):\n    if use_apex:\n"
            "        # TODO(apexcompat): " + NO_LOCAL_RANK_TODO + "\n"
            "        net = torch.nn.parallel.DistributedDataParallel(net, broadcast_buffers=False)\n    else:\n"
            "        local_rank = dist.get_rank()\n        net = dist_wrap(net, local_rank)\n    return net\n",
            ("APX601", "APX602"),
        ),
        Example(
            # a choice between the two classes picks torch's either way: the choice goes (its
            # test only reads a value); a test that calls something stays, for what the call does
            "ddp-choice-between-the-two-classes-collapses",
            "from torch.nn.parallel import DistributedDataParallel as TorchDDP\n"
            "from apex.parallel import DistributedDataParallel as ApexDDP\n\n\n"
            "def wrapper_class(cfg):\n    chosen = ApexDDP if cfg.fp16 and not cfg.torch_ddp else TorchDDP\n"
            "    probed = TorchDDP if probe_backend() else ApexDDP\n    return chosen, probed\n",
            "from torch.nn.parallel import DistributedDataParallel as TorchDDP\n\n\n"
            "def wrapper_class(cfg):\n    chosen = TorchDDP\n"
            "    probed = TorchDDP if probe_backend() else TorchDDP\n    return chosen, probed\n",
            ("APX601", "APX601"),
        ),
        Example(
            "ddp-gradient-sum",
            "from apex.parallel import DistributedDataParallel as DDP\n\n\ndef wrap(model, local_rank):\n"
            "    return DDP(model, gradient_average=False)\n",
            "import torch\n\n\ndef wrap(model, local_rank):\n"
            "    # TODO(apexcompat): " + GRADIENT_SUM_TODO + "\n"
            "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n"
            "        device_ids=[local_rank],\n        output_device=local_rank,\n        broadcast_buffers=False,\n"
            "    )\n",
            ("APX601", "APX603"),
        ),
        Example(
            "apex-parallel-module-stored-on-an-object",
            "class ApexUtils:\n    def __init__(self, distributed):\n        self._ddp = None\n"
            "        if distributed:\n"
            "            from apex import parallel\n            self._ddp = parallel\n\n    def wrap(self, model):\n"
            "        return self._ddp.DistributedDataParallel(model, delay_allreduce=True)\n",
            "class ApexUtils:\n    def __init__(self, distributed):\n        self._ddp = None\n"
            "        if distributed:\n"
            "            from apex import parallel\n            # TODO(apexcompat): " + MODULE_VALUE_TODO + "\n"
            "            self._ddp = parallel\n\n    def wrap(self, model):\n"
            "        return self._ddp.DistributedDataParallel(model, delay_allreduce=True)\n",
            ("APX605",),
        ),
        Example(
            # CodeGen's CustomApexDDP, built elsewhere as CustomApexDDP(model, delay_allreduce=True):
            # with torch's DDP as its base that call raised TypeError (sweep6)
            "subclass-gets-an-init-dropping-apex-options",
            '''\
from apex.parallel import DistributedDataParallel


class WrappedDDP(DistributedDataParallel):
    """Reads the wrapped model's attributes through the wrapper."""

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


def wrap(model):
    return WrappedDDP(model, delay_allreduce=True)
''',
            '''\
import torch


class WrappedDDP(torch.nn.parallel.DistributedDataParallel):
    """Reads the wrapped model's attributes through the wrapper."""

    def __init__(self, module, **kwargs):
        # apex DistributedDataParallel's options: torch's DDP buckets and overlaps the all-reduce
        # by itself, and apex did not broadcast buffers
        for option in (
            "message_size",
            "delay_allreduce",
            "shared_param",
            "allreduce_trigger_params",
            "retain_allreduce_buffers",
            "allreduce_always_fp32",
            "num_allreduce_streams",
            "allreduce_communicators",
            "gradient_predivide_factor",
            "gradient_average_split_factor",
            "prof",
        ):
            kwargs.pop(option, None)
        if not kwargs.pop("gradient_average", True):
            raise ValueError("gradient_average=False (apex summed the gradients) has no torch DDP equivalent")
        kwargs.setdefault("broadcast_buffers", False)
        super().__init__(module, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


def wrap(model):
    return WrappedDDP(model, delay_allreduce=True)
''',
            ("APX601", "APX601"),
        ),
        Example(
            "reducer-reported",
            "from apex.parallel import Reducer\n\nreducer = Reducer(model)\n",
            "from apex.parallel import Reducer\n\n# TODO(apexcompat): " + REDUCER_TODO + "\nreducer = Reducer(model)\n",
            ("APX604",),
        ),
    ]
    NOOP_EXAMPLES = [
        Example(
            "torch-ddp-untouched",
            "from torch.nn.parallel import DistributedDataParallel as DDP\n\nmodel = DDP(model, device_ids=[rank])\n",
        ),
        Example(
            "local-class-named-distributed-data-parallel",
            "class DistributedDataParallel:\n    def __init__(self, module):\n        self.module = module\n\n\n"
            "model = DistributedDataParallel(model)\n",
        ),
        Example(
            "apex-ddp-mentioned-in-comment-and-string",
            "# formerly apex.parallel.DistributedDataParallel(model, delay_allreduce=True)\n"
            'print("apex.parallel.DistributedDataParallel is gone")\n',
        ),
    ]


class _Candidates:
    """Collects the expressions in a region that can hold the local rank, best first."""

    def __init__(self, rule: NeighbourRule) -> None:
        self.rule = rule
        self.set_device: List[str] = []
        self.cuda_device: List[str] = []
        self.local_rank_names: List[str] = []
        self.local_rank_attributes: List[str] = []
        self.env_assignments: List[str] = []
        self.parse_args_targets: List[str] = []
        self.local_rank_flag = False
        #: set_device arguments assigned anew after that call (``torch.cuda.set_device(args.local_rank)``
        #: then ``args.local_rank = dist.get_rank()``): from there on they hold another value
        self.rebound_after_set_device: List[str] = []
        self._set_device_lines: List[Tuple[str, Optional[Tuple[cst.CSTNode, int]]]] = []

    def _line_of(self, node: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, int]]:
        """The block holding ``node``'s statement line and the line's place in it: a later
        line of the same block runs after it on every path."""
        line = self.rule.parent(node)
        while line is not None and not isinstance(line, cst.SimpleStatementLine):
            line = self.rule.parent(line)
        block = self.rule.parent(line) if line is not None else None
        body = getattr(block, "body", None)
        if line is None or not isinstance(body, (list, tuple)):
            return None
        index = next((i for i, stmt in enumerate(body) if stmt is line), None)
        return (block, index) if index is not None else None

    def scan(self, region: cst.CSTNode) -> "_Candidates":
        """Look at every node of ``region`` in source order."""
        for node in walk(region):
            look = _LOOKS.get(type(node))
            if look is not None:
                look(self, node)
        return self

    def visit_Call(self, node: cst.Call) -> None:
        callee = node.func
        last = callee.attr.value if isinstance(callee, cst.Attribute) else getattr(callee, "value", None)
        if not isinstance(last, str) or not last.endswith(_CALL_ENDINGS):
            return  # the callee's code ends with its last name: none of those below
        func = code_of(callee)
        device = node.args[0] if len(node.args) == 1 and _simple(node.args[0].value) else None
        if device is not None and func.endswith("cuda.set_device"):
            self.set_device.append(code_of(device.value))
            self._set_device_lines.append((code_of(device.value), self._line_of(node)))
        elif device is not None and func.endswith(".cuda") and device.keyword is None:
            self.cuda_device.append(code_of(device.value))
        if func.endswith("add_argument") and any(
            isinstance(a.value, cst.SimpleString) and a.value.evaluated_value in ("--local_rank", "--local-rank")
            for a in node.args
        ):
            self.local_rank_flag = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in LOCAL_RANK_NAMES and _simple(node):
            self.local_rank_attributes.append(code_of(node))

    def visit_Assign(self, node: cst.Assign) -> None:
        line = self._line_of(node)
        for target_node in node.targets:
            text = code_of(target_node.target)
            if line is not None and any(
                t == text and where is not None and where[0] is line[0] and where[1] < line[1]
                for t, where in self._set_device_lines
            ):
                self.rebound_after_set_device.append(text)
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        target = node.targets[0].target.value
        text = code_of(node.value)
        if "LOCAL_RANK" in text and "environ" in text or "getenv" in text and "LOCAL_RANK" in text:
            self.env_assignments.append(target)
        if target in LOCAL_RANK_NAMES:
            self.local_rank_names.append(target)
        if text.endswith(".parse_args()") or ".parse_args(" in text:
            self.parse_args_targets.append(target)

    def visit_Param(self, node: cst.Param) -> None:
        if node.name.value in LOCAL_RANK_NAMES:
            self.local_rank_names.append(node.name.value)


#: how the callee of a call ``_Candidates.visit_Call`` looks at ends (a parenthesized one or
#: one that is not a name or attribute ends in a bracket: never one of these)
_CALL_ENDINGS = ("set_device", "cuda", "add_argument")

_LOOKS: Dict[type, Callable[[_Candidates, Any], None]] = {
    cst.Call: _Candidates.visit_Call,
    cst.Attribute: _Candidates.visit_Attribute,
    cst.Assign: _Candidates.visit_Assign,
    cst.Param: _Candidates.visit_Param,
}


def _simple(node: cst.BaseExpression) -> bool:
    """A name or a chain of attributes: safe to repeat in ``device_ids=[x]`` and ``output_device=x``."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)
