"""What the tool reports on real-world shapes (the testers' reports realworld-A/B): TODO
comments reported again on every later run, once per comment; TODOs that say what to write
in torch calls only; comments kept on rewritten statements; ``--diff`` paths outside the
current directory."""

from __future__ import annotations

import collections
from typing import Counter, List, Tuple

import pytest

from migrate.engine import migrate_source
from migrate.rules import ALL_RULES
from migrate.rules._amp_rule import AmpRule, known_todo
from migrate.rules.base import TODO_PREFIX, Example
from migrate.settings import Settings


def todo_comments(text: str) -> List[Tuple[int, str]]:
    """(line of the statement below, message) of every TODO comment, continuation lines joined."""
    found: List[Tuple[int, List[str]]] = []
    current = None
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith(TODO_PREFIX):
            current = [stripped[len(TODO_PREFIX) :]]
            found.append((number, current))
        elif current is not None and stripped.startswith("#   "):
            current.append(stripped[4:])
        else:
            current = None
    result = []
    for number, parts in found:
        below = number
        while below < len(lines) and lines[below].lstrip().startswith("#"):
            below += 1
        result.append((below + 1, " ".join(parts)))
    return result


def todo_findings(result, messages) -> Counter:
    return collections.Counter(
        (f.code, f.severity, f.fixed, f.message) for f in result.all_findings() if f.message in messages
    )


def todo_examples() -> List[Tuple[str, Example]]:
    """Every documented example whose output has a TODO comment (as documented or as the
    rules write it now)."""
    found = []
    for rule in ALL_RULES:
        for example in rule.EXAMPLES:
            if example.after is not None and TODO_PREFIX.strip() in example.after:
                found.append((f"{rule.__name__}:{example.id}", example))
    return found


TODO_EXAMPLES = todo_examples()


# --- P-rerun / P-todo-count: every TODO comment is reported again, once per comment -------


TWO_SITES = """\
from apex import amp


class Trainer:
    def train_step(self, loss, i):
        if (i + 1) % 2 == 0:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
        else:
            with amp.scale_loss(loss, self.optimizer, delay_unscale=True) as scaled_loss:
                scaled_loss.backward()
"""


def test_second_run_reports_each_of_several_identical_todos_at_its_own_line():
    first = migrate_source(TWO_SITES.encode(), "t.py", Settings())
    assert [f.code for f in first.all_findings() if f.needs_manual_work()] == ["APX220", "APX220"]
    text = first.new.decode()
    comments = todo_comments(text)
    assert len(comments) == 2 and comments[0][1] == comments[1][1]
    second = migrate_source(first.new, "t.py", Settings())
    assert second.new == first.new
    reported = [(f.line, f.code, f.severity) for f in second.all_findings() if f.needs_manual_work()]
    assert reported == [(line, "APX220", "error") for line, _ in comments]
    third = migrate_source(second.new, "t.py", Settings())
    assert sorted(third.all_findings()) == sorted(second.all_findings())


@pytest.mark.parametrize("example", [e for _, e in TODO_EXAMPLES], ids=[i for i, _ in TODO_EXAMPLES])
def test_second_run_reports_every_todo_with_its_code_and_severity(example: Example):
    first = migrate_source(example.before.encode(), "example.py", example.settings)
    text = first.new.decode()
    comments = todo_comments(text)
    messages = {m for _, m in comments}
    if not comments:
        pytest.skip("the rules no longer write this example's TODO (test_rule_examples says whether that is right)")
    written = todo_findings(first, messages)
    assert set(m for *_, m in written) == messages, "every TODO written is reported when written"
    second = migrate_source(first.new, "example.py", example.settings)
    assert second.new == first.new
    again = todo_findings(second, messages)
    assert again == written, "the second run reports the same TODOs with the same code and severity"
    assert sum(again.values()) == len(comments), "once per comment"
    # each at the statement the comment sits on
    lines = collections.Counter((m, line) for line, m in comments)
    assert collections.Counter((f.message, f.line) for f in second.all_findings() if f.message in messages) == lines


