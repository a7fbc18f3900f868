"""For the codes that leave work to the user: the situation, why the tool does not rewrite
it, and what to do by hand.  ``--explain`` prints it; the table "What it reports instead of
rewriting, and how to finish by hand" in docs/migrate/index.md says the same (a test compares
them; the page writes the LARC formula with typographic symbols, this module in ASCII)."""

from __future__ import annotations

from typing import Dict, NamedTuple


class ManualWork(NamedTuple):
    situation: str
    why: str
    by_hand: str


_AUTOCAST = ManualWork(
    "the forward pass is not next to the backward",
    "autocast cannot be placed provably",
    'wrap the forward and the loss in `with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):`',
)
_STATIC_SCALE = ManualWork(
    "static `loss_scale=128.0`",
    "GradScaler has no static mode: with `init_scale=128`, a huge `growth_interval` and `set_backoff_factor(1.0)` "
    "its scale stays, but it still skips a step with inf/nan gradients, which apex took",
    "keep the emitted scaler if skipping is fine (it usually is)",
)
_FP16_OPTIMIZER = ManualWork(
    "`FP16_Optimizer` with closures, `update_master_grads=False`, `.overflow`, its checkpoints",
    "the choreography has no native counterpart",
    "rewrite the step as `scaler.scale(loss).backward(); scaler.step(opt); scaler.update()`",
)
_KERNELS = ManualWork(
    "still-shipped kernels without a torch equivalent (`FusedLAMB`, `FusedNovoGrad`, `apex.mlp`, xentropy, `amp_C`)",
    "apex still ships them",
    "keep them (info finding), or replace with a torch optimizer after checking the update rule",
)
_OPTIONS = ManualWork(
    "apex DDP / SyncBatchNorm options without a torch argument (`channel_last=True`, ...)",
    "no torch argument",
    "remove the argument; for `channel_last` use `memory_format=torch.channels_last` on the model",
)
_REGISTRY = ManualWork(
    "`register_*_function` on a non-torch function, `amp.promote_function`",
    "native autocast has no generic registry",
    "run the function in the precision you want (`torch.autocast(..., enabled=False)` + `.float()`)",
)

MANUAL_WORK: Dict[str, ManualWork] = {
    "APX220": ManualWork(
        "`amp` reached indirectly (stored on an object, passed as an argument, returned by a helper), "
        "`scale_loss` in another file than `initialize`, or two training `initialize` calls that may both run "
        "(in sequence, in a loop; branches of one if/elif/else are alternatives and each creates the scaler)",
        "the scaler cannot be threaded provably",
        "the file keeps working through `apexcompat.amp`; to go native, create the `GradScaler` where "
        "`initialize` was and pass it to the training code (a parameter or an attribute)",
    ),
    "APX210": ManualWork(
        "the forward pass is not next to the backward",
        "autocast cannot be placed provably; as written, the native file would train in float32, so the file keeps "
        "`apexcompat.amp` (APX220 says so)",
        'wrap the forward and the loss in `with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):` and '
        "migrate again, or put `# apexcompat: ignore[APX210]` on the `scale_loss` line to take the native rewrite "
        "with its TODO",
    ),
    "APX704": _AUTOCAST,
    "APX204": _STATIC_SCALE,
    "APX703": _STATIC_SCALE,
    "APX222": ManualWork(
        "`amp._amp_state.loss_scalers[0]._max_loss_scale = x` (or `_min_loss_scale`)",
        "GradScaler has no ceiling or floor for its scale; the setting is dropped (the other settings, "
        "`_loss_scale` and `_scale_seq_len`, become GradScaler arguments or updates)",
        "nothing, usually; if the cap mattered, after `scaler.update()` call `scaler.update(new_scale=x)` whenever "
        "`scaler.get_scale() > x`",
    ),
    "APX205": ManualWork(
        "`loss_scale` comes from a variable",
        "the value is only known at run time",
        "set `init_scale` / `growth_interval` by hand if it is a number",
    ),
    "APX270": ManualWork(
        "a module-level `from apex import amp` the file does not use itself, but other files take from it "
        "(`from utils import *`, `from utils import amp`, `utils.amp`)",
        "their `amp.initialize` / `amp.scale_loss` calls are not sites the tool sees in their own files, and "
        "removing the import would leave them a name that no longer exists",
        "the import stays on `apexcompat.amp`, so those files keep working; to go native, import apex.amp in "
        "each of them by name and migrate again, then delete the import",
    ),
    "APX403": ManualWork(
        "`amp.state_dict()` / `amp.load_state_dict()` in a file without `amp.initialize`",
        "the GradScaler is created in another file; once that file is migrated nothing sets up "
        "`apexcompat.amp`'s state",
        "pass that scaler in (a parameter or an attribute) and call `scaler.state_dict()` / "
        "`scaler.load_state_dict(...)`",
    ),
    "APX605": ManualWork(
        "`apex.parallel` passed on as a value (`self._ddp = parallel`)",
        "its uses cannot be followed",
        "call `torch.nn.parallel.DistributedDataParallel` / `torch.nn.SyncBatchNorm.convert_sync_batchnorm` "
        "where the stored module was used, and drop the import",
    ),
    "APX202": ManualWork(
        "O2 / O3 / `master_weights`",
        "autocast keeps fp32 weights; there are no fp16 weights or masters",
        "nothing, usually: weight memory doubles, numerics improve",
    ),
    "APX206": ManualWork(
        "inference-only `initialize` (no optimizer) whose model is used out of sight (returned, kept on an "
        "object, in a lambda, under a context the script picks)",
        "where the forward passes run cannot be followed; where the function itself goes on to use the model, "
        "each statement using it is put under `torch.autocast` instead (a warning)",
        "`model.half()` for O3-style inference, or wrap the forward passes in autocast",
    ),
    "APX323": ManualWork(
        "`math.isnan(grad_norm)` style overflow checks",
        "an overflow can also be inf",
        "use `not math.isfinite(grad_norm)`",
    ),
    "APX621": ManualWork(
        "`apex.parallel.LARC`",
        "no torch equivalent",
        "keep a small local LARC wrapper (per parameter, scale the gradient by "
        "min(trust * |p| / (|g| + wd * |p| + eps) / lr, 1) in clip mode) or switch optimizer",
    ),
    "APX702": _FP16_OPTIMIZER,
    "APX709": _FP16_OPTIMIZER,
    "APX808": _KERNELS,
    "APX809": _KERNELS,
    "APX603": _OPTIONS,
    "APX613": _OPTIONS,
    "APX503": _REGISTRY,
    "APX505": _REGISTRY,
    "APX001": ManualWork(
        "a file that does not parse (Python 2 `print x`, a genuine syntax error)",
        "LibCST needs valid Python; two old-script shapes are repaired instead (`.cuda(async=True)` becomes "
        "`non_blocking=True`, indentation mixing tabs and spaces is expanded at 8 columns a tab, as Python 2 "
        "read it: APX012, each repaired line reported)",
        "fix the syntax, run again",
    ),
    "APX006": ManualWork(
        "a copy of apex itself in the repository (the `apex/` package, or its source tree: a git submodule, "
        "`third_party/apex`)",
        "it is apex, not code using it; it may still be needed while other files import apex",
        "migrate the rest; once no file outside it imports apex, delete the copy and the step that installs it "
        "(`pip install ./apex`, the submodule entry); to keep apex on purpose, `--ignore APX006`",
    ),
}
