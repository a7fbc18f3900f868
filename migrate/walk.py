"""Find the files to migrate: walk the given paths, skip what is not the user's code, and
keep only the files whose bytes mention something a rule cares about (the prefilter).

Skipped while walking a directory: ``.git`` and other VCS folders, virtualenvs (any folder
holding ``pyvenv.cfg``, or named ``.venv``/``venv``), ``site-packages``, ``node_modules``,
``build``, ``dist``, ``.tox``, ``__pycache__``, whatever git ignores (``.gitignore`` files,
``.git/info/exclude``, the global excludes: asked from git once per repository and walk
root, so git's own semantics apply), ``--exclude`` globs, and copies of apex itself
(its package or its whole source tree, see ``vendored_apex``; reported once each).  Files
named explicitly on the command line are always taken.  Symbolic links are followed, but
never into a directory already on the current path.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .codes import SYMLINK_LOOP
from .findings import Finding
from .vendored_apex import vendored_apex_kind, vendored_apex_finding

SKIP_DIR_NAMES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "site-packages",
        "node_modules",
        "build",
        "dist",
        ".tox",
        ".nox",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".eggs",
    }
)
PYTHON_SUFFIXES = (".py",)
@dataclass
class WalkResult:
    #: (absolute path, path as shown to the user), in a deterministic order
    files: List[Tuple[str, str]] = field(default_factory=list)
    findings: List[Finding] = field(default_factory=list)
    #: paths given on the command line that do not exist
    missing: List[str] = field(default_factory=list)


def display_path(path: str, cwd: Optional[str] = None) -> str:
    """``path`` relative to ``cwd`` with forward slashes when it lies below it, else absolute."""
    cwd = cwd or os.getcwd()
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, cwd)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return absolute.replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def repository_names(files: Iterable[Tuple[str, str]], roots: Sequence[str]) -> Dict[str, str]:
    """Absolute path -> its name relative to the work tree of the git repository holding it,
    else to the folder named on the command line (``roots``) that holds it, else the name it
    is shown by (``files``: (absolute path, shown name)).  The cross-file plan names other
    files so in its messages: a TODO comment written into a file then reads the same whatever
    folder the tool was run from, and names no path of the machine it ran on."""
    cache: Dict[str, Optional[str]] = {}
    folders = sorted(
        {os.path.abspath(os.path.dirname(r) or "." if os.path.isfile(r) else r) for r in roots}, key=len, reverse=True
    )
    names = {}
    for path, shown in files:
        base = find_repo_root(os.path.dirname(path), cache) or next(
            (f for f in folders if path.startswith(f.rstrip(os.sep) + os.sep)), None
        )
        names[path] = os.path.relpath(path, base).replace(os.sep, "/") if base else shown
    return names


def find_repo_root(directory: str, cache: Dict[str, Optional[str]]) -> Optional[str]:
    """The work tree root of the git repository holding ``directory`` (``None`` outside any)."""
    trail = []
    current = os.path.abspath(directory)
    root: Optional[str] = None
    while True:
        if current in cache:
            root = cache[current]
            break
        trail.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            root = current
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for seen in trail:
        cache[seen] = root
    return root


def git_entries(args: Sequence[str], cwd: str) -> Optional[List[str]]:
    """The NUL-separated output of ``git ARGS`` run in ``cwd``; ``None`` when git is
    missing or fails (for example outside a repository)."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape").split("\0")


def git_ignored(directory: str) -> Optional[Set[str]]:
    """Absolute paths under ``directory`` that git ignores (folders end with ``/``).

    One ``git ls-files --others --ignored --exclude-standard --directory`` per call: git
    lists ignored folders once instead of every file inside them, and leaves tracked files
    out (a tracked file is never ignored).  ``None`` when git is unavailable.
    """
    entries = git_entries(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], directory)
    if entries is None:
        return None
    base = os.path.abspath(directory)
    ignored = set()
    for entry in entries:
        if entry:
            path = os.path.join(base, entry.rstrip("/"))
            ignored.add(path + "/" if entry.endswith("/") else path)
    return ignored


