"""The command line's conventions, end to end in temporary folders: ``--check``/``--diff`` name
each file that would change and mark fixable findings ``[*]``, exit codes, ``--explain``,
``[tool.apexcompat-migrate]`` configuration, suppression comments, the refusal to rewrite
outside git, ``--target-torch`` validation, colour, and the pre-commit hook."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers_driver import REPO_ROOT, make_repo, run_cli, toy_env
from test_cli_report import FakeTTY
from migrate.color import Palette, wants_color
from migrate.suppress import suppressions_in

INIT = b"from apex import amp\nmodel = amp.initialize(model)\n"
INIT_AFTER = b"model = model\n"
MANUAL = b"from apex import amp\nclip(amp.master_params(opt))\n"
PLAIN = b"import os\nprint(os.sep)\n"
MANUAL_LINE = "m.py:2:6: APX991 replace amp.master_params(opt) by the optimizer's parameters"


def write_tree(root: Path, files) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def lines(proc, stream: str = "stdout"):
    return getattr(proc, stream).decode().splitlines()


# --- --check / --diff name the files; [*] marks fixes; exit codes -------------------------


def test_check_names_every_file_that_would_change_and_marks_fixes(tmp_path):
    write_tree(tmp_path, {"a.py": INIT, "pkg/b.py": INIT, "m.py": MANUAL, "plain.py": PLAIN})
    proc = run_cli(["--check", "."], tmp_path, in_process=False)
    assert proc.returncode == 1
    assert lines(proc) == [
        "a.py:2:9: APX990 [*] amp.initialize dropped",
        MANUAL_LINE,
        "pkg/b.py:2:9: APX990 [*] amp.initialize dropped",
        "would rewrite a.py",
        "would rewrite pkg/b.py",
        "2 files would be rewritten, 1 site needs manual work (see above) (4 files checked)",
    ]
    assert proc.stderr == b""
    assert all(data == (tmp_path / name).read_bytes() for name, data in {"a.py": INIT, "m.py": MANUAL}.items())


def test_quiet_check_still_names_the_files(tmp_path):
    write_tree(tmp_path, {"a.py": INIT, "m.py": MANUAL})
    proc = run_cli(["--check", "-q", "."], tmp_path)
    assert proc.returncode == 1
    assert lines(proc) == [MANUAL_LINE, "would rewrite a.py"]
    write_tree(tmp_path, {"m.py": PLAIN})
    proc = run_cli(["--check", "-q", "."], tmp_path)
    assert (proc.returncode, lines(proc)) == (1, ["would rewrite a.py"])


def test_diff_names_the_files_on_stderr_and_keeps_stdout_a_patch(tmp_path):
    write_tree(tmp_path, {"a.py": INIT, "b.py": INIT, "plain.py": PLAIN})
    proc = run_cli(["--diff", "-q", "."], tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith(b"--- a/a.py\n") and b"would rewrite" not in proc.stdout
    assert lines(proc, "stderr") == ["would rewrite a.py", "would rewrite b.py"]


def test_json_lists_the_changed_files(tmp_path):
    write_tree(tmp_path, {"a.py": INIT, "plain.py": PLAIN})
    summary = json.loads(run_cli(["--check", "--output-format", "json", "."], tmp_path).stdout)["summary"]
    assert summary["changed_files"] == ["a.py"] and summary["suppressed"] == 0


@pytest.mark.parametrize(
    "files, args, status",
    [
        ({"plain.py": PLAIN}, ["--check", "."], 0),  # nothing to do
        ({"a.py": INIT_AFTER}, ["--check", "."], 0),
        ({"a.py": INIT}, ["--check", "."], 1),  # changes pending
        ({"a.py": INIT}, ["--diff", "."], 1),
        ({"m.py": MANUAL}, ["--check", "."], 1),  # manual work left
        ({"m.py": MANUAL}, ["--allow-no-vcs", "."], 1),
        ({"a.py": INIT}, ["--allow-no-vcs", "."], 0),  # rewritten, nothing left
        ({"a.py": INIT}, ["--check", "--bogus", "."], 2),  # usage error
        ({"a.py": INIT}, ["."], 2),  # in place outside git
        ({"c.py": b"apex_crash = 1\n"}, ["--check", "."], 2),  # internal error
    ],
)
def test_exit_codes(tmp_path, files, args, status):
    write_tree(tmp_path, files)
    assert run_cli(args, tmp_path).returncode == status


# --- --explain -------------------------------------------------------------------------------


def test_explain_manual_work_code_shows_the_documented_example_and_what_to_do():
    from migrate.explain import _examples

    proc = run_cli(["--explain", "APX220"], REPO_ROOT, rules=None, in_process=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert out.startswith("APX220: apex.amp cannot be migrated natively here; the file keeps working through apexcompat.amp\n")
    assert "Rule family InitializeRule: " in out
    (_, example), *_ = _examples("APX220")
    assert textwrap.indent(example.before.rstrip("\n"), "    ") in out, "the documented example, as the docs show it"
    assert textwrap.indent(example.after.rstrip("\n"), "    ") in out
    assert "  by hand: the file keeps working through `apexcompat.amp`" in out
    assert "  the tool says: " in out and "# apexcompat: ignore[APX220]" in out


def test_explain_fixed_code_and_driver_code():
    out = run_cli(["--explain", "apx301"], REPO_ROOT, rules=None).stdout.decode()
    assert out.startswith("APX301: amp.scale_loss rewritten to scaler.scale(loss)\n")
    assert "  after:\n" in out and "scaler.scale(loss)" in out
    assert "Nothing to do by hand: the tool rewrites these sites itself (shown with [*])." in out
    out = run_cli(["--explain", "APX005"], REPO_ROOT, rules=None).stdout.decode()
    assert "--allow-dirty" in out and "Reported by the driver itself" in out


def test_explain_unknown_code_is_a_usage_error():
    proc = run_cli(["--explain", "APX2200"], REPO_ROOT, rules=None, in_process=False)
    assert proc.returncode == 2 and proc.stdout == b""
    assert "--explain: unknown rule code 'APX2200' (did you mean APX220" in proc.stderr.decode()


# --- configuration -----------------------------------------------------------------------


def pyproject(table: str) -> bytes:
    return b'[project]\nname = "x"\n\n[tool.apexcompat-migrate]\n' + textwrap.dedent(table).encode()


def test_pyproject_config_in_a_git_repo_flags_win(tmp_path):
    root = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": pyproject('ignore = ["APX991"]\nexclude = ["vendor"]\n'),
            "src/m.py": MANUAL,
            "src/a.py": INIT,
            "vendor/v.py": INIT,
        },
    )
    # found searching up from the path given, and from the current folder
    for cwd, path, separate in ((root, "src", True), (root / "src", ".", False)):
        proc = run_cli(["--check", path], cwd, in_process=not separate)
        out = proc.stdout.decode()
        assert "APX991" not in out and "vendor" not in out, out
        assert out.splitlines()[-1] == "1 file would be rewritten (2 files checked)"
    # a flag replaces the configured value
    proc = run_cli(["--check", "--ignore", "APX990", "--exclude", "nothing", "."], root)
    out = proc.stdout.decode()
    assert "APX991" in out and "APX990" not in out and "would rewrite vendor/v.py" in out
    # in place: the repo is clean, so the write goes ahead without --allow-no-vcs
    assert run_cli(["src"], root).returncode == 0
    assert (root / "src" / "a.py").read_bytes() == INIT_AFTER


def test_config_target_torch_reaches_the_rules(tmp_path):
    script = b"import torch\nscaler = torch.cuda.amp.GradScaler()\n"
    root = make_repo(tmp_path / "repo", {"pyproject.toml": pyproject('target-torch = "2.2"\n'), "t.py": script})
    proc = run_cli(["--diff", "t.py"], root, rules=None)
    assert b"+scaler = torch.amp.GradScaler" not in proc.stdout, "2.2 has no torch.amp.GradScaler"
    proc = run_cli(["--diff", "--target-torch", "2.4", "t.py"], root, rules=None)
    assert b'+scaler = torch.amp.GradScaler("cuda")' in proc.stdout


def test_config_file_named_with_config(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL, "cfg/migrate.toml": b'select = ["APX990"]\n', "cfg/pyproject.toml": b"[project]\n"})
    proc = run_cli(["--check", "--config", "cfg/migrate.toml", "."], tmp_path)
    assert proc.returncode == 0 and "APX991" not in proc.stdout.decode()
    proc = run_cli(["--check", "--config", "cfg/pyproject.toml", "."], tmp_path)
    assert proc.returncode == 2 and "has no [tool.apexcompat-migrate] table" in proc.stderr.decode()
    proc = run_cli(["--check", "--config", "cfg/none.toml", "."], tmp_path)
    assert proc.returncode == 2 and "--config: no such file: cfg/none.toml" in proc.stderr.decode()


@pytest.mark.parametrize(
    "table, message",
    [
        ('ignor = ["APX991"]\n', "unknown key 'ignor' in [tool.apexcompat-migrate] (did you mean 'ignore'?)"),
        ("target-torch = 2.10\n", 'target-torch must be a string such as "2.4", not 2.1'),
        ('target-torch = "1.13"\n', "target-torch in "),
        ('target = "jax"\n', "target must be one of native, shim, not 'jax'"),
        ('dtype = "float32"\n', "dtype must be one of float16, bfloat16, not 'float32'"),
        ('select = ["APX777"]\n', "unknown rule code or prefix 'APX777' in select/ignore in "),
        ("exclude = 3\n", "exclude must be a list of strings, not 3"),
        ("target = \n", "is not valid TOML"),
    ],
)
def test_config_errors_exit_two(tmp_path, table, message):
    write_tree(tmp_path, {"pyproject.toml": pyproject(table), "a.py": INIT})
    proc = run_cli(["--check", "."], tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr.decode()


def test_config_dtype_is_accepted():
    from migrate.cli import build_parser, make_settings
    from migrate.config import FileConfig

    settings = make_settings(build_parser().parse_args(["."]), FileConfig(path="p", dtype="bfloat16"))
    assert getattr(settings, "dtype", "bfloat16") == "bfloat16"  # passed on once Settings has the field


def test_pyproject_without_the_table_is_not_a_config(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": b"[project]\nname = 'x'\n", "m.py": MANUAL})
    assert run_cli(["--check", "."], tmp_path).returncode == 1


# --- suppression ----------------------------------------------------------------------------


def test_suppression_comment_forms():
    source = b'''x = 1  # apexcompat: ignore[APX220, apx301]
y = 2  # noqa: E501, APX210
z = "# apexcompat: ignore"
w = 3  # noqa: E501
v = 4  # apexcompat: ignore
'''
    found = {s.line: s.codes for s in suppressions_in(source)}
    assert found == {1: ("APX220", "APX301"), 2: ("APX210",), 5: None}


def test_suppressed_manual_site_is_not_work_left(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL.replace(b"(opt))\n", b"(opt))  # apexcompat: ignore[APX991]\n")})
    proc = run_cli(["--check", "."], tmp_path, in_process=False)
    assert proc.returncode == 0, proc.stdout
    assert lines(proc) == ["0 files would be rewritten, 1 finding suppressed (1 file checked)"]
    for comment in (b"# noqa: APX991", b"# apexcompat: ignore", b"# apexcompat: ignore[APX99]"):
        write_tree(tmp_path, {"m.py": MANUAL.replace(b"(opt))\n", b"(opt))  " + comment + b"\n")})
        assert run_cli(["--check", "."], tmp_path).returncode == 0, comment
    for comment in (b"# noqa", b"# apexcompat: ignore[APX990]", b"# noqa: E501"):  # not this code
        write_tree(tmp_path, {"m.py": MANUAL.replace(b"(opt))\n", b"(opt))  " + comment + b"\n")})
        proc = run_cli(["--check", "."], tmp_path)
        assert proc.returncode == 1 and MANUAL_LINE in lines(proc), comment


def test_unused_suppressions_are_listed_on_request(tmp_path):
    source = MANUAL.replace(b"(opt))\n", b"(opt))  # apexcompat: ignore[APX991]\nx = 1  # noqa: APX990\n")
    write_tree(tmp_path, {"m.py": source, "p.py": b"y = 2  # apexcompat: ignore\n"})
    assert run_cli(["--check", "."], tmp_path).returncode == 0
    proc = run_cli(["--check", "--show-unused-suppressions", "."], tmp_path)
    assert proc.returncode == 1
    assert lines(proc) == [
        "m.py:3:8: APX011 unused suppression: `# noqa: APX990` silences no APX990 finding on this line; remove it",
        "p.py:1:8: APX011 unused suppression: `# apexcompat: ignore` silences no finding on this line; remove it",
        "0 files would be rewritten, 2 unused suppressions, 1 finding suppressed (2 files checked)",
    ]
    # a code the run does not check cannot be judged unused
    assert run_cli(["--check", "--show-unused-suppressions", "--ignore", "APX990", "m.py"], tmp_path).returncode == 0


def test_real_rules_suppressed_site_in_a_git_repo(tmp_path):
    """The real rules on a repo with a config: the reviewed manual site is rewritten around
    (the tool still writes its TODO), counts as no work left, and stays silent next time."""
    script = b"""import torch
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
with amp.scale_loss(loss, optimizer) as scaled_loss:  # apexcompat: ignore[APX210]
    scaled_loss.backward()
