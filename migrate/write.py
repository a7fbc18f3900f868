"""Write rewritten files safely: only text that compiles, atomically (temp file in the same
folder, then ``os.replace``), keeping the file mode, never over a read-only file, and never
over uncommitted work in git (the dirty-tree guard)."""

from __future__ import annotations

import os
import stat
import tempfile
import warnings
from typing import Dict, Optional, Set

from .walk import find_repo_root, git_entries


class WriteRefused(Exception):
    """The file was deliberately not written; ``code`` is the driver finding to report."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def compile_error(source: bytes, path: str) -> Optional[SyntaxError]:
    """The error ``compile()`` raises for ``source`` under the running Python, or ``None``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except ValueError as exc:  # source holds null bytes
        return SyntaxError(str(exc))
    return None


def is_read_only(path: str) -> bool:
    """Read-only by its mode bits (``os.access`` alone says writable when running as root)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (mode & stat.S_IWUSR) or not os.access(path, os.W_OK)


def atomic_write(path: str, data: bytes) -> None:
    """Replace the file at ``path`` (through symlinks) by ``data`` in one step.

    Readers see the old bytes or the new ones, never a half-written file; the file keeps its
    permission bits.  Raises ``WriteRefused`` for read-only files and when ``data`` does not
    compile, ``OSError`` when writing fails (the original is then untouched).
    """
    from .codes import INTERNAL_ERROR, READ_ONLY

    target = os.path.realpath(path)
    if is_read_only(target):
        raise WriteRefused(READ_ONLY, "file is read-only, not written (permissions left as they are)")
    error = compile_error(data, path)
    if error is not None:
        raise WriteRefused(
            INTERNAL_ERROR,
            f"internal error, file left unchanged: the new text does not compile ({error.msg})",
        )
    mode = stat.S_IMODE(os.stat(target).st_mode)
    folder, name = os.path.split(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".apexcompat-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class DirtyGuard:
    """Knows which files have uncommitted changes; runs ``git status`` once per repository."""

    def __init__(self) -> None:
        self._repo_cache: Dict[str, Optional[str]] = {}
        #: repo root -> real paths with changes, or ``None`` when git could not tell
        self._dirty: Dict[str, Optional[Set[str]]] = {}

    def problem(self, path: str) -> Optional[str]:
        """Why ``path`` must not be written, or ``None`` when it is clean (or not in git)."""
        root = find_repo_root(os.path.dirname(os.path.abspath(path)), self._repo_cache)
        if root is None:
            return None
        if root not in self._dirty:
            self._dirty[root] = self._status(root)
        dirty = self._dirty[root]
        if dirty is None:
            return (
                "could not run `git status` to check for uncommitted changes; not written "
                "(pass --allow-dirty to write anyway)"
            )
        if os.path.realpath(path) in dirty:
            return "file has uncommitted changes, not written (commit or stash them, or pass --allow-dirty)"
        return None

    @staticmethod
    def _status(root: str) -> Optional[Set[str]]:
        entries = git_entries(["status", "--porcelain=v1", "-z", "--untracked-files=all"], root)
        if entries is None:
            return None
        top = os.path.realpath(root)
        dirty: Set[str] = set()
        skip_next = False
        for entry in entries:
            if skip_next:  # the source path of a rename or copy
                skip_next = False
                continue
            if len(entry) < 4:
                continue
            status, rel = entry[:2], entry[3:]
            dirty.add(os.path.realpath(os.path.join(top, rel)))
            skip_next = "R" in status or "C" in status
        return dirty
