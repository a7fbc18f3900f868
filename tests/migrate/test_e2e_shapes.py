"""Generated training-loop shapes, migrated --to native and trained beside their originals.

A fixed set of seeds of tests/migrate/e2e/shapes.py (see its docstring): each shape either
comes out native and trains as the original through apexcompat.amp (same logged gradient
norms, same final parameters within fp16 rounding, a resumed run's same final loss scale) with
a second migration changing nothing, or stays on apexcompat.amp.

``SEEDS`` are shapes with every choice: the first forty cover them; the others came out native
with a new choice of session 27 or once failed: two optimizers of one amp.initialize whose
master parameters are spread into one list in the branch of the backward (84, 111, 117: TODOs
and a clip of scaled gradients in a native output), O2 with a batchnorm and delayed unscales
(236: apex drops the float32 parameters' first gradients at its lazy init; the script zeroes
them first), helpers given the optimizer that read amp.master_params (40, 70: each got an
unscale_ and the second raised; 40 restarts from apex's checkpoint too), a restart (81), a
second initialize in the run (258), loss ids (88). ``LEGACY_SEEDS`` are drawn with the choices
of session 26 (``extended=False``), the shapes that failed then: the parameters named in each
branch and clipped after the if (11, 41: the unscale_ went before the backward), clips on every
micro-step with a delayed unscale (51, 110) or written once from the fp16 and fp32 branches of
an if (65, 91), a clip inside the amp.scale_loss block and a gradient read after it (39: a
second unscale_ raised).
``python tests/migrate/e2e/shapes.py --seeds N`` checks more.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "e2e"))
import shapes  # noqa: E402

SEEDS = sorted(set(range(40)) | {40, 70, 81, 84, 88, 111, 117, 236, 258})
LEGACY_SEEDS = [11, 39, 41, 51, 65, 91, 110]


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    return shapes.check(SEEDS, tmp_path_factory.mktemp("shapes"))


@pytest.fixture(scope="module")
def checked_legacy(tmp_path_factory):
    return shapes.check(LEGACY_SEEDS, tmp_path_factory.mktemp("legacy-shapes"), extended=False)


@pytest.mark.parametrize("seed", SEEDS)
def test_shape_trains_as_the_original(checked, seed):
    verdicts, _native = checked
    assert verdicts[seed] is None, f"seed {seed} ({shapes.choose(seed).summary()}): {verdicts[seed]}"


@pytest.mark.parametrize("seed", LEGACY_SEEDS)
def test_legacy_shape_trains_as_the_original(checked_legacy, seed):
    verdicts, _native = checked_legacy
    assert verdicts[seed] is None, f"seed {seed} ({shapes.choose(seed, False).summary()}): {verdicts[seed]}"


def test_most_shapes_come_out_native(checked):
    """The check says something only where the tool migrates: at least half of these shapes
    come out native (the others are refused on purpose: O2 clips of the float16 model's
    gradients, clips on every micro-step, amp's state saved where no GradScaler reaches, a
    second amp.initialize in one function)."""
    _verdicts, native = checked
    assert len(native) >= 0.5 * len(SEEDS), f"only {len(native)}/{len(SEEDS)} shapes came out native"
