"""The reporter and the progress bar, as units (the command line end to end is in
test_cli.py)."""

from __future__ import annotations

import io
import subprocess

import migrate.progress as progress_module
from migrate.findings import Finding
from migrate.progress import Progress
from migrate.report import RunStats, render_github, render_text, shown, summary_line, unified_diff


def finding(code="APX301", fixed=False, severity="error", line=3, path="a.py", message="msg"):
    return Finding(path, line, 5, code, message, fixed, severity)


def test_summary_line_wording():
    stats = RunStats(checked=40, changed=12, findings=[finding(), finding(line=4), finding(line=9), finding("APX001", path="b.py")])
    assert summary_line(stats) == (
        "12 files rewritten, 3 sites need manual work (see above), 1 file could not be parsed (40 files checked)"
    )
    one = RunStats(checked=1, changed=1, mode="check", findings=[finding()])
    assert summary_line(one) == "1 file would be rewritten, 1 site needs manual work (see above) (1 file checked)"


def test_exit_status():
    assert RunStats(changed=3).exit_status() == 0
    assert RunStats(changed=3, mode="check").exit_status() == 1
    assert RunStats(changed=0, mode="check").exit_status() == 0
    assert RunStats(findings=[finding(fixed=True, severity="warning")]).exit_status() == 0
    assert RunStats(findings=[finding(severity="info")]).exit_status() == 0
    assert RunStats(findings=[finding()]).exit_status() == 1
    assert RunStats(findings=[finding("APX005")]).exit_status() == 1
    assert RunStats(findings=[finding("APX002")]).exit_status() == 2
    # work left wins over an internal error elsewhere: CI must see it (issue 9)
    assert RunStats(changed=1, mode="check", findings=[finding("APX002")]).exit_status() == 1
    assert RunStats(findings=[finding("APX002"), finding()]).exit_status() == 1


def test_shown_hides_plain_fixes_and_quiet_keeps_only_actions():
    fixed = finding("APX301", fixed=True)
    changed_behaviour = finding("APX204", fixed=True, severity="warning")
    note = finding("APX801", severity="info")
    manual = finding("APX323")
    assert shown([fixed, changed_behaviour, note, manual]) == [changed_behaviour, note, manual]
    assert shown([fixed, changed_behaviour, note, manual], quiet=True) == [manual]


def test_text_and_github_rendering():
    folder = Finding("vendor/loop/", 0, 0, "APX009", "symbolic link loop not followed", severity="info")
    todo = finding(message="50% of it, a:b\nnext")
    assert render_text([folder, todo]) == "vendor/loop/: APX009 symbolic link loop not followed\na.py:3:5: APX301 50% of it, a:b\nnext\n"
    assert render_github([folder, todo]) == (
        "::notice file=vendor/loop/::APX009 symbolic link loop not followed\n"
        "::error file=a.py,line=3,col=5::APX301 50%25 of it, a:b%0Anext\n"
    )


def test_unified_diff_marks_missing_final_newline_and_keeps_crlf(tmp_path):
    old, new = b"a = 1\r\nb = 2", b"a = 1\r\nb = 3"
    patch = unified_diff(old, new, "x.py")
    assert patch.startswith(b"--- a/x.py\n+++ b/x.py\n")
    assert b"-b = 2\n\\ No newline at end of file\n+b = 3\n\\ No newline at end of file\n" in patch
    (tmp_path / "x.py").write_bytes(old)
    (tmp_path / "p.diff").write_bytes(patch)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "x.py").read_bytes() == new


class FakeTTY(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_only_on_a_terminal_and_only_after_a_delay(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    pipe = FakeTTY(False)
    bar = Progress(10, pipe)
    now[0] += 5
    bar.advance(3)
    bar.close()
    assert pipe.getvalue() == ""

    tty = FakeTTY(True)
    bar = Progress(10, tty)
    bar.advance(1)  # a quick start draws nothing
    assert tty.getvalue() == ""
    now[0] += 2
    bar.advance(4)
    assert "5/10 files" in tty.getvalue()
    bar.close()
    assert tty.getvalue().endswith("\r")

    quiet = FakeTTY(True)
    bar = Progress(10, quiet, enabled=False)
    now[0] += 5
    bar.advance(10)
    assert quiet.getvalue() == ""


def test_default_target_torch_is_read_without_importing_torch():
    import importlib.metadata
    import sys

    from migrate.cli import build_parser, installed_torch_version, make_settings

    before = "torch" in sys.modules
    version = installed_torch_version()
    assert ("torch" in sys.modules) == before
    try:
        text = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        assert version is None
        return
    major, minor = (int(x) for x in text.split(".")[:2])
    assert version == (major, minor)
    settings = make_settings(build_parser().parse_args(["x.py"]))
    assert settings.target_torch == (major, minor)
    assert make_settings(build_parser().parse_args(["--target-torch", "2.2", "x.py"])).target_torch == (2, 2)
