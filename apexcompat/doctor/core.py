"""The overflow doctor's state and decisions: called by ``scale_loss`` only after a skipped
step (or while a one-step localisation is armed), so clean steps do no work here.

Default mode: one stderr warning per run when a loss scaler collapses.  Diagnose mode
(``APEXCOMPAT_DIAGNOSE=1`` or ``doctor.diagnose(True)``): on each skipped step, the loss is
checked (one host sync), the overflow is classified, the parameters with non-finite
gradients are named, localisation hooks are armed for the next step; reports go to the
``apexcompat.diagnose`` logger, once per distinct situation, then as periodic summaries.
"""

from __future__ import annotations

import logging
import os
import weakref
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import torch

from .counters import OverflowCounters
from .localize import OneStepProbe, kind_of, nonfinite_kind
from .log import say
from .names import labelled_params, module_names, qualified_names

__all__ = ["Doctor", "doctor", "COLLAPSE_STREAK", "SUMMARY_EVERY", "env_enabled"]

ENV_VAR = "APEXCOMPAT_DIAGNOSE"
# A collapse: this many skipped steps in a row, or a dynamic scale below 1.  A scale
# calibrating down from 65536 takes at most 16 skips to reach 1, so a calibration burst
# alone never counts.
COLLAPSE_STREAK = 20
# Steps between two summaries of one loss scaler (only when it skipped since the last).
SUMMARY_EVERY = 1000
# Parameters named in one report; localisation attempts per loss scaler and run.
NAMED_PARAMS = 5
LOCALISE_ATTEMPTS = 3


def env_enabled() -> bool:
    """Whether ``APEXCOMPAT_DIAGNOSE`` asks for the doctor (1/true/yes/on)."""
    return os.environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes", "on")


def _nonfinite_flags(grads: Sequence[torch.Tensor]) -> List[Tuple[bool, bool]]:
    """(has nan, has inf) per tensor, with one host sync per device."""
    out: List[Tuple[bool, bool]] = [(False, False)] * len(grads)
    by_device: Dict[torch.device, List[int]] = {}
    for i, grad in enumerate(grads):
        by_device.setdefault(grad.device, []).append(i)
    for idx in by_device.values():
        flags = torch.stack(
            [torch.stack([torch.isnan(grads[i]).any(), torch.isinf(grads[i]).any()]) for i in idx]
        ).tolist()
        for i, (has_nan, has_inf) in zip(idx, flags):
            out[i] = (bool(has_nan), bool(has_inf))
    return out


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def bf16_supported(device_type: str) -> bool:
    """Whether bfloat16 mixed precision is usable on this device type."""
    if device_type == "cuda":
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    try:
        with torch.autocast(device_type, dtype=torch.bfloat16):
            pass
    except Exception:  # noqa: BLE001 - any refusal means "not supported"
        return False
    return True


class _ScalerNotes:
    """What the doctor remembers about one loss scaler during a run."""

    def __init__(self) -> None:
        self.loss_nonfinite_step: Optional[int] = None
        self.loss_nonfinite_kind = ""
        self.last_summary_step = 0
        self.collapse_streak_start: Optional[int] = None
        self.localise_attempts = 0
        self.finding: Optional[str] = None


