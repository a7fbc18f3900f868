"""Parse and byte hazards (spec section 3): what the tool does not rewrite keeps its exact
bytes, written files compile, a second run is a no-op, and bad files are reported and left
alone while the run goes on.  The driver is exercised with its toy rule (``toyrules``)."""

from __future__ import annotations

import os
import re
import stat
import sys

import pytest

from migrate.engine import migrate_source
from migrate.settings import Settings
from toyrules import BrokenRule, CrashRule, ToyRule, UnparsableRule

from helpers_driver import run_cli

RULES = [ToyRule]


def migrate(source: bytes, rules=RULES):
    return migrate_source(source, "hazard.py", Settings(), rules=rules)


def assert_good_rewrite(before: bytes, expected: bytes) -> None:
    result = migrate(before)
    assert result.parse_error is None and result.internal_error is None
    assert result.new == expected
    compile(result.new, "hazard.py", "exec", dont_inherit=True)
    again = migrate(result.new)
    assert again.new == result.new, "second run must be a no-op"


# (id, before, after): everything but the rewritten call and the dropped import is untouched
BYTE_HAZARDS = [
    (
        "crlf",
        b"from apex import amp\r\nimport os\r\n\r\ndef f(model):  \r\n    # keep me \r\n    model = amp.initialize(model)\r\n    return model\r\n",
        b"import os\r\n\r\ndef f(model):  \r\n    # keep me \r\n    model = model\r\n    return model\r\n",
    ),
    (
        "tabs",
        b"from apex import amp\n\nclass T:\n\tdef f(self, model):\n\t\tif model:\n\t\t\tmodel = amp.initialize(model)\n\t\treturn model\n",
        b"\nclass T:\n\tdef f(self, model):\n\t\tif model:\n\t\t\tmodel = model\n\t\treturn model\n",
    ),
    (
        "bom",
        b"\xef\xbb\xbffrom apex import amp\nmodel = amp.initialize(model)  # trailing\n",
        b"\xef\xbb\xbfmodel = model  # trailing\n",
    ),
    (
        "latin1-cookie",
        b"# -*- coding: latin-1 -*-\nfrom apex import amp\nname = '\xe9t\xe9'\nmodel = amp.initialize(model)\n",
        b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\nmodel = model\n",
    ),
    (
        "no-final-newline",
        b"from apex import amp\nx = 1\nmodel = amp.initialize(model)",
        b"x = 1\nmodel = model",
    ),
    (
        "continuations-and-compound",
        b"from apex import amp\nimport os\ntotal = 1 + \\\n    2\nif total: a = 1; b = 2\nmodel = amp.initialize(\n    model,   # the net\n    opt_level='O2',\n)\n",
        b"import os\ntotal = 1 + \\\n    2\nif total: a = 1; b = 2\nmodel = model\n",
    ),
    (
        "cr-only-newlines",  # LibCST alone would drop the final lone "\r"
        b"from apex import amp\rx = 1\rmodel = amp.initialize(model)\r",
        b"x = 1\rmodel = model\r",
    ),
    (
        "form-feed-and-semicolons",
        b"from apex import amp\n\x0c\ndef g(): pass\nmodel = amp.initialize(model); y = 2\n",
        b"\x0c\ndef g(): pass\nmodel = model; y = 2\n",
    ),
]


@pytest.mark.parametrize("before, after", [c[1:] for c in BYTE_HAZARDS], ids=[c[0] for c in BYTE_HAZARDS])
def test_bytes_outside_the_edit_are_kept(before, after):
    assert_good_rewrite(before, after)


@pytest.mark.parametrize("before", [c[2] for c in BYTE_HAZARDS], ids=[c[0] for c in BYTE_HAZARDS])
def test_files_without_work_come_back_identical(before):
    result = migrate(before)
    assert result.new == before and not result.changed and result.findings == []


def test_remaining_todo_reported_once_and_again_on_the_second_run():
    source = b"from apex import amp\nmodel = amp.initialize(model)\nclip(amp.master_params(opt))\n"
    first = migrate(source)
    manual = [f for f in first.findings if f.needs_manual_work()]
    assert [(f.code, f.line, f.col) for f in manual] == [("APX991", 3, 6)]
    second = migrate(first.new)
    assert second.new == first.new
    assert [(f.code, f.line, f.col) for f in second.findings if f.needs_manual_work()] == [("APX991", 3, 6)]


