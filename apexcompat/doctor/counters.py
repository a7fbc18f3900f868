"""Per-loss-scaler overflow counters: updated on every ``update_scale`` (a few integer
operations, no tensor work), read by scripts through ``doctor.overflow_stats`` and by the doctor.

A *step* here is one overflow check of one loss scaler (one non-delayed ``scale_loss`` exit
for that ``loss_id``), numbered from 0 — with one backward per iteration, the loop's own
``for step in range(...)`` index.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Deque, Optional

__all__ = ["OverflowCounters", "OverflowStats", "RATE_WINDOW"]

# Steps over which ``overflow_rate`` is measured.
RATE_WINDOW = 1000


@dataclass(frozen=True)
class OverflowStats:
    """A snapshot of one loss scaler's overflow history (see ``doctor.overflow_stats``).

    Attributes:
        loss_id: which loss scaler (``scale_loss(..., loss_id=...)``).
        steps: overflow checks so far (one per non-delayed ``scale_loss`` exit).
        skipped_steps: how many of them overflowed, so that the optimizer step was skipped.
        consecutive_skips: skipped steps in a row up to now (0 after a clean step).
        overflow_rate: fraction of the last ``window`` steps (or of all steps, if fewer)
            that were skipped.
        window: the window of ``overflow_rate``, in steps.
        last_skip_step: the step number of the latest skip, ``None`` if none yet.
        last_clean_step: the step number of the latest clean step, ``None`` if none yet.
        loss_scale: the scaler's current loss scale.
    """

    loss_id: int
    steps: int
    skipped_steps: int
    consecutive_skips: int
    overflow_rate: float
    window: int
    last_skip_step: Optional[int]
    last_clean_step: Optional[int]
    loss_scale: Any


class OverflowCounters:
    """The history of one scaler.  ``record`` is called once per overflow check."""

    __slots__ = (
        "steps",
        "skipped",
        "consecutive",
        "last_skip_step",
        "last_clean_step",
        "last_growth_step",
        "streak_start_scale",
        "skip_after_growth",
        "_recent_skips",
    )

    def __init__(self) -> None:
        self.steps = 0
        self.skipped = 0
        self.consecutive = 0
        self.last_skip_step: Optional[int] = None
        self.last_clean_step: Optional[int] = None
        self.last_growth_step: Optional[int] = None
        self.streak_start_scale: Any = None  # the scale before the first skip of the streak
        self.skip_after_growth = False  # the last skip was the first one since a growth
        self._recent_skips: Deque[int] = collections.deque()

    def record(self, skip: bool, grew: bool, scale_before: Any) -> None:
        step = self.steps
        self.steps = step + 1
        if not skip:
            self.consecutive = 0
            self.last_clean_step = step
            if grew:
                self.last_growth_step = step
            return
        self.skipped += 1
        growth = self.last_growth_step
        self.skip_after_growth = growth is not None and (
            self.last_skip_step is None or self.last_skip_step < growth
        )
        if self.consecutive == 0:
            self.streak_start_scale = scale_before
        self.consecutive += 1
        self.last_skip_step = step
        recent = self._recent_skips
        recent.append(step)
        while recent[0] <= step - RATE_WINDOW:
            recent.popleft()

    @property
    def current_step(self) -> int:
        """The number of the step recorded last."""
        return self.steps - 1

    def overflow_rate(self) -> float:
        if self.steps == 0:
            return 0.0
        recent = self._recent_skips
        while recent and recent[0] <= self.current_step - RATE_WINDOW:
            recent.popleft()
        return len(recent) / min(self.steps, RATE_WINDOW)

    def snapshot(self, loss_id: int, loss_scale: Any) -> OverflowStats:
        return OverflowStats(
            loss_id=loss_id,
            steps=self.steps,
            skipped_steps=self.skipped,
            consecutive_skips=self.consecutive,
            overflow_rate=self.overflow_rate(),
            window=RATE_WINDOW,
            last_skip_step=self.last_skip_step,
            last_clean_step=self.last_clean_step,
            loss_scale=loss_scale,
        )