class Doctor:
    """The process-wide doctor (one instance, :data:`doctor`); :meth:`reset` forgets
    everything, :meth:`start_run` is called by ``amp.initialize``."""

    def __init__(self) -> None:
        self.override: Optional[bool] = None
        self.reset()

    def reset(self) -> None:
        self._models: List[weakref.ReferenceType] = []
        self.device_type = "cpu"
        self.opt_level: Optional[str] = None
        self.armed: Optional[OneStepProbe] = None
        self._armed_for: Tuple[int, int] = (-1, -1)
        self._said: Set[Any] = set()
        self._notes: Dict[int, _ScalerNotes] = {}
        self.warned_collapse = False

    # -- switches -----------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return env_enabled() if self.override is None else self.override

    def start_run(self, models: Sequence[torch.nn.Module], device_type: str, opt_level: Any) -> None:
        """A new run (``amp.initialize``): forget the previous one, remember the models."""
        self.disarm()
        override = self.override
        self.reset()
        self.override = override
        self._models = [weakref.ref(m) for m in models]
        self.device_type = device_type
        self.opt_level = opt_level

    def models(self) -> List[torch.nn.Module]:
        return [m for m in (ref() for ref in self._models) if m is not None]

    def disarm(self) -> None:
        if self.armed is not None:
            self.armed.disarm()
            self.armed = None

    # -- the hook in scale_loss ---------------------------------------------------------

    def after_check(self, loss_id: int, scaler: Any, loss: Any, optimizers: Sequence[Any], skipped: bool) -> None:
        """Called after ``update_scale`` decided, when it skipped or a probe is armed."""
        if self.armed is not None:
            self._finish_localisation(loss_id, scaler)
        if not skipped:
            return
        counters: OverflowCounters = scaler.counters
        collapsed = counters.consecutive >= COLLAPSE_STREAK or scaler.loss_scale() < 1
        if not self.active:
            if collapsed and not self.warned_collapse:
                self.warned_collapse = True
                say(self._collapse_warning(loss_id, scaler), logging.WARNING)
            return
        self._diagnose_skip(loss_id, scaler, loss, optimizers, collapsed)

    # -- diagnose mode ----------------------------------------------------------------------

    def _note(self, loss_id: int) -> _ScalerNotes:
        return self._notes.setdefault(loss_id, _ScalerNotes())

    def _once(self, key: Any) -> bool:
        if key in self._said:
            return False
        self._said.add(key)
        return True

    def _diagnose_skip(self, loss_id: int, scaler: Any, loss: Any, optimizers: Sequence[Any], collapsed: bool) -> None:
        counters: OverflowCounters = scaler.counters
        note = self._note(loss_id)
        step = counters.current_step
        head = f"step {step}, loss scaler {loss_id}: "
        said = False
        loss_kind = nonfinite_kind(loss.detach()) if isinstance(loss, torch.Tensor) else None
        if loss_kind is not None:
            note.loss_nonfinite_step, note.loss_nonfinite_kind = step, loss_kind
            if self._once(("loss", loss_id, loss_kind)):
                say(head + f"the loss is {loss_kind} before scaling: lowering the loss scale cannot "
                    "fix this. Look at this step's inputs and labels and at the forward pass "
                    "(log, sqrt or division of 0, an fp16 activation above 65504).")
                said = True
        elif counters.skip_after_growth and counters.consecutive == 1:
            if self._once(("probe",)):
                say(head + f"overflow after the scale grew to {counters.streak_start_scale} "
                    f"(at step {counters.last_growth_step}, after {scaler._scale_seq_len} clean "
                    f"steps): this is the scaler's periodic probe, normal; the scale goes back "
                    f"to {scaler.loss_scale()}. (Said once; later probes are not reported.)")
            return
        else:
            said = self._report_params(head, loss_id, scaler, optimizers, counters)
        self._maybe_arm(loss_id, step, note)
        if collapsed and note.collapse_streak_start != step - counters.consecutive + 1:
            note.collapse_streak_start = step - counters.consecutive + 1
            say(self._collapse_report(loss_id, scaler, note))
            said = True
        if said:
            note.last_summary_step = step
        elif step - note.last_summary_step >= SUMMARY_EVERY:
            note.last_summary_step = step
            say(self._summary(loss_id, scaler, note))

    def _report_params(
        self, head: str, loss_id: int, scaler: Any, optimizers: Sequence[Any], counters: OverflowCounters
    ) -> bool:
        names = qualified_names(self.models())
        grads: List[Tuple[str, torch.Tensor]] = []
        seen: Set[int] = set()
        for optimizer in optimizers:
            for label, param in labelled_params(optimizer, names):
                grad = param.grad
                if id(param) not in seen and grad is not None:
                    seen.add(id(param))
                    grads.append((label, grad))
        flags = _nonfinite_flags([grad for _, grad in grads])
        bad = [
            (label, grad, kind_of(*flag))
            for (label, grad), flag in zip(grads, flags)
            if flag[0] or flag[1]
        ]
        key = ("grads", loss_id, tuple(label for label, _, _ in bad[:NAMED_PARAMS]))
        if not self._once(key):
            return False
        scale_used = counters.streak_start_scale if counters.consecutive == 1 else scaler.loss_scale() * 2
        lines = [
            head + f"gradient overflow at loss scale {scale_used} (the loss is finite): "
            f"{len(bad)} of {len(grads)} parameters have non-finite gradients"
            + (":" if bad else " (the non-finite values were in gradients amp does not step)")
        ]
        for label, grad, kind in bad[:NAMED_PARAMS]:
            shape = "x".join(str(s) for s in grad.shape) or "scalar"
            lines.append(f"    {label}  {_dtype_name(grad.dtype)}  [{shape}]  {kind}")
        if len(bad) > NAMED_PARAMS:
            lines.append(f"    ... and {len(bad) - NAMED_PARAMS} more")
        if counters.last_clean_step is None:
            lines.append("    (no clean step yet: skips at the start usually only calibrate the "
                         "scale down; they are a problem only if they go on)")
        say("\n".join(lines))
        return True

    def _maybe_arm(self, loss_id: int, step: int, note: _ScalerNotes) -> None:
        if self.armed is not None or note.localise_attempts >= LOCALISE_ATTEMPTS or note.finding:
            return
        modules = module_names(self.models())
        if modules:
            note.localise_attempts += 1
            self.armed = OneStepProbe(modules)
            self._armed_for = (loss_id, step)

    def _finish_localisation(self, loss_id: int, scaler: Any) -> None:
        probe = self.armed
        assert probe is not None
        armed_id, armed_step = self._armed_for
        if loss_id != armed_id or not probe.saw_forward:
            return  # another loss's exit, or no forward pass yet: keep waiting
        self.disarm()
        step = scaler.counters.current_step
        found = [f for f in (probe.forward, probe.backward) if f is not None]
        note = self._note(loss_id)
        if found:
            note.finding = found[0].describe()
            lines = [f"step {step}, loss scaler {loss_id}: localisation (hooks armed after the "
                     f"overflow at step {armed_step}):"]
            if probe.forward is not None:
                lines.append("    first module with a non-finite forward output: " + probe.forward.describe())
            else:
                lines.append("    every forward output was finite")
            if probe.backward is not None:
                lines.append("    first non-finite gradient in the backward pass: " + probe.backward.describe())
            say("\n".join(lines))
        elif scaler.counters.last_skip_step != step:
            if self._once(("clean-after", loss_id)):
                say(f"step {step}, loss scaler {loss_id}: localisation: the step after the "
                    f"overflow at step {armed_step} was clean, every module output and gradient "
                    "finite: the non-finite values came from that step's batch or loss scale.")
        elif self._once(("params-only", loss_id)):
            say(f"step {step}, loss scaler {loss_id}: localisation: every module output and "
                "every gradient between modules was finite; only parameter gradients (named "
                "above) overflowed: activations times upstream gradients exceed the half "
                "type's range at this loss scale.")

    # -- the texts --------------------------------------------------------------------------

    def _trajectory(self, scaler: Any) -> str:
        c: OverflowCounters = scaler.counters
        first = c.current_step - c.consecutive + 1
        last_clean = "none yet" if c.last_clean_step is None else f"step {c.last_clean_step}"
        return (f"{c.consecutive} skipped steps in a row (steps {first}-{c.current_step}), loss "
                f"scale {c.streak_start_scale} -> {scaler.loss_scale()}; last clean step: {last_clean}")

    def _collapse_warning(self, loss_id: int, scaler: Any) -> str:
        return (f"loss scaler {loss_id} is collapsing: {self._trajectory(scaler)}. Training makes "
                f"no progress while every step is skipped. Run with {ENV_VAR}=1 to see which "
                "parameters overflow, whether the loss itself is nan/inf, and which module "
                "produces the first non-finite value. (This warning is shown once.)")

    def _collapse_report(self, loss_id: int, scaler: Any, note: _ScalerNotes) -> str:
        lines = [f"loss scaler {loss_id} has collapsed: {self._trajectory(scaler)}. "
                 "Halving the scale is not helping. What to try, in order:"]
        advice: List[str] = []
        if note.loss_nonfinite_step is not None:
            advice.append(f"the loss itself was {note.loss_nonfinite_kind} (last at step "
                          f"{note.loss_nonfinite_step}): fix the data or the forward pass first; "
                          "no loss scale can help")
        if note.finding:
            advice.append(f"the first non-finite value came from {note.finding}: look at that "
                          "module first (log, sqrt or division at 0?); if the half type's range "
                          "is the cause, keep it in fp32 (amp.float_function, "
                          "amp.disable_casts(), or .float() on its input)")
        if bf16_supported(self.device_type):
            advice.append("bfloat16 instead of float16 (fp32's range, no loss scaling needed; "
                          f"this {self.device_type} device supports it): "
                          "APEXCOMPAT_HALF_DTYPE=bfloat16")
        if self.opt_level in ("O2", "O3"):
            advice.append(f"opt_level O1 instead of {self.opt_level} (fp32 weights, half "
                          "precision only where it is safe): APEXCOMPAT_OPT_LEVEL=O1")
        elif self.opt_level == "O1":
            advice.append("opt_level O0 (fp32) for a few steps: if it also diverges, precision "
                          "is not the problem (APEXCOMPAT_OPT_LEVEL=O0)")
        advice.append("a lower learning rate (the weights may have blown up)")
        advice.append("gradient clipping after the scale_loss block: "
                      "torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)")
        lines += [f"    {i}. {text}" for i, text in enumerate(advice, 1)]
        return "\n".join(lines)

    def _summary(self, loss_id: int, scaler: Any, note: _ScalerNotes) -> str:
        stats = scaler.counters.snapshot(loss_id, scaler.loss_scale())
        text = (f"summary at step {stats.steps - 1}, loss scaler {loss_id}: {stats.skipped_steps} "
                f"of {stats.steps} steps skipped, {stats.overflow_rate:.1%} over the last "
                f"{min(stats.steps, stats.window)}, {stats.consecutive_skips} in a row now, loss "
                f"scale {stats.loss_scale}")
        if note.loss_nonfinite_step is not None:
            text += f"; loss last non-finite at step {note.loss_nonfinite_step}"
        return text


doctor = Doctor()