@pytest.mark.parametrize(
    "source, line, col",
    [
        (b"import apex\nx = 1\ny.cuda(async=True)\n", 3, None),
        (b"import apex\n\n\nprint 'hello'\n", 4, 1),
        (b"import apex\ndef f(:\n    pass\n", 2, None),
    ],
    ids=["async-keyword", "python2-print", "broken-def"],
)
def test_syntax_errors_are_reported_with_position_and_left_alone(source, line, col):
    result = migrate(source)
    assert result.new == source
    error = result.parse_error
    assert error is not None and error.code == "APX001" and error.line == line
    if col is not None:
        assert error.col == col
    assert "could not parse" in error.message


@pytest.mark.parametrize(
    "source, hint",
    [
        (b"import apex\nx = 1\ny.cuda(async=True)\n", "write `non_blocking=True`"),
        (b"import apex\n\n\nprint 'hello'\n", "Python 2 syntax"),
    ],
    ids=["async-keyword", "python2-print"],
)
def test_a_syntax_error_of_old_python_says_what_to_change(source, hint):
    error = migrate(source).parse_error
    assert error is not None and hint in error.message


def test_parses_but_does_not_compile_is_left_alone():
    # LibCST accepts this; CPython refuses it: report, never write
    source = b"import apex\nfrom apex import amp\nreturn amp.initialize(model)\n"
    result = migrate(source)
    assert result.new == source and result.parse_error is not None
    assert result.parse_error.code == "APX001" and result.parse_error.line == 3


def test_rule_output_that_does_not_compile_is_refused_and_names_the_rule():
    result = migrate(b"apex_break()\nx = 1\n", rules=[ToyRule, BrokenRule])
    assert result.new == result.old
    assert result.internal_error is not None and result.internal_error.code == "APX002"
    assert "BrokenRule" in result.internal_error.message and "APX992" in result.internal_error.message


def test_rule_output_that_does_not_parse_is_contained_to_its_file():
    result = migrate(b'import apex\nx = "apex_garble"\n', rules=[ToyRule, UnparsableRule])
    assert result.new == result.old
    # the file's last change is not parsed again, only compiled: the compile error names it
    assert result.internal_error is not None
    assert "rule UnparsableRule produced code that does not compile" in result.internal_error.message


def test_rule_crash_is_contained_to_its_file():
    result = migrate(b"from apex import amp\nmodel = amp.initialize(m)  # apex_crash\n", rules=[ToyRule, CrashRule])
    assert result.new == result.old
    assert result.internal_error is not None and "CrashRule raised RuntimeError: boom" in result.internal_error.message
    assert not any(f.fixed for f in result.findings), "nothing was rewritten, so nothing is reported fixed"


def test_bad_encoding_is_reported():
    result = migrate(b"# -*- coding: no-such-codec -*-\nimport apex\n")
    assert result.new == result.old and result.parse_error.code == "APX007"
    result = migrate(b"import apex\nx = '\xff\xfe'\n")
    assert result.new == result.old and result.parse_error.code == "APX007"


# --- whole-file hazards through the command line -----------------------------------------

GOOD = b"from apex import amp\nmodel = amp.initialize(model)\n"
GOOD_AFTER = b"model = model\n"


