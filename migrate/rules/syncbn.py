"""APX61x: apex's synchronized batch norm (removed with apex.parallel) -> torch.nn.SyncBatchNorm:
``convert_syncbn_model`` -> ``SyncBatchNorm.convert_sync_batchnorm``, the class itself 1:1,
apex-only options (``channel_last``, ``fuse_relu``) as TODOs, and ``create_syncbn_process_group``
-> a small helper written once into the file that builds the same groups with
``torch.distributed.new_group``."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import ScopeProvider

from ._edits import statement
from ._neighbour_base import NeighbourRule, as_keyword, bind_args, literal_value
from .base import Example
from .checkpoints import helper_anchor

CONVERT = {"apex.parallel.convert_syncbn_model", "apex.parallel.sync_batchnorm.convert_syncbn_model"}
SYNC_BN = {
    "apex.parallel.SyncBatchNorm",
    "apex.parallel.sync_batchnorm.SyncBatchNorm",
    "apex.parallel.optimized_sync_batchnorm.SyncBatchNorm",
}
CREATE_GROUP = {"apex.parallel.create_syncbn_process_group"}
TORCH_SYNC_BN = "torch.nn.SyncBatchNorm"
BN_PARAMS = (
    "num_features",
    "eps",
    "momentum",
    "affine",
    "track_running_stats",
    "process_group",
    "channel_last",
    "fuse_relu",
)

CHANNEL_LAST_TODO = (
    "apex's channel_last=True SyncBatchNorm took NHWC input; torch.nn.SyncBatchNorm takes NCHW "
    "(channels_last memory format is fine): permute the input or drop the NHWC layout"
)
FUSE_RELU_TODO = (
    "apex fused a ReLU into this SyncBatchNorm (fuse_relu=True): apply torch.nn.functional.relu to its output"
)
GROUP_HELPER_NAME = "syncbn_process_group"
GROUP_HELPER = '''def syncbn_process_group(group_size):
    """What apex.parallel.create_syncbn_process_group returned: None for 0 (the whole world),
    else this rank's group among the blocks of group_size consecutive ranks (every rank
    creates every block's group, as torch.distributed.new_group requires)."""
    if group_size == 0:
        return None
    world_size = torch.distributed.get_world_size()
    if group_size > world_size or world_size % group_size:
        raise ValueError(f"group_size {group_size} does not divide the world size {world_size}")
    rank = torch.distributed.get_rank()
    own = None
    for first in range(0, world_size, group_size):
        group = torch.distributed.new_group(ranks=list(range(first, first + group_size)))
        if first <= rank < first + group_size:
            own = group
    return own
