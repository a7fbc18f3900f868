"""Old scripts Python 3 refuses (``.cuda(async=True)``, tabs mixed with spaces): repaired
where certain, migrated from the repaired text, and reported; anything else stays APX001."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from helpers_driver import run_cli
from migrate.legacy_syntax import repaired

ASYNC = b"import torch\nx = torch.ones(2)\ny = x.cuda(async=True); z = x.cuda(0, async=True)\n"
#: a block of 8 spaces beside tabs: the same columns at 8 a tab, inconsistent for Python 3
MIXED = b"def f(seed):\n        if seed:\n\t\tprint(seed)\n\t\treturn 1\n\treturn 0\n"


def test_async_keyword_of_a_torch_method_becomes_non_blocking():
    repair = repaired(ASYNC)
    assert repair is not None
    assert repair.source == ASYNC.replace(b"async=", b"non_blocking=")
    ast.parse(repair.source)
    (finding,) = repair.findings("t.py")  # one per line
    assert (finding.code, finding.line, finding.col, finding.fixed) == ("APX012", 3, 12, True)


def test_columns_after_a_repair_are_placed_in_the_text_as_read():
    repair = repaired(ASYNC)
    assert repair is not None
    # the second `.cuda` of the line: column 40 (0-based) as read, 47 once the first grew by 7
    assert repair.original_column(3, 47) == 40 and repair.original_column(3, 5) == 5


def test_mixed_indentation_is_expanded_as_python_2_read_it():
    repair = repaired(MIXED)
    assert repair is not None
    assert repair.source == b"def f(seed):\n        if seed:\n" + b" " * 16 + b"print(seed)\n" + b" " * 16 + b"return 1\n        return 0\n"
    (finding,) = repair.findings("t.py")  # the three neighbouring lines are one run
    assert finding.line == 3 and "3 statements from here" in finding.message


@pytest.mark.parametrize(
    "source",
    [
        b"import torch\nx = 1\n",  # parses: nothing to repair
        b"import apex\nrun(async=True)\n",  # not a torch method: its new name is unknown
        b"import apex\nx.cuda(async=True)\nprint 'done'\n",  # Python 2 beyond the repairs
        b'import apex\ns = """\n\tx.cuda(async=True)\n"""\ndef f(:\n    pass\n',  # a real syntax error
    ],
    ids=["parses", "other-call", "python2-print", "syntax-error"],
)
def test_no_repair_where_it_is_not_certain_or_not_enough(source):
    assert repaired(source) is None


def test_strings_keep_their_tabs():
    source = b'def f():\n        s = """\n\ttabbed text\n"""\n\treturn s\n'
    repair = repaired(source)
    assert repair is not None
    assert repair.source == source.replace(b"\n\treturn", b"\n        return")


def test_cli_migrates_the_repaired_script_and_reports_the_repair(tmp_path: Path):
    script = (
        b"import torch\nfrom apex import amp\n\n\n"
        b"def main(model, optimizer, batches):\n"
        b'    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n'
        b"    for x in batches:\n"
        b"        x = x.cuda(async=True)\n"
        b"        loss = model(x).sum()\n"
        b"        with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
        b"            scaled_loss.backward()\n"
        b"        optimizer.step()\n"
    )
    (tmp_path / "train.py").write_bytes(script)
    proc = run_cli(["--to", "native", "--allow-no-vcs", "--check", "--output-format", "json", "."], tmp_path, rules=None)
    assert proc.returncode == 1, proc.stderr
    assert (tmp_path / "train.py").read_bytes() == script  # --check writes nothing
    report = json.loads(proc.stdout)
    codes = {(f["code"], f["line"], f["col"]) for f in report["findings"]}
    assert ("APX012", 8, 20) in codes and not any(c == "APX001" for c, _, _ in codes)
    proc = run_cli(["--to", "native", "--allow-no-vcs", "."], tmp_path, rules=None)
    assert proc.returncode == 0, proc.stderr
    new = (tmp_path / "train.py").read_bytes()
    assert b"x.cuda(non_blocking=True)" in new and b"apex" not in new and b"GradScaler" in new
    compile(new, "train.py", "exec")
    again = run_cli(["--to", "native", "--allow-no-vcs", "--check", "."], tmp_path, rules=None)
    assert again.returncode == 0 and (tmp_path / "train.py").read_bytes() == new


def test_stdin_gets_the_repair_too(tmp_path: Path):
    source = b"import torch\nfrom apex import amp\nx = torch.ones(1).cuda(async=True)\n"
    proc = run_cli(["--to", "native", "--allow-no-vcs", "-"], tmp_path, stdin=source, rules=None)
    assert proc.returncode == 0, proc.stderr
    assert b"cuda(non_blocking=True)" in proc.stdout and b"apex" not in proc.stdout