def test_known_todos_cover_what_the_amp_rules_write():
    """The table is checked against what the amp rules write: every TODO comment of every
    documented example that an amp rule wrote maps back to the code, severity and fixed
    flag of the finding reported with it."""
    amp_codes = {c for rule in ALL_RULES if issubclass(rule, AmpRule) for c in rule.CODES}
    seen = set()
    for _, example in TODO_EXAMPLES:
        first = migrate_source(example.before.encode(), "example.py", example.settings)
        messages = {m for _, m in todo_comments(first.new.decode())}
        for code, severity, fixed, message in todo_findings(first, messages):
            if code in amp_codes:
                assert known_todo(message) == (code, severity, fixed), (
                    f"{message!r} is written with {(code, severity, fixed)}: give it that entry in "
                    "migrate/rules/_amp_rule.py KNOWN_TODOS, or in a KNOWN table of its rule"
                )
                seen.add(code)
    assert {"APX204", "APX205", "APX206", "APX210", "APX220", "APX323", "APX503", "APX505"} <= seen


# --- P-helper-todo: the register_*_function TODO says what to write with torch only -------


@pytest.mark.parametrize("kind, dtype", [("float", "float"), ("half", "half")])
def test_register_function_todo_names_only_torch_apis(kind, dtype):
    source = f'import torch\nfrom apex import amp\n\namp.register_{kind}_function(torch, "inverse")\n\n\ndef f(w):\n    return torch.inverse(w)\n'
    result = migrate_source(source.encode(), "t.py", Settings())
    text = result.new.decode()
    [(_, message)] = todo_comments(text)
    assert "autocast_function" not in text
    assert f'`with torch.autocast("cuda", enabled=False): out = torch.inverse(x.{dtype}())`' in message
    [finding] = [f for f in result.all_findings() if f.code == "APX503"]
    assert finding.message == message and finding.needs_manual_work()


# --- P-comments: end-of-line comments of the statements scale_loss rewrites are kept -------


def test_end_of_line_comments_of_rewritten_scale_loss_lines_are_kept():
    source = """\
from apex import amp


def step(model, optimizer, x):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    loss = model(x).sum()
    with amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward()  # one line
    with amp.scale_loss(loss, optimizer) as scaled_loss:  # header only
        scaled_loss.backward()
    with amp.scale_loss(loss, optimizer) as scaled_loss:  # kept too
        scaled_loss.backward()  # the backward
        print(scaled_loss)  # its own
    optimizer.step()
"""
    result = migrate_source(source.encode(), "t.py", Settings())
    text = result.new.decode()
    assert "scaler.scale(loss).backward()  # one line\n" in text
    assert "scaler.scale(loss).backward()  # header only\n" in text
    assert "scaled_loss = scaler.scale(loss)  # kept too\n" in text
    assert "scaled_loss.backward()  # the backward\n" in text and "print(scaled_loss)  # its own\n" in text
    assert migrate_source(result.new, "t.py", Settings()).new == result.new


# --- P12: --diff of a file outside the current directory is git-apply-able ----------------


def test_diff_of_a_file_above_the_current_directory_applies_with_git(tmp_path):
    from helpers_driver import git, make_repo, run_cli

    original = b"from apex import amp\nmodel = amp.initialize(model)\n"
    root = make_repo(tmp_path / "repo", {"r2.py": original, "sub/keep.txt": b"x\n"})
    proc = run_cli(["--diff", "../r2.py"], root / "sub")
    assert proc.returncode == 1, proc.stderr
    diff = proc.stdout
    assert diff.startswith(b"--- a/r2.py\n+++ b/r2.py\n"), diff
    assert str(root).encode() in proc.stderr  # where to apply it
    (tmp_path / "d.patch").write_bytes(diff)
    git(root, "apply", str(tmp_path / "d.patch"))
    assert (root / "r2.py").read_bytes() != original
    # files below the current directory keep their plain relative paths
    git(root, "checkout", "-q", "--", ".")
    proc = run_cli(["--diff", "r2.py"], root)
    assert proc.stdout.startswith(b"--- a/r2.py\n") and str(root).encode() not in proc.stderr


