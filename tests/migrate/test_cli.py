"""The command line end to end, in subprocesses and temporary folders: modes, the dirty-tree
guard, ``--diff`` that ``git apply`` reproduces, exit codes, output formats, stdin, and
``python -m migrate`` behaving like ``apexcompat-migrate``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers_driver import git, make_repo, run_cli, toy_env

INIT = b"from apex import amp\nmodel = amp.initialize(model)\n"
INIT_AFTER = b"model = model\n"
MANUAL = b"from apex import amp\nclip(amp.master_params(opt))\n"
PLAIN = b"import os\nprint(os.sep)\n"
CRLF = b"from apex import amp\r\nimport os\r\nmodel = amp.initialize(model)  \r\n"
NO_EOL = b"from apex import amp\nx = 1\nmodel = amp.initialize(model)"


def write_tree(root: Path, files) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def test_in_place_rewrite_and_exit_zero(tmp_path):
    write_tree(tmp_path, {"a.py": INIT, "b.py": PLAIN})
    proc = run_cli(["--allow-no-vcs", "."], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "a.py").read_bytes() == INIT_AFTER
    assert (tmp_path / "b.py").read_bytes() == PLAIN
    lines = proc.stdout.decode().splitlines()
    assert lines == ["a.py:2:9: APX990 [*] amp.initialize dropped", "1 file rewritten (2 files checked)"]
    assert proc.stderr == b""
    # second run: nothing to do
    again = run_cli(["--allow-no-vcs", "."], tmp_path)
    assert again.returncode == 0 and again.stdout.decode().splitlines() == ["0 files rewritten (2 files checked)"]


def test_no_progress_bar_or_other_noise_when_stderr_is_not_a_terminal(tmp_path):
    write_tree(tmp_path, {"a.py": INIT, "b.py": PLAIN})
    proc = run_cli(["--allow-no-vcs", "."], tmp_path, in_process=False)
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.decode().splitlines()[-1] == "1 file rewritten (2 files checked)"


def test_check_writes_nothing_and_exits_one(tmp_path):
    write_tree(tmp_path, {"a.py": INIT})
    proc = run_cli(["--check", "."], tmp_path)
    assert proc.returncode == 1
    assert (tmp_path / "a.py").read_bytes() == INIT
    assert proc.stdout.decode().splitlines()[-1] == "1 file would be rewritten (1 file checked)"
    write_tree(tmp_path, {"a.py": PLAIN})
    assert run_cli(["--check", "."], tmp_path).returncode == 0


def test_manual_work_exits_one_even_after_writing(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL, "a.py": INIT})
    proc = run_cli(["--allow-no-vcs", "."], tmp_path)
    assert proc.returncode == 1
    out = proc.stdout.decode().splitlines()
    assert "m.py:2:6: APX991 replace amp.master_params(opt) by the optimizer's parameters" in out
    assert out[-1] == "1 file rewritten, 1 site needs manual work (see above) (2 files checked)"
    # the remaining TODO is reported again, once, on the next run
    again = run_cli(["--allow-no-vcs", "."], tmp_path).stdout.decode().splitlines()
    assert [line for line in again if "APX991" in line] == ["m.py:2:6: APX991 replace amp.master_params(opt) by the optimizer's parameters"]


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "no paths given"),
        (["missing.py"], "no such file or directory: missing.py"),
        (["--target-torch", "two", "."], "--target-torch takes a torch version like 2.4, not 'two' (supported: 2.2 to 2.15)"),
        (["--target-torch", "1.9", "."], "--target-torch 1.9 is older than the oldest torch the migrated code can target (supported: 2.2 to 2.15)"),
        (["."], "not inside a git work tree, so an in-place rewrite could not be undone"),
        (["--explain", "APX999"], "--explain: unknown rule code 'APX999'"),
        (["--select", "APX777", "."], "unknown rule code or prefix 'APX777'"),
        (["-j", "0", "."], "--jobs must be at least 1"),
        (["-", "x.py"], "cannot be combined"),
        (["--to", "jax", "."], "invalid choice"),
    ],
)
def test_usage_errors_exit_two(tmp_path, args, message):
    (tmp_path / "x.py").write_bytes(PLAIN)
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr.decode()


def test_internal_error_exits_two_and_says_what_to_do(tmp_path):
    write_tree(tmp_path, {"c.py": b"apex_crash = 1\n", "a.py": INIT})
    proc = run_cli(["--allow-no-vcs", "."], tmp_path)
    assert proc.returncode == 2
    assert "c.py:1:1: APX002 internal error, file left unchanged: rule CrashRule raised" in proc.stdout.decode()
    assert "--ignore the codes" in proc.stderr.decode()
    assert (tmp_path / "a.py").read_bytes() == INIT_AFTER, "the other files are still migrated"


def test_check_exits_one_when_work_is_left_beside_an_internal_error(tmp_path):
    write_tree(tmp_path, {"c.py": b"apex_crash = 1\n", "a.py": INIT})
    proc = run_cli(["--check", "."], tmp_path)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "c.py:1:1: APX002" in out and "1 file would be rewritten" in out


def test_select_and_ignore(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL + b"model = amp.initialize(model)\n"})
    proc = run_cli(["--check", "--select", "APX991", "."], tmp_path)
    out = proc.stdout.decode()
    assert "APX991" in out and "APX990" not in out
    proc = run_cli(["--check", "--ignore", "APX991", "."], tmp_path)
    out = proc.stdout.decode()
    assert "APX991" not in out and "1 file would be rewritten" in out


def _diff_apply_roundtrip(root: Path, files) -> None:
    make_repo(root, files)
    proc = run_cli(["--diff", "."], root)
    assert proc.returncode == 1
    patch = proc.stdout
    assert patch.startswith(b"--- a/")
    assert all((root / name).read_bytes() == data for name, data in files.items()), "--diff writes nothing"
    assert b"\n+++ b/" in patch and b"/tmp" not in patch, "relative a/ b/ paths"
    (root / "p.diff").write_bytes(patch)
    applied = subprocess.run(["git", "apply", "--whitespace=nowarn", "p.diff"], cwd=root, stderr=subprocess.PIPE, env=toy_env(None))
    assert applied.returncode == 0, applied.stderr.decode()
    (root / "p.diff").unlink()
    by_patch = {name: (root / name).read_bytes() for name in files}
    git(root, "checkout", "-q", "--", ".")
    assert run_cli(["."], root).returncode == 0
    in_place = {name: (root / name).read_bytes() for name in files}
    assert by_patch == in_place
    assert any(by_patch[name] != files[name] for name in files)


def test_diff_applies_with_git_apply_and_matches_in_place(tmp_path):
    _diff_apply_roundtrip(
        tmp_path / "repo",
        {"a.py": INIT, "pkg/crlf.py": CRLF, "pkg/no_eol.py": NO_EOL, "plain.py": PLAIN},
    )


def test_dirty_guard(tmp_path):
    root = make_repo(tmp_path / "repo", {"clean.py": INIT, "dirty.py": PLAIN})
    (root / "dirty.py").write_bytes(INIT)  # uncommitted change
    (root / "new.py").write_bytes(INIT)  # untracked: not recoverable from git either
    proc = run_cli(["."], root)
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert "dirty.py: APX005 file has uncommitted changes" in out
    assert "new.py: APX005" in out
    assert (root / "clean.py").read_bytes() == INIT_AFTER
    assert (root / "dirty.py").read_bytes() == INIT and (root / "new.py").read_bytes() == INIT
    assert "1 file rewritten" in out and "2 files not written (uncommitted changes" in out
    proc = run_cli(["--allow-dirty", "."], root)
    assert proc.returncode == 0
    assert (root / "dirty.py").read_bytes() == INIT_AFTER and (root / "new.py").read_bytes() == INIT_AFTER


def test_outside_git_writes_only_with_allow_no_vcs(tmp_path):
    write_tree(tmp_path, {"a.py": INIT})
    refused = run_cli(["a.py"], tmp_path)
    assert refused.returncode == 2 and refused.stdout == b""
    assert "a.py: not inside a git work tree" in refused.stderr.decode() and "--allow-no-vcs" in refused.stderr.decode()
    assert (tmp_path / "a.py").read_bytes() == INIT, "nothing written"
    for look in (["--check", "a.py"], ["--diff", "a.py"], ["-"]):  # nothing written in place: no git needed
        assert run_cli(look, tmp_path, stdin=INIT).returncode in (0, 1)
    assert run_cli(["--allow-no-vcs", "a.py"], tmp_path).returncode == 0
    assert (tmp_path / "a.py").read_bytes() == INIT_AFTER


def test_gitignore_venv_and_exclude(tmp_path):
    root = make_repo(
        tmp_path / "repo",
        {
            ".gitignore": b"generated/\n*_gen.py\n",
            "keep.py": INIT,
            "sub/.gitignore": b"local.py\n",
        },
    )
    (root / "tracked_gen.py").write_bytes(INIT)  # tracked files are never ignored
    git(root, "add", "-f", "tracked_gen.py")
    git(root, "commit", "-q", "-m", "force-add a file that matches .gitignore")
    write_tree(
        root,
        {
            "generated/x.py": INIT,
            "other_gen.py": INIT,
            "sub/local.py": INIT,
            "env/pyvenv.cfg": b"home = /usr\n",
            "env/lib/m.py": INIT,
            "node_modules/m.py": INIT,
            "build/m.py": INIT,
            "skipme/m.py": INIT,
        },
    )
    proc = run_cli(["--check", "--exclude", "skipme", "."], root)
    out = proc.stdout.decode()
    assert out.splitlines()[-1] == "2 files would be rewritten (2 files checked)", out
    assert "keep.py" in out and "tracked_gen.py" in out
    # a file named explicitly is always taken
    proc = run_cli(["--check", "generated/x.py"], root)
    assert "1 file would be rewritten" in proc.stdout.decode()


def test_json_output(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL, "a.py": INIT, "bad.py": b"import apex\nprint 'x'\n"})
    proc = run_cli(["--check", "--output-format", "json", "."], tmp_path)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    codes = [(f["path"], f["code"], f["fixed"]) for f in doc["findings"]]
    assert codes == [("a.py", "APX990", True), ("bad.py", "APX001", False), ("m.py", "APX991", False)]
    assert doc["summary"]["files_changed"] == 1 and doc["summary"]["manual_sites"] == 1
    assert doc["summary"]["parse_failures"] == 1 and doc["summary"]["exit_status"] == 1


def test_github_output(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL, "a.py": INIT})
    proc = run_cli(["--check", "--output-format", "github", "."], tmp_path)
    lines = proc.stdout.decode().splitlines()
    assert "::warning file=a.py,line=2,col=9::APX990 [*] amp.initialize dropped" in lines
    assert "::error file=m.py,line=2,col=6::APX991 replace amp.master_params(opt) by the optimizer's parameters" in lines


def test_quiet_prints_only_what_needs_action(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL, "a.py": INIT})
    proc = run_cli(["--quiet", "--allow-no-vcs", "."], tmp_path)
    assert proc.stdout.decode().splitlines() == ["m.py:2:6: APX991 replace amp.master_params(opt) by the optimizer's parameters"]
    assert proc.returncode == 1


def test_stdin_mode(tmp_path):
    proc = run_cli(["-", "--stdin-filename", "train.py"], tmp_path, stdin=INIT, in_process=False)
    assert proc.returncode == 0
    assert proc.stdout == INIT_AFTER
    assert "train.py:2:9: APX990" in proc.stderr.decode()
    proc = run_cli(["--diff", "-", "--stdin-filename", "train.py"], tmp_path, stdin=CRLF)
    assert proc.stdout.startswith(b"--- a/train.py\n+++ b/train.py\n") and b"\r\n" in proc.stdout
    proc = run_cli(["--check", "-"], tmp_path, stdin=INIT)
    assert proc.returncode == 1 and proc.stdout == b""
    proc = run_cli(["-"], tmp_path, stdin=PLAIN)
    assert proc.returncode == 0 and proc.stdout == PLAIN


def test_jobs_give_the_same_result_in_the_same_order(tmp_path):
    # sizes vary (trailing comment lines): the pool starts the biggest files first
    files = {f"pkg{i % 3}/m{i:02d}.py": (MANUAL if i % 4 == 0 else INIT) + b"# pad\n" * (i % 7) for i in range(24)}
    write_tree(tmp_path / "one", files)
    write_tree(tmp_path / "two", files)
    one = run_cli(["-j", "1", "--allow-no-vcs", "."], tmp_path / "one")
    two = run_cli(["-j", "2", "--allow-no-vcs", "."], tmp_path / "two")
    assert one.stdout == two.stdout and one.returncode == two.returncode == 1
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_module_and_console_script_behave_the_same(tmp_path):
    script = shutil.which("apexcompat-migrate")
    if script is None:
        pytest.skip("console script not installed")
    write_tree(tmp_path, {"m.py": MANUAL, "a.py": INIT, "bad.py": b"import apex\nprint 'x'\n"})
    for args in (["--diff", "."], ["--bogus"]):
        via_module = run_cli(args, tmp_path, in_process=False)
        via_script = subprocess.run([script, *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=toy_env())
        assert via_module.returncode == via_script.returncode
        assert via_module.stdout == via_script.stdout
        assert via_module.stderr.replace(b"python -m migrate", b"apexcompat-migrate") == via_script.stderr


def test_never_imports_torch_and_loads_libcst_only_when_needed(tmp_path):
    write_tree(tmp_path, {"plain.py": PLAIN, "more/x.py": PLAIN})
    probe = (
        "import sys; from migrate.cli import main; rc = main(sys.argv[1:]);"
        "print('torch' in sys.modules, 'libcst' in sys.modules); sys.exit(rc)"
    )
    proc = subprocess.run([sys.executable, "-c", probe, "--check", "."], cwd=tmp_path, stdout=subprocess.PIPE, env=toy_env(None))
    assert proc.stdout.decode().splitlines()[-1] == "False False"
    write_tree(tmp_path, {"uses.py": b"import torch\nwith torch.cuda.amp.autocast():\n    pass\nimport apex\n"})
    proc = subprocess.run([sys.executable, "-c", probe, "--check", "."], cwd=tmp_path, stdout=subprocess.PIPE, env=toy_env(None))
    assert proc.stdout.decode().splitlines()[-1].startswith("False")


# --- with the real rules ----------------------------------------------------------------

REAL_SCRIPT = b'''"""A small apex training script."""
import argparse

import torch
import torch.nn as nn
from apex import amp


def train(model, optimizer, loader):
    for data, target in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(data), target)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O1")
    args = parser.parse_args()
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
    train(model, optimizer, loader)


if __name__ == "__main__":
    main()
'''


def test_real_rules_in_place_diff_and_second_run(tmp_path):
    files = {"train.py": REAL_SCRIPT, "crlf/train.py": REAL_SCRIPT.replace(b"\n", b"\r\n"), "README.md": b"apex\n"}
    root = make_repo(tmp_path / "repo", files)
    patch = run_cli(["--diff", "."], root, rules=None)
    assert patch.returncode == 1 and patch.stdout.count(b"+++ b/") == 2
    proc = run_cli(["."], root, rules=None)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert out.splitlines()[-1] == "2 files rewritten (2 files checked)"
    for name in ("train.py", "crlf/train.py"):
        text = (root / name).read_bytes()
        compile(text, name, "exec", dont_inherit=True)
        assert b"import apex" not in text and b"from apex" not in text and b"scaler.scale(loss).backward()" in text
    assert (root / "crlf/train.py").read_bytes().count(b"\n") == (root / "crlf/train.py").read_bytes().count(b"\r\n")
    again = run_cli(["--check", "."], root, rules=None)
    assert again.returncode == 0 and again.stdout.decode().splitlines()[-1] == "0 files would be rewritten (2 files checked)"
    in_place = {name: (root / name).read_bytes() for name in files}
    git(root, "checkout", "-q", "--", ".")
    (root / "p.diff").write_bytes(patch.stdout)
    subprocess.run(["git", "apply", "p.diff"], cwd=root, check=True, env=toy_env(None))
    (root / "p.diff").unlink()
    assert {name: (root / name).read_bytes() for name in files} == in_place
