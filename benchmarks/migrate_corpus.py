"""How much of a real repository does ``apexcompat-migrate --to native`` bring to plain PyTorch?

One command::

    python benchmarks/migrate_corpus.py ROOT [--manifest benchmarks/corpus.toml] [--out DIR]

``ROOT`` holds one extracted checkout per repository (``ROOT/<checkout or name>``, ``git archive``
of the commit the entry names); an entry with a ``subdir`` measures that folder of it alone.  Each entry is copied to a scratch folder, migrated whole with
``apexcompat-migrate --to native`` in place, then checked:

* **apex.amp files**: the files that import apex's amp (or ``apexcompat.amp``) before the run;
  **native**: those of them with no ``apex`` or ``apexcompat`` import left afterwards.  Every
  other one is listed with the first finding the tool gave for it, so no file is left unexplained.
  Files inside a folder the tool reports as a copy of apex itself (APX006: apex's own tests
  and examples in a vendored checkout) are apex, not code using it: counted apart
  (**in copies of apex**), never in the native share;
* **internal errors**: APX002 findings or exit status 2;
* **compile**: every rewritten file still compiles;
* **second run**: ``--check`` on the migrated copy would rewrite nothing (idempotence).

Prints a table per entry and the totals per group, writes ``DIR/<name>.diff`` (the whole
change, ``git diff``), ``DIR/<name>.json`` (the run's findings) and ``DIR/results.json``; with
``--baseline DIR`` it also says which entries' outputs changed since an earlier run's results.
Whether an output trains correctly is for a person reading the diffs: this script counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the benchmarks run on the development machine's Python
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
#: the tool's code for a copy of apex itself (migrate.codes.VENDORED_APEX; not imported, so
#: that this script measures whichever checkout it runs the tool from)
VENDORED_APEX = "APX006"
# an import may follow ``try:`` (or ``;``) on its line: ``try: from apex import amp`` (bonito)
_LINE_START = r"^\s*(?:try\s*:\s*|[^\n#]*;\s*)?"
AMP_IMPORT = re.compile(
    _LINE_START + r"from\s+(apex|apexcompat)\s+import\s+[^\n]*\bamp\b|\b(apex|apexcompat)\.amp\b", re.MULTILINE
)
ANY_APEX_IMPORT = re.compile(
    _LINE_START + r"(from\s+(apex|apexcompat)\b|import\s+(apex|apexcompat)\b)", re.MULTILINE
)


@dataclass
class Entry:
    """One manifest entry: a repository (or one folder of it) measured as a whole."""

    name: str
    github: str
    commit: str
    group: str
    subdir: str = ""
    checkout: str = ""


@dataclass
class Outcome:
    """What one entry's run gave."""

    name: str
    group: str
    amp_files: List[str] = field(default_factory=list)
    native: List[str] = field(default_factory=list)
    #: apex.amp files inside a copy of apex itself (APX006), not in ``amp_files``
    in_apex_copies: List[str] = field(default_factory=list)
    left: Dict[str, str] = field(default_factory=dict)
    internal_errors: int = 0
    exit_status: int = 0
    changed_files: int = 0
    not_compiling: List[str] = field(default_factory=list)
    second_run_changes: List[str] = field(default_factory=list)
    diff_sha: str = ""


def load_manifest(path: Path) -> List[Entry]:
    with path.open("rb") as handle:
        document = tomllib.load(handle)
    return [Entry(**item) for item in document.get("repo", [])]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _code(text: str) -> str:
    """``text`` with its comments and string literals blanked out (``# via apex.amp`` or a
    docstring that names apex.amp makes no apex.amp file); the text itself when it does not
    tokenize."""
    lines = text.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(iter(lines).__next__))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return text
    for token in reversed(tokens):
        if token.type not in (tokenize.COMMENT, tokenize.STRING):
            continue
        (row, col), (end_row, end_col) = token.start, token.end
        if row == end_row:
            line = lines[row - 1]
            lines[row - 1] = line[:col] + line[end_col:]
        else:
            lines[row - 1] = lines[row - 1][:col] + "\n"
            for middle in range(row, end_row - 1):
                lines[middle] = "\n"
            lines[end_row - 1] = lines[end_row - 1][end_col:]
    return "".join(lines)