def test_diff_paths_without_git_use_the_common_directory(tmp_path):
    from migrate.cli import diff_paths

    (tmp_path / "a" / "b").mkdir(parents=True)
    base, names = diff_paths([str(tmp_path / "x.py"), "c/y.py"], cwd=str(tmp_path / "a"))
    assert base == str(tmp_path) and names == ["x.py", "a/c/y.py"]
    assert diff_paths(["c/y.py"], cwd=str(tmp_path / "a")) == (str(tmp_path / "a"), ["c/y.py"])


# --- realworld-B P1: amp state saved in a file without amp.initialize -----------------------


TRAIN = b"""\
import torch
from apex import amp
from utils.checkpoint import save_checkpoint


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    save_checkpoint(model, optimizer, "ckpt.pt")
"""
CHECKPOINT = b"""\
import torch
from apex import amp


def save_checkpoint(model, optimizer, path):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "amp": amp.state_dict()}, path)


def load_checkpoint(path):
    amp.load_state_dict(torch.load(path)["amp"])
"""


def test_checkpoint_file_without_initialize_gets_the_scaler_of_the_launcher(tmp_path):
    """The launcher passes its GradScaler to save_checkpoint; load_checkpoint, which no file
    of the repository calls, takes it as a required parameter too (a warning: a call elsewhere
    must pass it).  Neither file keeps apex.amp, and nothing is left half migrated (the
    launcher native while the helpers still need apex.amp's state)."""
    from helpers_driver import run_cli

    root = tmp_path / "repo"
    (root / "utils").mkdir(parents=True)
    (root / "train.py").write_bytes(TRAIN)
    (root / "utils" / "checkpoint.py").write_bytes(CHECKPOINT)
    proc = run_cli(["--allow-no-vcs", "."], root, rules=None)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    train = (root / "train.py").read_text()
    assert "torch.amp.GradScaler" in train and 'save_checkpoint(model, optimizer, "ckpt.pt", scaler=scaler)' in train
    text = (root / "utils" / "checkpoint.py").read_text()
    compile(text, "checkpoint.py", "exec")
    assert "def save_checkpoint(model, optimizer, path, scaler):" in text and '"amp": scaler.state_dict()' in text
    assert 'def load_checkpoint(path, scaler):\n    load_scaler_state(scaler, torch.load(path)["amp"])' in text
    assert "utils/checkpoint.py:10:1: APX213" in out and "no file of the repository calls it" in out
    assert "APX403" not in out and "apexcompat" not in train + text
    again = run_cli(["--check", "."], root, rules=None)
    assert again.returncode == 0, again.stdout.decode()


def test_apex_imported_by_name_is_not_a_clean_check(tmp_path):
    """A trainer that takes apex.amp from ``importlib.import_module`` (no import statement)
    once passed ``--check`` with "0 files would be rewritten" while still needing apex: now
    the check fails with APX107, the write points it at the shim, and a second run reports
    the same manual work and writes nothing."""
    from helpers_driver import make_repo, run_cli

    source = (
        b"import importlib\n\n\nclass Trainer:\n    def __init__(self, model, optimizer):\n"
        b"        self.amp = importlib.import_module('apex.amp')\n"
        b"        self.model, self.optimizer = self.amp.initialize(model, optimizer, opt_level='O1')\n"
    )
    root = make_repo(tmp_path / "repo", {"trainer.py": source})
    check = run_cli(["--check", "."], root, rules=None)
    assert check.returncode == 1
    assert "trainer.py:6:20: APX107" in check.stdout.decode()
    first = run_cli(["--allow-dirty", "."], root, rules=None)
    assert first.returncode == 1
    written = (root / "trainer.py").read_bytes()
    assert b"        self.amp = importlib.import_module('apexcompat.amp')\n" in written
    second = run_cli(["--allow-dirty", "."], root, rules=None)
    assert (root / "trainer.py").read_bytes() == written
    assert second.returncode == 1

    def messages(proc):
        return [line.split(": ", 1)[1] for line in proc.stdout.decode().splitlines() if ": APX" in line]

    assert messages(second) == messages(first) == messages(check)