optimizer.step()
"""
    root = make_repo(tmp_path / "repo", {"pyproject.toml": pyproject('target-torch = "2.4"\n'), "train.py": script})
    check = run_cli(["--check", "."], root, rules=None, in_process=False)
    assert check.returncode == 1 and lines(check)[-2:] == [
        "would rewrite train.py",
        "1 file would be rewritten, 1 finding suppressed (1 file checked)",
    ]
    proc = run_cli(["."], root, rules=None)
    assert proc.returncode == 0, proc.stdout
    text = (root / "train.py").read_text()
    assert "scaler.scale(loss).backward()  # apexcompat: ignore[APX210]" in text and "# TODO(apexcompat)" in text
    again = run_cli(["--check", "."], root, rules=None)
    assert again.returncode == 0 and lines(again) == ["0 files would be rewritten, 1 finding suppressed (1 file checked)"]


# --- writing outside git, --target-torch ---------------------------------------------------


def test_in_place_in_a_git_subfolder_needs_no_flag(tmp_path):
    root = make_repo(tmp_path / "repo", {"sub/a.py": INIT})
    assert run_cli(["a.py"], root / "sub").returncode == 0
    assert (root / "sub" / "a.py").read_bytes() == INIT_AFTER


@pytest.mark.parametrize("version, ok", [("2.2", True), ("2.15", True), ("2.4.1", True), ("2.1", False), ("1.13", False), ("2", False), ("v2.4", False)])
def test_target_torch_range(tmp_path, version, ok):
    write_tree(tmp_path, {"a.py": PLAIN})
    proc = run_cli(["--check", "--target-torch", version, "."], tmp_path)
    assert proc.returncode == (0 if ok else 2)
    if not ok:
        assert "supported: 2.2 to 2.15" in proc.stderr.decode()


# --- colour ------------------------------------------------------------------------------


def test_color_choice():
    assert wants_color("auto", FakeTTY(True), {}) is True
    assert wants_color("auto", FakeTTY(False), {}) is False
    assert wants_color("auto", FakeTTY(True), {"NO_COLOR": "1"}) is False
    assert wants_color("auto", FakeTTY(True), {"NO_COLOR": ""}) is True  # set but empty: no-color.org says ignore
    assert wants_color("always", FakeTTY(False), {"NO_COLOR": "1"}) is True
    assert wants_color("never", FakeTTY(True), {}) is False
    assert Palette(True)("x", "bold", "red") == "\033[1;31mx\033[0m" and Palette(False)("x", "bold") == "x"


def test_color_on_the_command_line(tmp_path):
    write_tree(tmp_path, {"a.py": INIT, "m.py": MANUAL})
    plain = run_cli(["--check", "."], tmp_path)
    assert b"\033[" not in plain.stdout, "not a terminal: no colour"
    colored = run_cli(["--check", "--color", "always", "."], tmp_path, in_process=False)
    assert b"\033[" in colored.stdout and b"\033[1;31mAPX991\033[0m" in colored.stdout
    assert b"\033[" not in run_cli(["--check", "--color", "never", "--output-format", "github", "."], tmp_path).stdout


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_color_auto_on_a_terminal_respects_no_color(tmp_path):
    write_tree(tmp_path, {"m.py": MANUAL})

    def on_a_tty(env):
        leader, follower = os.openpty()
        try:
            subprocess.run([sys.executable, "-m", "migrate", "--check", "."], cwd=tmp_path, env=env, stdout=follower, stderr=subprocess.DEVNULL, timeout=60)
            return os.read(leader, 65536)
        finally:
            os.close(leader)
            os.close(follower)

    env = toy_env()
    env.pop("NO_COLOR", None)
    assert b"\033[1;31mAPX991" in on_a_tty(env)
    assert b"\033[" not in on_a_tty(dict(env, NO_COLOR="1"))


# --- pre-commit --------------------------------------------------------------------------


def _pre_commit():
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "pre_commit"]


@pytest.mark.slow
@pytest.mark.skipif(_pre_commit() is None, reason="pre-commit is not installed (pip install -e '.[test]' installs it)")
def test_pre_commit_hook_with_try_repo(tmp_path):
    """``pre-commit try-repo`` installs this repository's hook into its own environment and
    runs it on a project's files.  The hook environment sees this interpreter's packages
    (VIRTUALENV_SYSTEM_SITE_PACKAGES) and builds without an index, so no torch is downloaded
    and the test runs offline; the hook code itself is this checkout's, installed by pip."""
    hooks = REPO_ROOT / ".pre-commit-hooks.yaml"
    assert hooks.exists()
    env = toy_env(rules=None)
    # the hook must run the copy pip installs in its environment: no checkout on the path
    # (only pre-commit's own folder when it is installed outside site-packages)
    import pre_commit

    home = os.path.dirname(os.path.dirname(pre_commit.__file__))
    env.pop("PYTHONPATH")
    if home not in site.getsitepackages():
        env["PYTHONPATH"] = home
    env.update(
        HOME=str(tmp_path / "home"),  # virtualenv keeps its app data there
        PRE_COMMIT_HOME=str(tmp_path / "cache"),
        VIRTUALENV_SYSTEM_SITE_PACKAGES="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip's spelling of --no-build-isolation
        PIP_NO_INDEX="1",
    )
    # the hook repository: this checkout's files (working tree) committed to a fresh repo
    source = tmp_path / "hook-repo"
    shutil.copytree(
        REPO_ROOT,
        source,
        ignore=shutil.ignore_patterns(".git", "__pycache__", ".tox", "docs", "tests", "benchmarks", "examples", "*.egg-info", "build"),
    )
    make_repo(source, {})
    # a project: an apex file, a clean one, and a reviewed manual site (its TODO already written)
    project = tmp_path / "project"
    reviewed = b"from apex.parallel.LARC import LARC\n\noptimizer = LARC(optimizer)  # apexcompat: ignore[APX621]\n"
    write_tree(project, {"train.py": INIT, "clean.py": PLAIN, "reviewed.py": reviewed})
    assert run_cli(["--allow-no-vcs", "reviewed.py"], project, rules=None).returncode == 0
    assert b"# TODO(apexcompat)" in (project / "reviewed.py").read_bytes()
    make_repo(project, {})
    proc = subprocess.run(
        [*_pre_commit(), "try-repo", str(source), "apexcompat-migrate", "--all-files"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "apexcompat-migrate --check" in out and "Failed" in out
    assert "would rewrite train.py" in out and "reviewed.py" not in out and "clean.py" not in out
    assert "1 file would be rewritten, 1 site needs manual work (see above), 1 finding suppressed (3 files checked)" in out
    assert (project / "train.py").read_bytes() == INIT, "the hook never writes"


def test_explain_manual_work_is_the_docs_table():
    """``--explain``'s manual-work notes and the docs table of the codes that need work by hand
    say the same thing, code by code."""
    import re

    from migrate.manual import MANUAL_WORK

    page = REPO_ROOT / "docs" / "migrate" / "index.md"
    if not page.exists():
        pytest.skip("docs not in this checkout")
    rows = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| `APX")]
    documented = {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split(" | ")]
        plain = [c.replace("**", "").replace("·", "*").replace("‖", "|") for c in cells[1:]]
        for code in re.findall(r"`(APX\d+)`", cells[0]):
            documented[code] = tuple(plain)
    assert documented == {code: tuple(work) for code, work in MANUAL_WORK.items()}