def _amp_files(tree: Path) -> List[str]:
    found = []
    for path in sorted(tree.rglob("*.py")):
        if path.is_file() and AMP_IMPORT.search(_code(_read(path))):
            found.append(path.relative_to(tree).as_posix())
    return found


def _migrate(tree: Path, *extra: str) -> dict:
    # ``python -m migrate`` run inside the tree would import the repository's own top-level
    # ``migrate`` package (DeepGNN has one) and take the tool's submodules from whatever is
    # installed: the checkout this script belongs to goes first on the path instead
    start = f"import runpy, sys; sys.path.insert(0, {str(HERE.parent)!r}); runpy.run_module('migrate', run_name='__main__')"
    command = [sys.executable, "-c", start, "--to", "native", "--allow-no-vcs", "--output-format", "json"]
    command += [*extra, "."]
    # the checkout this script belongs to, whatever is installed (a worktree measures its own code)
    path = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})
    try:
        document = json.loads(done.stdout)
    except json.JSONDecodeError:
        document = {"findings": [], "summary": {"changed_files": [], "internal_errors": 1}}
        sys.stderr.write(f"{tree}: no JSON from the tool (exit {done.returncode}):\n{done.stderr[-2000:]}\n")
    document["exit"] = done.returncode
    return document


def _git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=True).stdout


def _first_reason(findings: List[dict], path: str) -> str:
    """The first finding of ``path`` that asks for manual work; else the first one the tool
    did not fix (an apex kernel kept because torch has no equivalent, an apex availability
    probe left as it is: the file keeps apex for that, with no work asked)."""
    own = [f for f in findings if f.get("path", "").lstrip("./") == path]
    for wanted in (lambda f: f.get("needs_manual_work"), lambda f: not f.get("fixed")):
        for finding in own:
            if wanted(finding):
                return f"{finding['code']} line {finding.get('line', 0)}: {finding['message']}"
    return "no finding names this file"


def _apex_copies(findings: List[dict]) -> List[str]:
    """The folders the tool reported as copies of apex itself, as ``dir/`` prefixes (``""``:
    the whole tree)."""
    folders = []
    for finding in findings:
        if finding.get("code") == VENDORED_APEX:
            folder = finding.get("path", "").strip("/")
            folders.append("" if folder in ("", ".") else folder + "/")
    return folders


def measure(entry: Entry, root: Path, out: Path) -> Outcome:
    source = root / (entry.checkout or entry.name) / entry.subdir
    if not source.is_dir():
        raise SystemExit(f"{source} is missing: extract {entry.github}@{entry.commit} there first")
    outcome = Outcome(entry.name, entry.group)
    with tempfile.TemporaryDirectory(prefix="apexcompat-corpus-") as scratch:
        tree = Path(scratch) / entry.name
        shutil.copytree(source, tree, symlinks=True)
        _git(tree, "init", "-q")
        _git(tree, "add", "-A")
        _git(tree, "-c", "user.name=corpus", "-c", "user.email=corpus@localhost", "commit", "-qm", "before")
        outcome.amp_files = _amp_files(tree)
        first = _migrate(tree)
        (out / f"{entry.name}.json").write_text(json.dumps(first, indent=1) + "\n")
        summary = first["summary"]
        outcome.exit_status = first["exit"]
        outcome.internal_errors = int(summary.get("internal_errors", 0)) + (first["exit"] == 2)
        copies = _apex_copies(first["findings"])
        outcome.in_apex_copies = [p for p in outcome.amp_files if any(p.startswith(c) for c in copies)]
        outcome.amp_files = [p for p in outcome.amp_files if p not in outcome.in_apex_copies]
        for relative in outcome.amp_files:
            if ANY_APEX_IMPORT.search(_code(_read(tree / relative))):
                outcome.left[relative] = _first_reason(first["findings"], relative)
            else:
                outcome.native.append(relative)
        # the tool lists changed files only with --check/--diff: ask git which it rewrote
        rewritten = [name for name in _git(tree, "diff", "--name-only", "-z").split("\0") if name]
        outcome.changed_files = len(rewritten)
        for relative in rewritten:
            if not relative.endswith(".py"):
                continue
            path = tree / relative
            try:
                compile(path.read_bytes(), str(path), "exec")
            except (SyntaxError, ValueError, OSError):
                outcome.not_compiling.append(relative)
        diff = _git(tree, "diff")
        (out / f"{entry.name}.diff").write_text(diff)
        outcome.diff_sha = subprocess.run(
            ["git", "hash-object", "--stdin"], input=diff, capture_output=True, text=True
        ).stdout.strip()
        _git(tree, "add", "-A")
        _git(tree, "-c", "user.name=corpus", "-c", "user.email=corpus@localhost", "commit", "-qm", "after", "--allow-empty")
        second = _migrate(tree, "--check")
        outcome.second_run_changes = list(second["summary"].get("changed_files", []))
    return outcome


