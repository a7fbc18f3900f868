"""Worker processes started before the cross-file plan is built.

While the main process indexes the admitted files and plans across them, workers already
migrate those files as if the plan gave none of them a part (most files it does not: 3 of
DeepLearningExamples' 87, none of a tree of independent scripts).  Once the plan is known,
a file it does give a part is migrated again with it, and a file not yet started is handed
its part directly.  The files that name apex's amp (``may_get_a_part``), where the plan's
parts go, are guessed last, smallest first: guessed first, as the biggest, they were the
ones migrated twice (DeepLearningExamples' BERT scripts, a fifth of the run's CPU at
``-j 2``).  A file's result depends only on its text, its path, the settings and its part
of the plan, so the results are those of a pool started after the plan; the plan no longer
waits in front of the whole per-file phase.

The planning process keeps a CPU of its own: while it plans, as many workers guess as
there are CPUs besides it (``guessers``: one on two CPUs), each taking the next file from
a counter they share, without a round trip to the main process per file.  With every
worker guessing, three processes shared two CPUs: the plan came later, so more files were
guessed before it, among them files it then gave a part (migrated twice); guesses handed
out one at a time instead left a CPU idle between files.

Run as the command, the workers are forked from a server process that imported the engine
once (``start_workers``): each forked from the command's own process imported it again, a
third of a second of CPU each, taken from the planner and the other worker (DeepLearningExamples
at ``-j 2``: 5.40 -> 5.06 s wall, median of six interleaved runs).  The plan does not wait
for that server: the thread starting it hands out the guesses once it is up
(``Workers.when_started``).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from multiprocessing.pool import AsyncResult, Pool
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from .settings import Settings

if TYPE_CHECKING:
    from .results import MigrationResult
    from .repo_plan import FilePlan


class Workers:
    """The run's worker processes (``start_workers``) and the counter through which those
    that guess ahead of the plan share out the files."""

    def __init__(self, pool: Union[Pool, "_Starting"], next_guess: Any, start_method: str = "fork") -> None:
        self._pool = pool
        #: the index, in the guess order, of the next file to guess (a shared ``Value``)
        self.next_guess = next_guess
        self._start_method = start_method

    @property
    def pool(self) -> Pool:
        """The pool, once started (waited for where a thread is starting it)."""
        if isinstance(self._pool, _Starting):
            starting, self._pool = self._pool, self._pool.started()
            self._start_method = starting.start_method
        return self._pool

    @property
    def start_method(self) -> str:
        """How the workers were started: ``forkserver`` (from a server process), ``fork``
        (from this one), or ``spawn`` where this system forks nothing."""
        self.pool
        return self._start_method

    def when_started(self, use: Callable[[Pool], None]) -> None:
        """``use(pool)`` once the pool is started: at once where it is, else by the thread
        starting it (the caller goes on meanwhile: the plan need not wait for the server's
        import of the engine), or by the first wait for it where that thread failed."""
        if isinstance(self._pool, _Starting):
            self._pool.when_started(use)
        else:
            use(self._pool)

    def terminate(self) -> None:
        """Stop the workers, and the server they came from: what they used is then this
        process's children's (``time`` counts it), and nothing of the run goes on running."""
        self.pool.terminate()
        if self._start_method == "forkserver":
            from multiprocessing import forkserver

            stop = getattr(forkserver._forkserver, "_stop", None)  # (CPython's, since 3.8)
            if stop is not None:
                stop()


class EarlyPool:
    """A process pool that migrates ``jobs`` (path as shown, source) ahead of their plan,
    with ``guessers(workers)`` workers until the plan is known, then with all of them."""

    def __init__(
        self,
        jobs: Sequence[Tuple[str, bytes]],
        settings: Settings,
        workers: int,
        processes: Optional[Workers] = None,
    ) -> None:
        #: ``processes``: the run's workers, started already (``start_workers``), taken over
        self._workers = processes if processes is not None else start_workers(settings, workers)
        self._jobs = jobs
        # the biggest files first, so that no worker is left with a long one at the end
        self._order = biggest_first(jobs)
        # what is guessed ahead of the plan: first the files it is unlikely to give a part,
        # then the others smallest first (a tree of apex scripts alone keeps the workers busy;
        # a big one a part re-runs is rarely guessed, and after the plan the biggest go first)
        likely = {i for i in self._order if may_get_a_part(jobs[i][1])}
        unlikely = [i for i in self._order if i not in likely]
        self._guess_order = unlikely + [i for i in reversed(self._order) if i in likely]
        #: how many files of ``_guess_order`` were taken before the guessing stopped
        self._taken: Optional[int] = None
        guessed = [jobs[i] for i in self._guess_order]
        self._guessing: List[AsyncResult] = []

        def start_guessing(pool: Pool) -> None:
            self._guessing.extend(pool.apply_async(_guess_in_worker, (guessed,)) for _ in range(guessers(workers)))

        self._workers.when_started(start_guessing)

    @property
    def _pool(self) -> Pool:
        """The pool (waited for, where it is still starting: the guesses are then handed out)."""
        return self._workers.pool

    def __enter__(self) -> "EarlyPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self._workers.terminate()  # every result wanted is in; a superseded guess may still run

    def _stop_guessing(self) -> int:
        """Take no further file without a plan; how many of ``_guess_order`` were taken."""
        if self._taken is None:
            counter = self._workers.next_guess
            with counter.get_lock():
                self._taken = min(counter.value, len(self._guess_order))
                counter.value = len(self._guess_order)
        return self._taken

    def add_jobs(self, jobs: Sequence[Tuple[str, bytes]]) -> None:
        """Files the plan admits after the prefilter left them out (``pipeline._admitted_by_plan``):
        migrated with their part of the plan like the others, never ahead of it."""
        self._stop_guessing()
        start = len(self._jobs)
        self._jobs = list(self._jobs) + list(jobs)
        self._order = self._order + list(range(start, len(self._jobs)))

    def with_plan(self, file_plans: Sequence[Optional["FilePlan"]]) -> List["MigrationResult"]:
        """One result per job, each migrated with its part of the plan (``file_plans``, None
        where the plan gives the file none): a guess stands where the file has no part."""
        from .pipeline import _migrate_in_worker

        taken = set(self._guess_order[: self._stop_guessing()])
        wanted: Dict[int, AsyncResult] = {}

        def hand_out(i: int) -> None:
            path, source = self._jobs[i]
            wanted[i] = self._pool.apply_async(_migrate_in_worker, ((path, source, file_plans[i]),))

        for i in self._order:
            if i not in taken or file_plans[i] is not None:
                hand_out(i)
        guesses: Dict[int, "MigrationResult"] = {}
        for task in self._guessing:
            guesses.update((self._guess_order[k], result) for k, result in task.get())
        for i in self._order:
            if i not in wanted and i not in guesses:  # its guess failed: once more, to raise here
                hand_out(i)
        return [guesses[i] if i not in wanted else wanted[i].get() for i in range(len(self._jobs))]

    def migrate(self, jobs: Sequence[Any]) -> List["MigrationResult"]:
        """One result per job (a later pass: files migrated again), the biggest first."""
        from .pipeline import _migrate_in_worker

        handed = {i: self._pool.apply_async(_migrate_in_worker, (jobs[i],)) for i in biggest_first(jobs)}
        return [handed[i].get() for i in range(len(jobs))]


def guessers(workers: int) -> int:
    """How many of ``workers`` guess while the plan is built: one CPU is the planner's."""
    from .pipeline import default_workers

    return max(1, min(workers, default_workers() - 1))


