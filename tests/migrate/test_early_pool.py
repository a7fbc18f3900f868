"""The workers that migrate files ahead of the cross-file plan (``early_pool``): as many
guess as there are CPUs besides the planner's, a file guessed before the plan gave it a
part is migrated again with its part, and the results are those of migrating each file
after the plan."""

from __future__ import annotations

import time

import pytest

from migrate import early_pool, pipeline
from migrate.engine import migrate_source
from migrate.repo_plan import FilePlan
from migrate.settings import Settings

SETTINGS = Settings(target="native")

SCRIPT = (
    "import torch\nfrom apex import amp\n\n\n"
    "def main(model, optimizer, data):\n"
    "    model, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n"
    "    for x, y in data:\n"
    "        loss = model(x, y)\n"
    "        with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
    "            scaled_loss.backward()\n"
    "        optimizer.step()\n"
)
#: a part of the plan that changes the file's result: its initialize keeps the shim
REFUSED = FilePlan(refusal="its launcher hands amp on")


def _jobs(count: int) -> list:
    # different sizes, so that the guess order and the order after the plan differ
    return [(f"train{k}.py", (SCRIPT + "\n# padding\n" * k).encode()) for k in range(count)]


def _alone(job, plan=None):
    return migrate_source(job[1], job[0], SETTINGS, plan=plan)


@pytest.mark.parametrize("cpus, workers, expected", [(1, 2, 1), (2, 2, 1), (3, 2, 2), (8, 2, 2), (8, 4, 4), (4, 8, 3)])
def test_one_cpu_is_left_to_the_planner(monkeypatch, cpus: int, workers: int, expected: int) -> None:
    monkeypatch.setattr(pipeline, "default_workers", lambda: cpus)
    assert early_pool.guessers(workers) == expected


def test_a_file_guessed_before_its_part_was_known_is_migrated_again_with_it() -> None:
    jobs = _jobs(6)
    with early_pool.EarlyPool(jobs, SETTINGS, 2) as pool:
        deadline = time.monotonic() + 120
        while pool._workers.next_guess.value < len(jobs) and time.monotonic() < deadline:
            time.sleep(0.05)  # no plan yet: the guessing goes on through every file
        assert pool._workers.next_guess.value == len(jobs)
        plans = [None, REFUSED, None, None, REFUSED, None]
        results = pool.with_plan(plans)
    for job, plan, result in zip(jobs, plans, results):
        expected = _alone(job, plan)
        assert (result.path, result.new, result.findings) == (expected.path, expected.new, expected.findings)
    assert results[1].new != _alone(jobs[1]).new  # the part counted: not the guess


def test_no_file_is_guessed_once_the_plan_is_known() -> None:
    jobs = _jobs(12)
    plans = [REFUSED if k % 3 == 0 else None for k in range(len(jobs))]
    with early_pool.EarlyPool(jobs, SETTINGS, 2) as pool:
        results = pool.with_plan(plans)
        taken = pool._stop_guessing()
        assert pool._workers.next_guess.value == len(jobs)  # the rest is for the plan's round
        assert pool._stop_guessing() == taken  # stopping again changes nothing
    for job, plan, result in zip(jobs, plans, results):
        assert result.new == _alone(job, plan).new


def test_the_command_s_workers_come_from_a_server_that_loaded_the_engine_once(tmp_path) -> None:
    """Run as the command (``python -m migrate`` here), the workers are forked from one
    server process that imported the engine for all of them; the answer is the one without
    workers."""
    import subprocess
    import sys

    for k in range(8):
        (tmp_path / f"train{k}.py").write_text(SCRIPT)
    probe = (
        "import runpy, sys\nfrom migrate import early_pool\nstart = early_pool.start_workers\n"
        "def recording(*args):\n    workers = start(*args)\n"
        "    print('workers:', workers.start_method, flush=True)\n    return workers\n"
        "early_pool.start_workers = recording\n"
        "sys.argv = ['apexcompat-migrate', '--check', '-j', JOBS, '.']\n"
        "runpy.run_module('migrate', run_name='__main__', alter_sys=True)\n"  # ends the process
    )

    def run(jobs: str) -> list:
        done = subprocess.run([sys.executable, "-c", probe.replace("JOBS", repr(jobs))], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stderr
        return done.stdout.splitlines()

    two, one = run("2"), run("1")
    assert two[0] == "workers: forkserver" and not any(line.startswith("workers:") for line in one)
    assert two[1:] == one


@pytest.mark.parametrize(
    "spec, path, ours",
    [("migrate.__main__", None, True), (None, "/venv/bin/apexcompat-migrate", True), (None, "/home/me/train.py", False),
     ("pytest.__main__", None, False), (None, None, False)],
)
def test_only_the_command_s_own_main_module_is_imported_again_by_a_server_s_workers(
    monkeypatch, spec, path, ours: bool
) -> None:
    import sys
    import types

    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name=spec) if spec else None  # type: ignore[assignment]
    if path:
        main.__file__ = path
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert early_pool.run_as_the_command() is ours


class _SlowStart:
    """A stand-in for starting the server's pool: returns ``pool`` (or raises) once released."""

    def __init__(self, pool: object = None) -> None:
        import threading

        self.release = threading.Event()
        self.pool = pool

    def __call__(self) -> object:
        assert self.release.wait(30)
        if self.pool is None:
            raise OSError("no server here")
        return self.pool