def _print(outcomes: List[Outcome], baseline: Optional[Dict[str, dict]]) -> None:
    groups: Dict[str, List[int]] = {}
    for outcome in outcomes:
        total, native = len(outcome.amp_files), len(outcome.native)
        flags = []
        if outcome.in_apex_copies:
            flags.append(f"{len(outcome.in_apex_copies)} more inside copies of apex (not counted)")
        if outcome.internal_errors:
            flags.append(f"{outcome.internal_errors} internal error(s)")
        if outcome.not_compiling:
            flags.append(f"not compiling: {', '.join(outcome.not_compiling)}")
        if outcome.second_run_changes:
            flags.append(f"second run rewrites: {', '.join(outcome.second_run_changes)}")
        if baseline is not None:
            before = baseline.get(outcome.name)
            if before is None:
                flags.append("new")
            elif before.get("diff_sha") != outcome.diff_sha:
                flags.append(f"output changed (native {len(before['native'])} -> {native})")
        print(f"{outcome.group:8} {outcome.name:34} {native:3}/{total:<3} {'; '.join(flags)}")
        for path, reason in outcome.left.items():
            print(f"{'':12}{path}: {reason[:160]}")
        counts = groups.setdefault(outcome.group, [0, 0, 0, 0])
        counts[0] += native
        counts[1] += total
        counts[2] += outcome.internal_errors
        counts[3] += len(outcome.in_apex_copies)
    print()
    for group, (native, total, errors, copied) in sorted(groups.items()):
        share = f"{100 * native / total:.0f}%" if total else "-"
        print(f"{group:8} native {native}/{total} ({share}), internal errors {errors}, in copies of apex {copied}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="folder holding one extracted checkout per entry (ROOT/<name>)")
    parser.add_argument("--manifest", type=Path, default=HERE / "corpus.toml")
    parser.add_argument("--out", type=Path, default=Path("corpus-results"), help="where diffs and results go")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="only these entries (or groups)")
    parser.add_argument("--baseline", type=Path, help="an earlier --out folder to compare the outputs with")
    args = parser.parse_args(argv)
    entries = load_manifest(args.manifest)
    if args.only:
        entries = [e for e in entries if e.name in args.only or e.group in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    baseline = None
    if args.baseline is not None:
        baseline = {o["name"]: o for o in json.loads((args.baseline / "results.json").read_text())}
    outcomes = [measure(entry, args.root.resolve(), args.out) for entry in entries]
    (args.out / "results.json").write_text(json.dumps([asdict(o) for o in outcomes], indent=1) + "\n")
    _print(outcomes, baseline)
    broken = any(o.internal_errors or o.not_compiling or o.second_run_changes for o in outcomes)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