def test_syntax_error_does_not_stop_the_run(tmp_path):
    (tmp_path / "a_bad.py").write_bytes(b"import apex\nprint 'x'\n")
    (tmp_path / "b_good.py").write_bytes(GOOD)
    proc = run_cli(["--allow-no-vcs", "."], tmp_path)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "a_bad.py:2:1: APX001 could not parse" in out
    assert (tmp_path / "a_bad.py").read_bytes() == b"import apex\nprint 'x'\n"
    assert (tmp_path / "b_good.py").read_bytes() == GOOD_AFTER
    assert out.strip().splitlines()[-1].startswith("1 file rewritten, 1 file could not be parsed")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_read_only_file_is_reported_not_written(tmp_path):
    target = tmp_path / "ro.py"
    target.write_bytes(GOOD)
    target.chmod(0o444)
    try:
        proc = run_cli(["--allow-no-vcs", "ro.py"], tmp_path)
        assert proc.returncode == 1
        assert "ro.py: APX004 file is read-only" in proc.stdout.decode()
        assert target.read_bytes() == GOOD
        assert stat.S_IMODE(target.stat().st_mode) == 0o444
    finally:
        target.chmod(0o644)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loop_is_not_followed(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "sub" / "m.py").write_bytes(GOOD)
    os.symlink("..", pkg / "sub" / "up")  # pkg/sub/up -> pkg: a loop
    os.symlink(str(pkg / "sub" / "m.py"), pkg / "alias.py")  # the same file twice
    proc = run_cli(["--allow-no-vcs", "pkg"], tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "pkg/sub/up: APX009 symbolic link loop not followed" in out
    assert "1 file rewritten" in out
    assert (pkg / "sub" / "m.py").read_bytes() == GOOD_AFTER
    assert os.path.islink(pkg / "alias.py"), "a symlinked file is written through, not replaced"


def test_vendored_apex_tree_is_skipped(tmp_path):
    vendored = tmp_path / "third_party" / "apex"
    (vendored / "amp").mkdir(parents=True)
    (vendored / "__init__.py").write_bytes(b"from . import amp\n")
    (vendored / "amp" / "_amp_state.py").write_bytes(b"from apex import amp\nmodel = amp.initialize(model)\n")
    (tmp_path / "train.py").write_bytes(GOOD)
    proc = run_cli(["--allow-no-vcs", "."], tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out  # the copy is left for the user to delete
    assert "third_party/apex/: APX006 a copy of the apex package: apex itself" in out
    assert (vendored / "amp" / "_amp_state.py").read_bytes() == b"from apex import amp\nmodel = amp.initialize(model)\n"
    assert (tmp_path / "train.py").read_bytes() == GOOD_AFTER


def _five_megabytes(header: bytes) -> bytes:
    row = b"    (%d, 'x' * 3, 0.5),  # padding row\n"
    rows = b"".join(row % i for i in range(5 * 1024 * 1024 // len(row % 0) + 1))
    big = header + b"TABLE = [\n" + rows + b"]\n"
    assert len(big) >= 5 * 1024 * 1024
    return big


def test_five_megabyte_file_without_apex_code_is_skipped(tmp_path):
    """A big generated file that mentions apex only in a comment is left byte-identical
    (without spending minutes in LibCST), and the small file next to it is still migrated."""
    big = _five_megabytes(b"# generated for the apex benchmark\n")
    (tmp_path / "big.py").write_bytes(big)
    (tmp_path / "small.py").write_bytes(GOOD)
    proc = run_cli(["--check", "."], tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out  # small.py would change
    assert (tmp_path / "big.py").read_bytes() == big
    assert "big.py" not in out
    assert "1 file would be rewritten" in out


def test_five_megabyte_file_importing_apex_is_reported(tmp_path):
    big = _five_megabytes(b"from apex import amp\n")
    (tmp_path / "big.py").write_bytes(big)
    proc = run_cli(["--allow-no-vcs", "."], tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert re.search(r"big.py: APX010 file is 5\.\d MB, above --max-file-size 1 MB, and imports apex", out)
    assert (tmp_path / "big.py").read_bytes() == big


def test_max_file_size_is_the_limit(tmp_path):
    source = GOOD + b"x = 1\n" * 400  # about 2.5 kB
    (tmp_path / "m.py").write_bytes(source)
    proc = run_cli(["--check", "--max-file-size", "0.001", "m.py"], tmp_path)
    assert proc.returncode == 1 and "m.py: APX010" in proc.stdout.decode()
    proc = run_cli(["--check", "--max-file-size", "0.01", "m.py"], tmp_path)
    assert proc.returncode == 1 and "1 file would be rewritten" in proc.stdout.decode()
    assert "APX010" not in proc.stdout.decode()


def test_unreadable_file_is_reported_and_the_run_goes_on(tmp_path, monkeypatch):
    import builtins

    import migrate.cli

    (tmp_path / "locked.py").write_bytes(GOOD)
    (tmp_path / "ok.py").write_bytes(GOOD)

    def fake_open(file, mode="r", *args, **kwargs):
        if str(file).endswith("locked.py"):
            raise PermissionError(13, "Permission denied")
        return builtins.open(file, mode, *args, **kwargs)

    monkeypatch.setattr(migrate.cli, "open", fake_open, raising=False)
    proc = run_cli(["--allow-no-vcs", "."], tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert "locked.py: APX003 could not read the file: Permission denied" in out
    assert (tmp_path / "ok.py").read_bytes() == GOOD_AFTER
    assert "1 file rewritten, 1 file could not be read" in out