#: in a worker process: the run's shared guess counter (``Workers.next_guess``)
_next_guess: Any = None


def _init_guessing_worker(settings: Settings, next_guess: Any) -> None:
    from .pipeline import _init_worker

    global _next_guess
    _next_guess = next_guess
    _init_worker(settings)


def _guess_in_worker(jobs: Sequence[Tuple[str, bytes]]) -> List[Tuple[int, "MigrationResult"]]:
    """Migrate ``jobs`` (the guess order) without a plan, each taking the next index from
    the shared counter, until none is left or the plan is known; (index, result) of each
    file done.  A file whose migration raised is left out: it is handed out again."""
    from .pipeline import _migrate_in_worker

    done: List[Tuple[int, "MigrationResult"]] = []
    while True:
        with _next_guess.get_lock():
            index = _next_guess.value
            if index >= len(jobs):
                return done
            _next_guess.value = index + 1
        try:
            done.append((index, _migrate_in_worker(jobs[index])))
        except Exception:  # noqa: BLE001 - the file is migrated again, where its error is raised
            continue


def start_workers(settings: Settings, workers: int) -> Workers:
    """``workers`` worker processes for a run under ``settings``, started while the caller
    goes on.  Where this process is the command itself (``run_as_the_command``), they are
    forked from one server process that imports the engine (LibCST, the rules: a third of a
    second) once, for all of them, and is started by a thread of its own (starting it waits
    for that import); elsewhere each is forked from this process and imports the engine as
    it starts."""
    context = fork_context()
    if run_as_the_command() and "forkserver" in multiprocessing.get_all_start_methods():
        server = multiprocessing.get_context("forkserver")
        server.set_forkserver_preload(["__main__", f"{__package__}.server_preload"])
        # (a lock made for the server's workers serves forked ones too, not the other way round)
        next_guess = server.Value("i", 0)
        initargs = (settings, next_guess)
        starting = _Starting(
            lambda: server.Pool(workers, initializer=_init_guessing_worker, initargs=initargs),
            lambda: context.Pool(workers, initializer=_init_guessing_worker, initargs=initargs),
        )
        return Workers(starting, next_guess)
    next_guess = context.Value("i", 0)
    initargs = (settings, next_guess)
    pool = context.Pool(workers, initializer=_init_guessing_worker, initargs=initargs)
    return Workers(pool, next_guess, context.get_start_method())