def test_what_waits_for_the_pool_is_done_by_the_thread_starting_it_and_the_caller_goes_on() -> None:
    import threading

    start = _SlowStart(pool="server pool")
    used: list = []
    workers = early_pool.Workers(early_pool._Starting(start, lambda: "forked pool"), next_guess=None)
    workers.when_started(lambda pool: used.append((pool, threading.current_thread().name)))
    assert used == []  # the caller was not held up by the start
    start.release.set()
    assert workers.pool == "server pool" and workers.start_method == "forkserver"
    assert used == [("server pool", "apexcompat-migrate workers")]
    workers.when_started(lambda pool: used.append((pool, threading.current_thread().name)))  # started: at once
    assert used[1] == ("server pool", threading.current_thread().name)


def test_where_the_server_fails_the_fallback_pool_gets_what_waited_and_an_error_there_is_raised() -> None:
    start = _SlowStart()
    used: list = []
    starting = early_pool._Starting(start, lambda: "forked pool")
    starting.when_started(used.append)
    start.release.set()
    assert starting.started() == "forked pool" and starting.start_method == "fork"
    assert used == ["forked pool"]

    failing = _SlowStart(pool="server pool")
    starting = early_pool._Starting(failing, lambda: "forked pool")
    starting.when_started(lambda pool: 1 / 0)
    failing.release.set()
    with pytest.raises(ZeroDivisionError):
        starting.started()


#: the module whose function prints LibCST's parentheses
PARENTHESES = (
    "__import__('libcst._nodes.expression', fromlist=['_'])"
    ".__dict__['_BaseParenthesizedNode']._parenthesize.__module__"
)
#: the docstring ``dataclasses`` wrote for one of LibCST's undocumented matcher classes
MATCHER_DOC = "__import__('libcst.matchers', fromlist=['_']).Name.__doc__.split(':')[0]"

_SERVER_SCRIPT = f"""
PARENTHESES = {PARENTHESES!r}
MATCHER_DOC = {MATCHER_DOC!r}
import multiprocessing, sys
from multiprocessing import forkserver

if __name__ == "__main__":
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(sys.argv[1:])
    pool = context.Pool(1)
    assert pool.apply(abs, (-2,)) == 2
    print("parentheses from", pool.apply(eval, (PARENTHESES,)), flush=True)
    print("matcher doc", pool.apply(eval, (MATCHER_DOC,)), flush=True)
    pool.terminate()
    forkserver._forkserver._stop()
    print("stopped", flush=True)
"""


@pytest.mark.parametrize("preload, torn_down", [(["teardown_probe"], True), (["teardown_probe", "migrate.server_preload"], False)])
def test_the_workers_server_ends_without_the_interpreter_s_teardown(tmp_path, preload, torn_down: bool) -> None:
    import multiprocessing
    import os
    import subprocess
    import sys

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this system")
    # an exit handler the server registers before this package's preload: it runs at a
    # teardown, and writes to the output the server shares with the command
    (tmp_path / "teardown_probe.py").write_text("import atexit\natexit.register(print, 'server torn down', flush=True)\n")
    (tmp_path / "serve.py").write_text(_SERVER_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    done = subprocess.run(
        [sys.executable, str(tmp_path / "serve.py"), *preload], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert ("server torn down" in done.stdout) is torn_down and "stopped" in done.stdout
    # and the workers forked from this package's server print parentheses without generators
    printer = "libcst._nodes.expression" if torn_down else "migrate.rules._printing"
    assert f"parentheses from {printer}\n" in done.stdout
    # ... and have LibCST's matcher classes without the signature docstrings of dataclasses
    assert f"matcher doc {'Name(value' if torn_down else 'Name()'}\n" in done.stdout


def test_dataclasses_made_while_unsigned_get_the_name_alone_as_a_missing_docstring() -> None:
    import dataclasses
    import inspect
    from typing import List, Union

    from migrate.server_preload import unsigned_dataclass_docstrings

    def make(name: str, doc: str = ""):
        namespace = {
            "__annotations__": {"value": Union[int, str], "more": List[int]},
            "more": dataclasses.field(default_factory=list),
        }
        if doc:
            namespace["__doc__"] = doc
        return dataclasses.dataclass(frozen=True)(type(name, (), namespace))

    with unsigned_dataclass_docstrings():
        bare, documented = make("Bare"), make("Documented", "Says what it is.")
        assert dataclasses.inspect is not inspect and dataclasses.inspect.getmodule(make) is inspect.getmodule(make)
    assert (bare.__doc__, documented.__doc__) == ("Bare()", "Says what it is.")
    assert bare(1) == bare(1) and bare("a", [2]).more == [2]  # the class itself is as usual
    assert dataclasses.inspect is inspect
    assert make("Later").__doc__.startswith("Later(value: Union[int, str]")
    with pytest.raises(KeyError):
        with unsigned_dataclass_docstrings():
            raise KeyError
    assert dataclasses.inspect is inspect


def test_imported_elsewhere_the_server_preload_leaves_the_process_exit_as_it_is() -> None:
    import subprocess
    import sys

    code = (
        "import atexit; atexit.register(print, 'torn down')\nimport migrate.server_preload\n"
        f"print({PARENTHESES})\nprint({MATCHER_DOC})\nraise SystemExit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.stdout, done.returncode) == ("libcst._nodes.expression\nName(value\ntorn down\n", 3)
