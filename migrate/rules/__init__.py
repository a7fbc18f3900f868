"""The rule families, in the order they run.  One module per family; each module's rule
class is listed here once."""

from __future__ import annotations

from typing import FrozenSet, List, Tuple, Type

from .amp_initialize import InitializeRule
from .apex_fallback import ApexFallbackRule
from .base import Rule
from .bf16_scaler import Bfloat16ScalerRule
from .casting_hooks import CastingHooksRule
from .checkpoints import CheckpointRule
from .clipping import ClippingRule
from .imports import ImportsRule
from .scale_loss import ScaleLossRule
from .step import StepRule
from .ddp import DistributedDataParallelRule
from .fp16_optimizer import FP16OptimizerRule
from .fused import FusedKernelsRule
from .larc import LarcRule
from .native_clip import NativeClipRule
from .old_torch_branches import OldTorchBranchRule
from .syncbn import SyncBatchNormRule
from .torch_amp_spellings import TorchAmpSpellingsRule

ALL_RULES: List[Type[Rule]] = [
    # --- neighbouring apex packages and deprecated torch spellings (M3) ---
    DistributedDataParallelRule,
    SyncBatchNormRule,
    LarcRule,
    FP16OptimizerRule,
    FusedKernelsRule,
    TorchAmpSpellingsRule,
    # --- apex.amp (M2) ---
    OldTorchBranchRule,  # first: the apex.amp rules see the branch the target torch runs
    ApexFallbackRule,  # then: they see the path a file with a native fallback takes without apex
    InitializeRule,
    CheckpointRule,
    ClippingRule,
    StepRule,
    ScaleLossRule,
    CastingHooksRule,
    Bfloat16ScalerRule,  # --dtype bfloat16 only: runs after every rule that uses the scaler
    NativeClipRule,  # reads the native loops the rules above left
    # --- import clean-up, runs last (M2) ---
    ImportsRule,
]

#: rules that follow each other in ``ALL_RULES`` and run on the same text, their outputs
#: merged (``engine``, ``tree_merge``): none of them decides on what another one of the
#: group changes (the scale-loss rule's if-written-once reads the step rule's edit: it is
#: finished on the merged tree, ``tree_merge.WHOLE_NODE_READS``).  Where two change the same
#: part of a file, the later one runs again on the text the others left.  Grouping a rule
#: with one whose edits it reads changes outputs: ``tests/migrate/test_tree_merge.py``
#: compares every rule example with the groups and without.
SAME_TEXT_GROUPS: Tuple[FrozenSet[Type[Rule]], ...] = (
    frozenset({DistributedDataParallelRule, SyncBatchNormRule, LarcRule, FP16OptimizerRule, FusedKernelsRule, InitializeRule}),
    frozenset({CheckpointRule, ClippingRule, StepRule, ScaleLossRule, CastingHooksRule}),
)


def all_codes() -> dict:
    """Every rule code -> description, for ``--select`` validation and the docs."""
    codes = {}
    for rule in ALL_RULES:
        codes.update(rule.CODES)
    return dict(sorted(codes.items()))