def fork_context() -> Any:
    """The multiprocessing context of workers forked from this process (where the system forks)."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and os.name == "posix" else None
    return multiprocessing.get_context(method)


def run_as_the_command() -> bool:
    """Whether this process runs the command line (``apexcompat-migrate``, ``python -m
    migrate``): a main module that does nothing when a worker process imports it.  A
    forkserver's workers import the main module (a script's top level runs again there
    unless guarded), so another program calling ``cli.main`` gets forked workers."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return spec.name == f"{__package__}.__main__"
    return os.path.basename(getattr(main, "__file__", None) or "") == "apexcompat-migrate"


class _Starting(threading.Thread):
    """Starts a pool (``start``) in the background; where that fails, ``started`` starts the
    fallback pool instead (forked workers).  What is to be done with the pool once started
    (``when_started``) is done by this thread where the pool starts here, else by
    ``started``."""

    def __init__(self, start: Callable[[], Pool], fallback: Callable[[], Pool]) -> None:
        super().__init__(name="apexcompat-migrate workers", daemon=True)
        self._start, self._fallback = start, fallback
        self._pool: Optional[Pool] = None
        self.start_method = "forkserver"
        self._lock = threading.Lock()
        #: what waits for the pool; None once this thread is done with it
        self._waiting: Optional[List[Callable[[Pool], None]]] = []
        #: what one of them raised in this thread (raised again by ``started``)
        self._error: Optional[BaseException] = None
        self.start()

    def run(self) -> None:
        try:
            self._pool = self._start()
        except Exception:  # noqa: BLE001 - no server process here: the forked workers do
            self._pool = None
            return
        self._run_waiting(self._pool)

    def _run_waiting(self, pool: Pool) -> None:
        while True:
            with self._lock:
                waiting = self._waiting
                if not waiting:
                    self._waiting = None
                    return
                use = waiting.pop(0)
            try:
                use(pool)
            except BaseException as exc:  # noqa: BLE001 - raised again where the pool is waited for
                self._error = self._error or exc

    def when_started(self, use: Callable[[Pool], None]) -> None:
        with self._lock:
            if self._waiting is not None:
                self._waiting.append(use)
                return
        use(self.started())

    def started(self) -> Pool:
        self.join()
        if self._pool is None:
            self._pool, self.start_method = self._fallback(), "fork"
            self._run_waiting(self._pool)
        if self._error is not None:
            raise self._error
        return self._pool


def may_get_a_part(source: bytes) -> bool:
    """Whether the plan may give the file of ``source`` a part: it names apex (or apexcompat)
    and amp.  Only an ordering hint: a file guessed wrongly is migrated again with its part."""
    return b"apex" in source and b"amp" in source


def biggest_first(jobs: Sequence[Any]) -> List[int]:
    """The indexes of ``jobs`` (path, source, ...) by decreasing source size."""
    return sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1]))
