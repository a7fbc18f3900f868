"""Shared test fixtures: golden-trace discovery and a clean amp state per test."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
#: the repositories, scripts and fake apex the e2e tests migrate and run: fixture code, never
#: tests, even where a file is named like one (r94's maskrcnn-style ``test_net.py``)
collect_ignore_glob = [f"migrate/e2e/{folder}/*" for folder in ("repos", "scripts", "targets", "fake_apex")]

# every migration the tests run (the CLI's subprocesses too) checks the engine's statement-wise
# parse against a parse of the whole text (``migrate.reparse.VERIFY_ENV``; named here, not
# imported: the torch-matrix environments have no libcst)
os.environ.setdefault("APEXCOMPAT_MIGRATE_VERIFY_REPARSE", "1")


def golden_dirs() -> List[Path]:
    """Where golden traces live, most authoritative first.

    ``$APEXCOMPAT_GOLDEN_DIR`` (if set), then ``../shared/golden`` beside the checkout (it may
    hold more traces than the copy), then the copy in ``tests/golden``.
    """
    dirs = []
    env = os.environ.get("APEXCOMPAT_GOLDEN_DIR")
    if env:
        dirs.append(Path(env))
    dirs.append(REPO_ROOT.parent / "shared" / "golden")
    dirs.append(TESTS_DIR / "golden")
    return [d for d in dirs if d.is_dir()]


def golden_files(group: str) -> Dict[str, Path]:
    """``{scenario name: path}`` for every trace of ``group`` (scaler, loops, initialize,
    api), the union over all golden directories."""
    found: Dict[str, Path] = {}
    for base in golden_dirs():
        for path in sorted((base / group).glob("*.json")):
            found.setdefault(path.stem, path)
    return dict(sorted(found.items()))


def load_golden(group: str, name: str) -> dict:
    path = golden_files(group)[name]
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def golden_params(group: str, names=None):
    """pytest parametrisation over a group's traces (ids are scenario names)."""
    files = golden_files(group)
    if names is not None:
        files = {k: v for k, v in files.items() if k in names}
    return pytest.mark.parametrize("golden_path", list(files.values()), ids=list(files.keys()))


@pytest.fixture(autouse=True)
def _fresh_amp_state():
    """Every test starts and ends with amp in its just-imported state (apex ran each
    scenario in a fresh interpreter; O1 must not leak autocast into the next test)."""
    from apexcompat.amp._amp_state import reset_state

    reset_state()
    yield
    reset_state()


#: fixture scopes built once per module or wider: a worker that runs one test using such a
#: fixture builds it, so its tests should all run on that worker
_SHARED_SCOPES = frozenset({"module", "package", "session"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    """For pytest-xdist's ``--dist loadgroup`` (pyproject's addopts): the tests of a module that
    use a module-scoped fixture (each e2e module builds one, migrating and training a whole
    corpus for a minute or more) go to one worker together, which builds it once; every other
    test goes to whichever worker is free.  Without xdist the mark does nothing."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if any(d.scope in _SHARED_SCOPES for defs in info.name2fixturedefs.values() for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
