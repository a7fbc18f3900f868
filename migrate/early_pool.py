"""Worker processes started before the cross-file plan is built.

While the main process indexes the admitted files and plans across them, the workers
already migrate those files as if the plan gave none of them a part (most files it does
not: 3 of DeepLearningExamples' 87, none of a tree of independent scripts).  Once the plan
is known, a file it does give a part is migrated again with it, and a file not yet started
is handed its part directly.  The files that name apex's amp (``may_get_a_part``), where the
plan's parts go, are guessed last, smallest first: guessed first, as the biggest, they were
the ones migrated twice (DeepLearningExamples' BERT scripts, a fifth of the run's CPU at
``-j 2``).  A file's result depends only on its text, its path, the settings and its part
of the plan, so the results are those of a pool started after the plan; the plan no longer
waits in front of the whole per-file phase.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from multiprocessing.pool import AsyncResult, Pool
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from .settings import Settings

if TYPE_CHECKING:
    from .results import MigrationResult
    from .repo_plan import FilePlan


class EarlyPool:
    """A process pool that migrates ``jobs`` (path as shown, source) ahead of their plan,
    the biggest files first, keeping only a few in flight so that the files handed out
    before the plan is known are few more than the workers."""

    def __init__(
        self, jobs: Sequence[Tuple[str, bytes]], settings: Settings, workers: int, processes: Optional[Pool] = None
    ) -> None:
        #: ``processes``: the run's workers, started already (``start_workers``), taken over
        self._pool = processes if processes is not None else start_workers(settings, workers)
        self._jobs = jobs
        # the biggest files first, so that no worker is left with a long one at the end
        self._order = biggest_first(jobs)
        # what is guessed ahead of the plan: first the files it is unlikely to give a part,
        # then the others smallest first (a tree of apex scripts alone keeps the workers busy;
        # a big one a part re-runs is rarely guessed, and after the plan the biggest go first)
        likely = {i for i in self._order if may_get_a_part(jobs[i][1])}
        unlikely = [i for i in self._order if i not in likely]
        self._guess_order = unlikely + [i for i in reversed(self._order) if i in likely]
        self._lock = threading.Lock()
        self._handed = 0  # how many of ``_guess_order`` went out without a plan
        self._planned = False
        self._guesses: Dict[int, AsyncResult] = {}
        for _ in range(workers + 1):
            self._guess()

    def __enter__(self) -> "EarlyPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.terminate()  # every result wanted is in; a superseded guess may still run

    def _guess(self, _done: Any = None) -> None:
        """Hand out the next file without a plan, until the plan is known (also called as
        each earlier one finishes, in the pool's result thread)."""
        from .pipeline import _migrate_in_worker

        with self._lock:
            if self._planned or self._handed >= len(self._guess_order):
                return
            i = self._guess_order[self._handed]
            self._handed += 1
            self._guesses[i] = self._pool.apply_async(
                _migrate_in_worker, (self._jobs[i],), callback=self._guess, error_callback=self._guess
            )

    def add_jobs(self, jobs: Sequence[Tuple[str, bytes]]) -> None:
        """Files the plan admits after the prefilter left them out (``pipeline._admitted_by_plan``):
        migrated with their part of the plan like the others, never ahead of it."""
        with self._lock:
            self._planned = True  # no guess for them: each has a part of the plan
            start = len(self._jobs)
            self._jobs = list(self._jobs) + list(jobs)
            self._order = self._order + list(range(start, len(self._jobs)))

    def with_plan(self, file_plans: Sequence[Optional["FilePlan"]]) -> List["MigrationResult"]:
        """One result per job, each migrated with its part of the plan (``file_plans``, None
        where the plan gives the file none): a guess stands where the file has no part."""
        from .pipeline import _migrate_in_worker

        with self._lock:
            self._planned = True
            guesses = dict(self._guesses)
        wanted: Dict[int, AsyncResult] = {}
        for i in self._order:
            if i in guesses and file_plans[i] is None:
                wanted[i] = guesses[i]
            else:
                path, source = self._jobs[i]
                wanted[i] = self._pool.apply_async(_migrate_in_worker, ((path, source, file_plans[i]),))
        return [wanted[i].get() for i in range(len(self._jobs))]

    def migrate(self, jobs: Sequence[Any]) -> List["MigrationResult"]:
        """One result per job (a later pass: files migrated again), the biggest first."""
        from .pipeline import _migrate_in_worker

        handed = {i: self._pool.apply_async(_migrate_in_worker, (jobs[i],)) for i in biggest_first(jobs)}
        return [handed[i].get() for i in range(len(jobs))]


def start_workers(settings: Settings, workers: int) -> Pool:
    """``workers`` worker processes for a run under ``settings``; each imports the engine
    (LibCST, the rules: half a second) as it starts, while the caller goes on."""
    from .pipeline import _init_worker

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and os.name == "posix" else None
    return multiprocessing.get_context(method).Pool(workers, initializer=_init_worker, initargs=(settings,))


def may_get_a_part(source: bytes) -> bool:
    """Whether the plan may give the file of ``source`` a part: it names apex (or apexcompat)
    and amp.  Only an ordering hint: a file guessed wrongly is migrated again with its part."""
    return b"apex" in source and b"amp" in source


def biggest_first(jobs: Sequence[Any]) -> List[int]:
    """The indexes of ``jobs`` (path, source, ...) by decreasing source size."""
    return sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1]))