class Walker:
    """Walks paths; holds the per-repository ignore sets so that git runs once each."""

    def __init__(self, exclude: Sequence[str] = (), use_gitignore: bool = True, cwd: Optional[str] = None):
        self.exclude = list(exclude)
        self.use_gitignore = use_gitignore
        self.cwd = cwd or os.getcwd()
        self._repo_cache: Dict[str, Optional[str]] = {}
        self._ignored: Dict[str, Set[str]] = {}
        self._seen_files: Set[str] = set()
        self._seen_dirs: Set[str] = set()

    def walk(self, paths: Sequence[str]) -> WalkResult:
        result = WalkResult()
        for path in paths:
            if os.path.isdir(path):
                self._load_ignores(path)
                real = os.path.realpath(path)
                self._walk_dir(os.path.abspath(path), result, ancestors=(real,))
            elif os.path.exists(path):
                self._add_file(os.path.abspath(path), result)
            else:
                result.missing.append(path)
        return result

    # -- helpers -------------------------------------------------------------------------
    def _excluded(self, path: str, name: str) -> bool:
        if not self.exclude:
            return False
        rel = display_path(path, self.cwd)
        return any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(name, pat) for pat in self.exclude)

    def _load_ignores(self, directory: str, nested: bool = False) -> None:
        if not self.use_gitignore:
            return
        key = os.path.abspath(directory)
        if key in self._ignored:
            return
        if not nested and any(key.startswith(done.rstrip(os.sep) + os.sep) for done in self._ignored):
            return
        if find_repo_root(directory, self._repo_cache) is None:
            return
        ignored = git_ignored(directory)
        if ignored is not None:
            self._ignored[key] = ignored

    def _is_ignored(self, path: str, is_dir: bool) -> bool:
        probe = path + "/" if is_dir else path
        return any(probe in ignored for ignored in self._ignored.values())

    def _add_file(
        self, path: str, result: WalkResult, real: Optional[str] = None, shown: Optional[str] = None
    ) -> None:
        """``path``, unless its real path (``real`` when known) was added already; ``shown``:
        its ``display_path`` where the caller knows it."""
        real = real or os.path.realpath(path)
        if real in self._seen_files:
            return
        self._seen_files.add(real)
        result.files.append((path, shown or display_path(path, self.cwd)))

    def _walk_dir(self, directory: str, result: WalkResult, ancestors: Tuple[str, ...]) -> None:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        names = [e.name for e in entries]
        if "pyvenv.cfg" in names:
            return
        kind = vendored_apex_kind(directory, names)
        if kind is not None:
            result.findings.append(vendored_apex_finding(display_path(directory, self.cwd) + "/", kind))
            return
        if ".git" in names and len(ancestors) > 1:
            self._load_ignores(directory, nested=True)  # a nested repository brings its own ignore rules
        # a file's ``display_path`` is its folder's and its name (a path made relative for
        # each of a tree's files took as long as listing the tree)
        folder_shown = display_path(directory, self.cwd)
        folder_shown = "" if folder_shown == "." else folder_shown.rstrip("/") + "/"
        for entry in entries:
            path = entry.path
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIP_DIR_NAMES or self._excluded(path, entry.name):
                    continue
                if self._ignored and self._is_ignored(path, True):
                    continue
                real = os.path.realpath(path) if entry.is_symlink() else os.path.join(ancestors[-1], entry.name)
                if real in ancestors:
                    result.findings.append(
                        Finding(
                            path=display_path(path, self.cwd),
                            line=0,
                            col=0,
                            code=SYMLINK_LOOP,
                            message="symbolic link loop not followed",
                            severity="info",
                        )
                    )
                    continue
                if real in self._seen_dirs:
                    continue
                self._seen_dirs.add(real)
                self._walk_dir(path, result, ancestors + (real,))
            elif entry.name.endswith(PYTHON_SUFFIXES):
                try:
                    if not entry.is_file():
                        continue
                except OSError:
                    continue
                if self._excluded(path, entry.name):
                    continue
                if self._ignored and self._is_ignored(path, False):
                    continue
                # a file that is no link lies where its directory really is
                real = None if entry.is_symlink() else os.path.join(ancestors[-1], entry.name)
                self._add_file(path, result, real, folder_shown + entry.name)


def walk(paths: Sequence[str], exclude: Sequence[str] = (), use_gitignore: bool = True) -> WalkResult:
    """Every file to consider under ``paths``, plus findings about what was skipped."""
    return Walker(exclude, use_gitignore).walk(paths)


def prefilter(source: bytes, triggers: Optional[Sequence[bytes]]) -> bool:
    """Whether ``source`` mentions any trigger; ``None`` lets every file through."""
    return triggers is None or any(t in source for t in triggers)


#: a line of code (not a comment) that imports apex or spells ``torch.cuda.amp``; bounded
#: repeats keep it linear on minified files with very long lines
_APEX_CODE = re.compile(
    rb"^[^#\n]{0,400}?(?:"
    rb"\bimport\s[^#\n]{0,400}?\b(?:apex|amp_C|apex_C)\b"
    rb"|\bfrom\s+(?:apex|amp_C|torch\.(?:cuda|cpu)\.amp)\b"
    rb"|\bfrom\s+torch\.(?:cuda|cpu)\s+import\s[^#\n]{0,400}?\bamp\b"
    rb"|\btorch\.(?:cuda|cpu)\.amp\b)",
    re.MULTILINE,
)


def imports_apex(source: bytes) -> bool:
    """Whether some line of code (a comment does not count; a string may, which errs on the
    safe side) imports apex or spells ``torch.cuda.amp``.  A regular expression instead of
    a parser: this is for files too large to hand to the rewriter."""
    return _APEX_CODE.search(source) is not None