'''
GROUP_TODO = (
    "apex.parallel.create_syncbn_process_group was removed: build the group with "
    "torch.distributed.new_group(ranks) for the block of group_size consecutive ranks that holds this rank "
    "(every rank must call new_group for every block)"
)


class SyncBatchNormRule(NeighbourRule):
    """apex SyncBatchNorm / convert_syncbn_model -> torch.nn.SyncBatchNorm."""

    DESCRIPTION = "Rewrite apex synchronized batch norm to torch.nn.SyncBatchNorm."
    CODES = {
        "APX611": "apex convert_syncbn_model -> torch.nn.SyncBatchNorm.convert_sync_batchnorm",
        "APX612": "apex SyncBatchNorm -> torch.nn.SyncBatchNorm",
        "APX613": "apex SyncBatchNorm option without a torch equivalent",
        "APX614": "apex create_syncbn_process_group -> the local syncbn_process_group helper (a TODO where "
        "that name is taken)",
    }
    TRIGGERS = (b"syncbn", b"SyncBatchNorm", b"apex.parallel")
    CODE_WORDS = ("apex",)
    STAR_EXPORTS = {"apex.parallel": ("convert_syncbn_model", "SyncBatchNorm", "create_syncbn_process_group")}
    NAMESPACES = ("apex.parallel",)
    PRUNE_STATEMENTS = True
    KNOWN_TODOS = {
        CHANNEL_LAST_TODO: ("APX613", "error"),
        FUSE_RELU_TODO: ("APX613", "error"),
        GROUP_TODO: ("APX614", "error"),
    }

    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        self._group_helper = False
        return super().visit_Module(node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = self.names_of(original_node.func)
        new: Optional[cst.Call] = None
        if names & CONVERT and self.settings.code_enabled("APX611"):
            new = self._convert(original_node, updated_node)
        elif names & SYNC_BN and self.settings.code_enabled("APX612"):
            new = self._sync_bn(original_node, updated_node)
        elif names & CREATE_GROUP and self.settings.code_enabled("APX614"):
            new = self._create_group(original_node, updated_node)
        if new is None:
            return updated_node
        self.forget(original_node.func)
        return new

    def _convert(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        bound = bind_args(call, ("module", "process_group", "channel_last"))
        if bound is None or "module" not in bound or not set(bound) <= {"module", "process_group", "channel_last"}:
            self.todo(
                original,
                "APX613",
                "replace convert_syncbn_model(module, process_group) with "
                "torch.nn.SyncBatchNorm.convert_sync_batchnorm(module, process_group); its arguments could not be "
                "read",
            )
            return None
        args: List[cst.Arg] = [bound["module"]]
        if "process_group" in bound:
            args.append(
                bound["process_group"]
                if bound["module"].keyword is None
                else as_keyword(bound["process_group"], "process_group")
            )
        self._channel_last(original, bound)
        self.report(
            original,
            "APX611",
            "convert_syncbn_model -> torch.nn.SyncBatchNorm.convert_sync_batchnorm",
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name(TORCH_SYNC_BN + ".convert_sync_batchnorm", original), args)

    def _sync_bn(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        bound = bind_args(call, BN_PARAMS)
        if bound is None or not set(bound) <= set(BN_PARAMS):
            self.todo(
                original,
                "APX613",
                "replace apex SyncBatchNorm with torch.nn.SyncBatchNorm (same num_features, eps, momentum, affine, "
                "track_running_stats, process_group); its arguments could not be read",
            )
            return None
        args = [arg for name, arg in bound.items() if name not in ("channel_last", "fuse_relu")]
        self._channel_last(original, bound)
        fuse = bound.get("fuse_relu")
        if fuse is not None and literal_value(fuse.value) is not False:
            self.todo(original, "APX613", FUSE_RELU_TODO)
        self.report(original, "APX612", "apex SyncBatchNorm -> torch.nn.SyncBatchNorm", fixed=True, severity="info")
        return self.replace_call(call, self.torch_name(TORCH_SYNC_BN, original), args)

    def _create_group(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        """``create_syncbn_process_group(n)`` -> ``syncbn_process_group(n)``, the helper this
        file gets; a TODO where the file binds that name itself or the call is not plain."""
        bound = bind_args(call, ("group_size",))
        if bound is None or set(bound) != {"group_size"} or self._name_taken(GROUP_HELPER_NAME, original):
            self.todo(original, "APX614", GROUP_TODO)
            return None
        self._group_helper = True
        self.report(
            original,
            "APX614",
            f"create_syncbn_process_group -> {GROUP_HELPER_NAME}, a helper added to this file that builds the "
            "same groups with torch.distributed.new_group",
            fixed=True,
            severity="info",
        )
        return call.with_changes(func=cst.Name(GROUP_HELPER_NAME))

    def _name_taken(self, name: str, at: cst.CSTNode) -> bool:
        """Whether ``name`` is bound where ``at`` stands or at module level (the helper would
        be shadowed, or shadow it)."""
        scope = self.get_metadata(ScopeProvider, at, None)
        return scope is None or bool(scope[name]) or bool(scope.globals[name])

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        updated_node = super().leave_Module(original_node, updated_node)
        if not self._group_helper:
            return updated_node
        AddImportsVisitor.add_needed_import(self.context, "torch")
        helper = statement(GROUP_HELPER)
        anchor = helper_anchor(updated_node)
        body = list(updated_node.body)
        if anchor is None:
            body.insert(0, helper)
        else:
            spaced = [cst.EmptyLine(), cst.EmptyLine()]
            at = next(i for i, stmt in enumerate(body) if stmt is anchor)
            body.insert(at + 1, helper.with_changes(leading_lines=spaced))
        return updated_node.with_changes(body=body)

    def _channel_last(self, original: cst.Call, bound) -> None:  # type: ignore[no-untyped-def]
        flag = bound.get("channel_last")
        if flag is not None and literal_value(flag.value) is not False:
            self.todo(original, "APX613", CHANNEL_LAST_TODO)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def _reference(self, original, updated):  # type: ignore[no-untyped-def]
        """``norm_layer=SyncBatchNorm``, ``isinstance(m, SyncBatchNorm)``: the class maps 1:1."""
        if self.is_callee(original) or not self.settings.code_enabled("APX612"):
            return updated
        names = self.names_of(original)
        if names & SYNC_BN:
            self.report(
                original, "APX612", "apex SyncBatchNorm class -> torch.nn.SyncBatchNorm", fixed=True, severity="info"
            )
            self.forget(original)
            return self.replacement(self.torch_name(TORCH_SYNC_BN, original))
        if names & CONVERT:
            self.todo(
                original,
                "APX611",
                "convert_syncbn_model is passed around here: use torch.nn.SyncBatchNorm.convert_sync_batchnorm "
                "instead (same module, process_group arguments)",
            )
        return updated

    EXAMPLES = [
        Example(
            "convert-syncbn-model",
            "import apex\n\nif args.sync_bn:\n    model = apex.parallel.convert_syncbn_model(model)\n",
            "import torch\n\nif args.sync_bn:\n    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n",
            ("APX611",),
        ),
        Example(
            "convert-syncbn-model-with-group",
            "import torch.nn as nn\nfrom apex.parallel import convert_syncbn_model\n\n"
            "model = convert_syncbn_model(model, process_group=group)\n",
            "import torch.nn as nn\n\nmodel = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=group)\n",
            ("APX611",),
        ),
        Example(
            "sync-batch-norm-class",
            "from apex.parallel import SyncBatchNorm\n\nnorm = SyncBatchNorm(64, eps=1e-3, momentum=0.01)\n"
            "backbone = ResNet(norm_layer=SyncBatchNorm)\n",
            "import torch\n\nnorm = torch.nn.SyncBatchNorm(64, eps=1e-3, momentum=0.01)\n"
            "backbone = ResNet(norm_layer=torch.nn.SyncBatchNorm)\n",
            ("APX612", "APX612"),
        ),
        Example(
            "sync-batch-norm-fuse-relu",
            "from apex.parallel import SyncBatchNorm\n\nbn = SyncBatchNorm(256, fuse_relu=True)\n",
            "import torch\n\n# TODO(apexcompat): " + FUSE_RELU_TODO + "\nbn = torch.nn.SyncBatchNorm(256)\n",
            ("APX612", "APX613"),
        ),
        Example(
            "create-syncbn-process-group",
            "import torch\nfrom apex.parallel import convert_syncbn_model, create_syncbn_process_group\n\n"
            "group = create_syncbn_process_group(args.syncbn_group_size)\n"
            "model = convert_syncbn_model(model, process_group=group)\n",
            "import torch\n\n\n" + GROUP_HELPER + "\ngroup = syncbn_process_group(args.syncbn_group_size)\n"
            "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=group)\n",
            ("APX614", "APX611"),
        ),
        Example(
            "create-syncbn-process-group-name-taken",
            "from apex.parallel import create_syncbn_process_group\n\nsyncbn_process_group = None\n"
            "group = create_syncbn_process_group(8)\n",
            "from apex.parallel import create_syncbn_process_group\n\nsyncbn_process_group = None\n"
            "# TODO(apexcompat): " + GROUP_TODO + "\ngroup = create_syncbn_process_group(8)\n",
            ("APX614",),
        ),
        Example(
            # the import opened its block: the blank line below it goes with it
            "import-opening-a-block-leaves-no-blank-line",
            "import torch.nn as nn\nfrom .env import apex_installed\n\nNORMS = (nn.BatchNorm1d, nn.BatchNorm2d)\n"
            "if apex_installed():\n    import apex\n\n    NORMS = NORMS + (apex.parallel.SyncBatchNorm,)\n",
            "import torch.nn as nn\nfrom .env import apex_installed\n\nNORMS = (nn.BatchNorm1d, nn.BatchNorm2d)\n"
            "if apex_installed():\n    NORMS = NORMS + (nn.SyncBatchNorm,)\n",
            ("APX612",),
        ),
    ]
    NOOP_EXAMPLES = [
        Example(
            "torch-sync-batch-norm", "import torch\n\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
        ),
        Example(
            "local-convert-syncbn-model",
            "def convert_syncbn_model(module):\n    return module\n\n\nmodel = convert_syncbn_model(model)\n",
        ),
    ]
