"""Atomic writes and the dirty-tree guard."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from migrate.codes import INTERNAL_ERROR, READ_ONLY
from migrate.write import DirtyGuard, WriteRefused, atomic_write, compile_error

from helpers_driver import git, make_repo


def test_atomic_write_keeps_mode_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "script.py"
    target.write_bytes(b"x = 1\n")
    target.chmod(0o751)
    atomic_write(str(target), b"x = 2\r\n")
    assert target.read_bytes() == b"x = 2\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert os.listdir(tmp_path) == ["script.py"]


def test_refuses_text_that_does_not_compile(tmp_path):
    target = tmp_path / "s.py"
    target.write_bytes(b"x = 1\n")
    with pytest.raises(WriteRefused) as info:
        atomic_write(str(target), b"return 1\n")
    assert info.value.code == INTERNAL_ERROR
    assert target.read_bytes() == b"x = 1\n" and os.listdir(tmp_path) == ["s.py"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_refuses_read_only_files_without_touching_permissions(tmp_path):
    target = tmp_path / "ro.py"
    target.write_bytes(b"x = 1\n")
    target.chmod(0o444)
    try:
        with pytest.raises(WriteRefused) as info:
            atomic_write(str(target), b"x = 2\n")
        assert info.value.code == READ_ONLY
        assert stat.S_IMODE(target.stat().st_mode) == 0o444 and target.read_bytes() == b"x = 1\n"
    finally:
        target.chmod(0o644)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_writes_through_symlinks(tmp_path):
    (tmp_path / "real.py").write_bytes(b"x = 1\n")
    os.symlink("real.py", tmp_path / "link.py")
    atomic_write(str(tmp_path / "link.py"), b"x = 2\n")
    assert os.path.islink(tmp_path / "link.py")
    assert (tmp_path / "real.py").read_bytes() == b"x = 2\n"


def test_failed_write_leaves_original_and_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "s.py"
    target.write_bytes(b"x = 1\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic_write(str(target), b"x = 2\n")
    assert target.read_bytes() == b"x = 1\n" and os.listdir(tmp_path) == ["s.py"]


def test_compile_error_reports_position():
    error = compile_error(b"x = 1\ndef f(:\n", "f.py")
    assert error is not None and error.lineno == 2
    assert compile_error(b"# -*- coding: latin-1 -*-\ns = '\xe9'\n", "f.py") is None
    assert compile_error(b"x = 1\x00\n", "f.py") is not None


def test_dirty_guard_runs_git_once_per_repository(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "r", {"a.py": b"a = 1\n", "b.py": b"b = 1\n", "old.py": b"o = 1\n", "sub/c.py": b"c = 1\n"})
    (root / "b.py").write_bytes(b"b = 2\n")
    git(root, "mv", "old.py", "renamed.py")
    (root / "new.py").write_bytes(b"n = 1\n")
    calls = []
    real_status = DirtyGuard._status
    monkeypatch.setattr(DirtyGuard, "_status", staticmethod(lambda r: calls.append(r) or real_status(r)))
    guard = DirtyGuard()
    assert guard.problem(str(root / "a.py")) is None
    assert guard.problem(str(root / "sub" / "c.py")) is None
    assert "uncommitted changes" in guard.problem(str(root / "b.py"))
    assert "uncommitted changes" in guard.problem(str(root / "renamed.py"))
    assert "uncommitted changes" in guard.problem(str(root / "new.py"))
    assert len(calls) == 1
    outside = tmp_path / "loose.py"
    outside.write_bytes(b"x = 1\n")
    assert guard.problem(str(outside)) is None
