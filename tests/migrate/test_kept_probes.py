"""Which apex availability probes stay because another file still needs apex (kept_probes)."""

from migrate.kept_probes import first_needing_apex, folded_probes, needed_apex_import, probe_lines, reruns

PROBE = b"""\
import warnings

try:
    from apex.normalization import FusedLayerNorm  # noqa: F401
    HAS_APEX = True
except ImportError:
    HAS_APEX = False
    warnings.warn("no apex")

FUSED = HAS_APEX
"""

USED = b"""\
try:
    from apex.normalization import FusedLayerNorm
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

norm = FusedLayerNorm(4)
"""

AMP_PROBE = b"""\
try:
    from apex import amp  # noqa: F401
    _has_apex = True
except ImportError:
    _has_apex = False
"""

KEPT_KERNEL = b"from apex.optimizers import FusedLAMB\n\nopt = FusedLAMB([])\n"


def test_an_unread_apex_import_with_a_flag_is_a_probe():
    assert probe_lines(PROBE) == (3,)


def test_an_import_whose_name_is_read_is_no_probe():
    assert probe_lines(USED) == ()


def test_a_probe_of_apex_amp_alone_is_no_probe():
    assert probe_lines(AMP_PROBE) == ()


def test_a_flag_nothing_reads_makes_no_probe_unless_another_file_takes_it():
    unread = PROBE.replace(b"\nFUSED = HAS_APEX\n", b"")
    assert probe_lines(unread) == ()
    assert probe_lines(unread, lambda name: name == "HAS_APEX") == (3,)
    taken = ("config.py", unread, b"HAS_APEX = True\n", [3])
    kernel = ("layers.py", KEPT_KERNEL, KEPT_KERNEL, [])
    assert reruns([taken, kernel]) == {}
    assert reruns([taken, kernel, ("train.py", b"from config import HAS_APEX\n", b"", [])]) == {0: ((3,), "layers.py:1")}


def test_a_try_without_a_flag_is_no_probe():
    assert probe_lines(b"try:\n    import apex\nexcept ImportError:\n    pass\n") == ()


def test_a_read_import_needs_apex_an_unread_one_does_not():
    assert needed_apex_import(KEPT_KERNEL) == 1
    assert needed_apex_import(PROBE) is None
    assert needed_apex_import(b"from apex.contrib.xentropy import *\n") == 1
    assert needed_apex_import(b"import apex_C\napex_C.flatten([])\n") == 1
    assert needed_apex_import(b"def broken(:\n") is None


def test_first_needing_apex_names_the_file_and_line():
    assert first_needing_apex([("a.py", b"x = 1\n"), ("b.py", b"\n" + KEPT_KERNEL)]) == "b.py:2"
    assert first_needing_apex([("a.py", PROBE)]) is None


def test_only_folded_probes_are_rerun():
    assert folded_probes(PROBE, [3]) == (3,)
    assert folded_probes(PROBE, [7]) == ()
    assert folded_probes(PROBE, []) == ()


def test_reruns_only_while_some_file_still_needs_apex():
    folded = ("config.py", PROBE, b"HAS_APEX = True\n", [3])
    assert reruns([folded, ("train.py", b"", b"import torch\n", [])]) == {}
    assert reruns([folded, ("layers.py", KEPT_KERNEL, KEPT_KERNEL, [])]) == {0: ((3,), "layers.py:1")}
