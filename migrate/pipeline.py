"""Run the engine over the files that passed the prefilter, in this process or in a pool
of worker processes; results come back in the order the files were given."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterator, Optional, Sequence, Tuple

from .settings import Settings

if TYPE_CHECKING:  # the engine imports LibCST: load it only when a file needs parsing
    from .engine import MigrationResult

#: (path as shown, source bytes)
Job = Tuple[str, bytes]
#: below this many files a pool costs more to start than it saves
MIN_FILES_PER_WORKER = 4


def _migrate(job: Job, settings: Settings) -> "MigrationResult":
    from .engine import migrate_source

    path, source = job
    return migrate_source(source, path, settings)


_worker_settings: Optional[Settings] = None


def _init_worker(settings: Settings) -> None:
    global _worker_settings
    _worker_settings = settings


def _migrate_in_worker(job: Job) -> "MigrationResult":
    assert _worker_settings is not None
    return _migrate(job, _worker_settings)


def migrate_all(
    jobs: Sequence[Job],
    settings: Settings,
    workers: int,
) -> Iterator["MigrationResult"]:
    """Yield one result per job, in order; ``workers`` > 1 uses a process pool when there
    are enough files to pay for it."""
    workers = min(workers, max(1, len(jobs) // MIN_FILES_PER_WORKER))
    if workers <= 1:
        for job in jobs:
            yield _migrate(job, settings)
        return
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and os.name == "posix" else None
    context = multiprocessing.get_context(method)
    with context.Pool(workers, initializer=_init_worker, initargs=(settings,)) as pool:
        yield from pool.imap(_migrate_in_worker, jobs, chunksize=1)


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
