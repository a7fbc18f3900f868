"""The collector's policy during a run (``migrate.collector``): each file's parsed tree is
frozen while its rules read it, garbage left in cycles before it is collected first, the
run unfreezes everything at its end, and a program calling the engine itself keeps its own
collector state; the engine drops each tree's metadata as soon as it is done with it."""

from __future__ import annotations

import gc
import weakref

import pytest
from amp_scripts import MAIN_AND_TRAIN

import migrate.engine as engine
from migrate.collector import THRESHOLDS, fewer_collections, kept_for_the_file
from migrate.engine import migrate_source
from migrate.settings import Settings

SETTINGS = Settings(target="native")

#: a realistic apex.amp script: several rules change it, one tree version each
AMP_SCRIPT = MAIN_AND_TRAIN.encode()

#: apex's DDP beside a function without apex, whose body the DDP rule stubs where it
#: resolves scopes (a wrapper of the rule's own)
DDP_SCRIPT = (
    "import torch\nfrom apex.parallel import DistributedDataParallel as DDP\n\n\n"
    "def wrap(model):\n"
    "    return DDP(model.cuda(), delay_allreduce=True)\n\n\n"
    "def unrelated(values):\n"
    "    return [v * 2 for v in values]\n"
).encode()


class _Node:
    """Something the collector tracks, that a weak reference can watch."""

    def __init__(self) -> None:
        self.other: object = None


@pytest.fixture(autouse=True)
def _no_frozen_objects():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_outside_a_run_the_engine_leaves_the_collector_alone() -> None:
    thresholds = gc.get_threshold()
    result = migrate_source(AMP_SCRIPT, "train.py", SETTINGS)
    assert result.changed
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds


def test_inside_a_run_a_files_tree_is_frozen_until_the_run_ends() -> None:
    thresholds = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == THRESHOLDS
        result = migrate_source(AMP_SCRIPT, "train.py", SETTINGS)
        assert result.changed
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds


def test_cyclic_garbage_made_before_a_tree_is_collected_not_frozen() -> None:
    first, second = _Node(), _Node()
    first.other, second.other = second, first  # a cycle: only the collector frees it
    watched = weakref.ref(first)
    del first, second
    with fewer_collections():
        kept = kept_for_the_file(_Node)
        assert watched() is None
        assert gc.is_tracked(kept)
        assert gc.get_freeze_count() > 0


def test_a_frozen_tree_is_still_freed_when_nothing_refers_to_it() -> None:
    with fewer_collections():
        watched = weakref.ref(kept_for_the_file(_Node))
        assert watched() is None


def test_every_metadata_wrapper_of_a_file_is_released_when_the_file_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list = []
    real_init = engine.LeanMetadataWrapper.__init__

    def recording(self, *args, **kwargs) -> None:
        real_init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(engine.LeanMetadataWrapper, "__init__", recording)
    for script in (AMP_SCRIPT, DDP_SCRIPT):
        assert migrate_source(script, "train.py", SETTINGS).changed
    # a wrapper per version of the text, and the DDP rule's own over the stubbed module
    assert any("def unrelated(values): ..." in wrapper.module.code for wrapper in made)
    assert all(not wrapper._metadata for wrapper in made)
