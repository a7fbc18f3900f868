"""What the cyclic garbage collector does during a run of the command.

Parsing a file builds hundreds of thousands of LibCST nodes that live until the file is
done; the index keeps its trees to the end of the run.  At CPython's default thresholds the
collector walked the same live objects thousands of times (a fifth of a run), so a run
collects less often (``fewer_collections``), pauses the collector while it builds the plan
(``paused_collector``) and takes each file's parsed tree out of the collector's sight for
as long as the file is migrated (``kept_for_the_file``).

All of it applies only inside a run (the command line, or a worker process it started):
a program calling ``engine.migrate_source`` itself keeps its own collector settings.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

#: the collector's thresholds during a run (the defaults are 700, 10, 10)
THRESHOLDS = (50_000, 20, 100)

_T = TypeVar("_T")

#: whether this process is inside a run (set by ``fewer_collections``, inherited by the
#: worker processes forked inside it, set by ``worker_started`` in a spawned one)
_in_run = False


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect less often during a run (``THRESHOLDS``; worker processes forked inside
    inherit them); whatever was frozen during the run is unfrozen at the end."""
    global _in_run
    old, was_in_run = gc.get_threshold(), _in_run
    gc.set_threshold(*THRESHOLDS)
    _in_run = True
    try:
        yield
    finally:
        _in_run = was_in_run
        gc.set_threshold(*old)
        gc.unfreeze()


def worker_started() -> None:
    """A worker process of a run starts (a spawned one inherits nothing of the above)."""
    global _in_run
    gc.set_threshold(*THRESHOLDS)
    _in_run = True


@contextmanager
def paused_collector() -> Iterator[None]:
    """No cyclic collection while the plan is built: what it allocates (trees, summaries,
    the plan) lives to the end of the run and is frozen right after (the few cycles it drops
    wait for a later collection), yet each collection of an older generation went over all
    of it again (a third of a second on DeepLearningExamples)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def kept_for_the_file(build: Callable[[], _T]) -> _T:
    """``build()`` (a file's parsed tree), frozen for the rest of the run inside one: the
    rules read it until the file is done, and each collection meanwhile walked all of its
    nodes again (about a tenth of a file's time).  Frozen objects are still freed when
    nothing refers to them any more; only cyclic garbage among them would wait for the end
    of the run, so the young generations are collected first (what the file before left
    in cycles is not frozen with it).  The tree holds no cycle of its own."""
    if not _in_run:
        return build()
    gc.collect(1)
    built = build()
    gc.freeze()
    return built
