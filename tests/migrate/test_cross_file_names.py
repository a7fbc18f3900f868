"""The cross-file plan names other files relative to their repository, the same on every run:
a TODO comment written into a file neither depends on the folder the tool was run from nor
names a path of the machine, and a second run (where a file the first one migrated is no
longer indexed) writes the same comment again, so it changes nothing."""

from __future__ import annotations

from pathlib import Path

from helpers_driver import git, make_repo, run_cli

from migrate.rules._amp_repo_examples import CLIP_CALLED_ELSEWHERE, CLIP_STEP, CLIP_STEP_SPLIT
from migrate.rules.base import example_files

#: a script of its own apex.amp instance (migrated native on the first run) that also calls a
#: method named like the fitter's clipping helper, and sorts after tools/lr_sweep.py
NATIVE_SCRIPT = '''\
import torch
from apex import amp


def main(net, opt, batches):
    net, opt = amp.initialize(net, opt, opt_level="O1")
    for x, y in batches:
        pred = net(x)
        loss = torch.nn.functional.mse_loss(pred.clip(-1, 1), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
'''


def _files() -> dict:
    files = dict(example_files(CLIP_CALLED_ELSEWHERE.replace(CLIP_STEP, CLIP_STEP_SPLIT)))
    files["train.py"] = NATIVE_SCRIPT
    return {name: text.encode() for name, text in files.items()}


def _migrate(repo: Path, cwd: Path, target: str) -> None:
    proc = run_cli(["--to", "native", "--quiet", target], cwd, rules=None)
    assert proc.returncode in (0, 1), proc.stderr.decode()


def test_todo_names_files_relative_to_the_repository_wherever_the_tool_runs(tmp_path: Path) -> None:
    outputs = []
    for name, cwd_of, target_of in [
        ("inside", lambda repo: repo, lambda repo: "."),
        ("outside", lambda repo: repo.parent, lambda repo: str(repo.resolve())),
    ]:
        repo = make_repo(tmp_path / name, _files())
        _migrate(repo, cwd_of(repo), target_of(repo))
        outputs.append((repo / "fitter.py").read_bytes())
    assert outputs[0] == outputs[1]
    assert b"tools/lr_sweep.py (in sweep()) calls a method of that name" in outputs[0]
    assert str(tmp_path).encode() not in outputs[0]


def test_a_second_run_names_the_same_caller_and_changes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", _files())
    _migrate(repo, repo, ".")
    assert b"from apex" not in (repo / "train.py").read_bytes()  # now outside the index
    git(repo, "commit", "-qam", "first run")
    _migrate(repo, repo, ".")
    assert git(repo, "status", "--porcelain") == ""


def test_the_todo_names_the_caller_by_its_definition_not_a_line_that_moves(tmp_path: Path) -> None:
    """Lines a migration (or an edit) adds above the call in the other file do not change the
    TODO of this one: it names the file and the function holding the call."""
    outputs = []
    for name, head in [("as-is", b""), ("moved", b"# a header\n# of two lines\n")]:
        files = _files()
        files["tools/lr_sweep.py"] = head + files["tools/lr_sweep.py"]
        repo = make_repo(tmp_path / name, files)
        _migrate(repo, repo, ".")
        outputs.append((repo / "fitter.py").read_bytes())
    assert b"TODO(apexcompat)" in outputs[0]
    assert outputs[0] == outputs[1]


def test_repository_names_prefer_the_git_work_tree_then_the_named_folder(tmp_path: Path) -> None:
    from migrate.walk import repository_names

    repo = make_repo(tmp_path / "repo", {"pkg/a.py": b"x = 1\n"})
    loose = tmp_path / "loose"
    (loose / "sub").mkdir(parents=True)
    files = [
        (str(repo / "pkg" / "a.py"), "shown-a"),
        (str(loose / "sub" / "b.py"), "shown-b"),
        ("/elsewhere/c.py", "shown-c"),
    ]
    names = repository_names(files, [str(repo / "pkg"), str(loose)])
    assert names == {files[0][0]: "pkg/a.py", files[1][0]: "sub/b.py", "/elsewhere/c.py": "shown-c"}
