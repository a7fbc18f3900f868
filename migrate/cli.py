"""The command line: ``apexcompat-migrate PATH...`` (and ``python -m migrate``).

Rewrites in place by default (refusing files with uncommitted git changes unless
``--allow-dirty``, and anything outside a git work tree unless ``--allow-no-vcs``); ``--diff``
prints a ``git apply``-able diff and ``--check`` only reports, neither writes, and both name
each file that would change.  Settings also come from ``[tool.apexcompat-migrate]`` in the
nearest ``pyproject.toml`` (``config``); flags win.  ``--explain APXnnn`` describes a code.
Exit status: 0 done with nothing left, 1 changes pending (``--check`` / ``--diff``) or sites
needing manual work or files that could not be parsed or written, 2 usage or internal error
(1 wins while work is left, so CI always sees it).  Heavy imports (LibCST, the rules) happen
only once a file passes the byte prefilter.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, Dict, List, NoReturn, Optional, Sequence, Tuple

from .codes import DIRTY, DRIVER_CODES, TOO_LARGE, UNREADABLE, WRITE_FAILED
from .color import CHOICES as COLOR_CHOICES
from .color import Palette, wants_color
from .config import ConfigError, FileConfig
from .findings import Finding
from .report import (
    FORMATS,
    RunStats,
    changed_files,
    render_github,
    render_json,
    render_text,
    shown,
    summary_line,
    unified_diff,
)
from .settings import DEFAULT_TARGET_TORCH, DTYPES, SUPPORTED_TORCH, TARGETS, Settings
from .suppress import Suppression
from .torch_version import installed_torch_version

if TYPE_CHECKING:
    from .early_pool import Workers
    from .legacy_syntax import Repair
    from .progress import Progress

PROG = "apexcompat-migrate"
DEFAULT_MAX_MB = 1.0


class UsageError(Exception):
    """Bad arguments: reported as ``apexcompat-migrate: error: ...`` with exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Rewrite apex (apex.amp, apex.parallel, apex.fp16_utils, fused kernels) "
        "training code into native PyTorch. Rewrites files in place; use --diff or --check "
        "to only look.",
        epilog="Exit status: 0 nothing to do or left; 1 changes pending (--check, --diff), sites needing "
        "manual work, or files that could not be parsed or written; 2 usage or internal error. "
        "Settings are also read from [tool.apexcompat-migrate] in the nearest pyproject.toml (flags win). "
        "A comment '# apexcompat: ignore[APXnnn]' on a reported line silences that finding.",
    )
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or directories; '-' reads stdin and writes stdout"
    )
    parser.add_argument(
        "--explain", metavar="APXnnn", help="describe a finding code: what it means, an example, what to do by hand"
    )
    mode = parser.add_argument_group("what to do")
    mode.add_argument("--diff", action="store_true", help="print a git-apply-able unified diff instead of writing")
    mode.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if anything would change or needs manual work"
    )
    mode.add_argument(
        "--allow-dirty", action="store_true", help="also rewrite files that have uncommitted changes in git"
    )
    mode.add_argument(
        "--allow-no-vcs",
        action="store_true",
        help="rewrite in place also outside a git work tree (no way back but your own backup)",
    )
    rules = parser.add_argument_group("what to migrate to")
    rules.add_argument(
        "--to",
        choices=TARGETS,
        default=None,
        help="native: plain PyTorch (default); shim: apexcompat.amp, the smallest change",
    )
    rules.add_argument(
        "--dtype",
        choices=DTYPES,
        default=None,
        help="native autocast dtype (default float16); bfloat16 also drops the GradScaler: no loss scaling",
    )
    rules.add_argument(
        "--target-torch",
        metavar="X.Y",
        help="oldest torch the migrated code must run on, %d.%d or newer (default: the installed torch, else %d.%d)"
        % (SUPPORTED_TORCH[0] + DEFAULT_TARGET_TORCH),
    )
    rules.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="CODES",
        help="only these rule codes or prefixes (comma-separated, e.g. APX1,APX301)",
    )
    rules.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODES",
        help="skip these rule codes or prefixes (comma-separated)",
    )
    files = parser.add_argument_group("which files")
    files.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip paths matching GLOB while walking directories (repeatable)",
    )
    files.add_argument(
        "--max-file-size",
        type=float,
        default=DEFAULT_MAX_MB,
        metavar="MB",
        help="files larger than this are not rewritten: skipped when they do not import apex, "
        "reported (APX010) when they do (default: %(default)s)",
    )
    files.add_argument("--stdin-filename", metavar="PATH", help="the name to report for source read from stdin ('-')")
    files.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE (a pyproject.toml's [tool.apexcompat-migrate] table, or a TOML file of "
        "those keys) instead of the nearest pyproject.toml",
    )
    output = parser.add_argument_group("how to run and report")
    output.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes (default: the number of CPUs)")
    output.add_argument(
        "--output-format",
        choices=FORMATS,
        default="text",
        help="findings as text (default), json or GitHub annotations",
    )
    output.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only what needs action (and, with --check/--diff, the files that would change); "
        "no summary, no progress",
    )
    output.add_argument(
        "--show-unused-suppressions",
        action="store_true",
        help="report suppression comments that silence nothing (APX011, exit status 1)",
    )
    output.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour the text output: auto (default: on a terminal, unless NO_COLOR is set), always, never",
    )
    output.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    return parser


def _version() -> str:
    from importlib import import_module

    return getattr(import_module(__package__ or "migrate"), "__version__", "unknown")


def _codes(values: Sequence[str]) -> List[str]:
    return [c.strip().upper() for v in values for c in v.split(",") if c.strip()]


def _known_codes() -> List[str]:
    from .triggers import RULES_ENV, imported_rule_triggers, static_rule_triggers

    table = None if os.environ.get(RULES_ENV) else static_rule_triggers()
    if table is None:
        table = imported_rule_triggers()
    return sorted({c for codes, _ in table for c in codes} | set(DRIVER_CODES))


def parse_target_torch(text: str, where: str = "--target-torch") -> Tuple[int, int]:
    """``"2.4"`` (or ``"2.4.1"``) -> ``(2, 4)``; unparsable or older than the oldest supported
    torch is a usage error that names the supported range."""
    low, high = SUPPORTED_TORCH
    supported = f"supported: {low[0]}.{low[1]} to {high[0]}.{high[1]}"
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    if not match:
        raise UsageError(f"{where} takes a torch version like 2.4, not {text!r} ({supported})")
    version = (int(match[1]), int(match[2]))
    if version < low:
        raise UsageError(
            f"{where} {text.strip()} is older than the oldest torch the migrated code can target ({supported}); "
            "torch.amp and torch.autocast need at least that"
        )
    return version


def make_settings(args: argparse.Namespace, config: Optional[FileConfig] = None) -> Settings:
    """The run's settings: the flags, then the configuration file for what they leave unset."""
    config = config or FileConfig()
    if args.target_torch is not None:
        target_torch = parse_target_torch(args.target_torch)
    elif config.target_torch is not None:
        target_torch = parse_target_torch(config.target_torch, f"target-torch in {config.path}")
    else:
        target_torch = installed_torch_version() or DEFAULT_TARGET_TORCH
    select = _codes(args.select) or _codes(config.select)
    ignore = _codes(args.ignore) or _codes(config.ignore)
    if select or ignore:
        known = _known_codes()
        for code in select + ignore:
            if not any(k.startswith(code) for k in known):
                from_flags = code in _codes(args.select + args.ignore)
                where = "--select/--ignore" if from_flags else f"select/ignore in {config.path}"
                raise UsageError(f"unknown rule code or prefix {code!r} in {where} (known codes: {', '.join(known)})")
    return Settings(
        target=args.to or config.target or "native",
        target_torch=target_torch,
        select=frozenset(select) if select else None,
        ignore=frozenset(ignore),
        dtype=args.dtype or config.dtype or "float16",
    )


def _git_top(directory: str) -> Optional[str]:
    """The top of the git work tree holding ``directory`` (a ``.git`` entry), else None."""
    current = directory
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _under(path: str, directory: str) -> bool:
    return os.path.commonpath([path, directory]) == directory


def diff_paths(paths: Sequence[str], cwd: Optional[str] = None) -> Tuple[str, List[str]]:
    """The directory a ``--diff`` is applied in, and each file's path relative to it (forward
    slashes, no ``..``: ``git apply`` refuses those, and absolute ones).  That is the current
    directory when every file lies below it (the paths are those the findings show); else the
    top of the current directory's git work tree when it holds them all (where ``git diff``
    paths start); else the deepest directory holding the current one and every file."""
    cwd = os.path.abspath(cwd or os.getcwd())
    files = [os.path.normpath(os.path.join(cwd, p)) for p in paths]
    base = cwd
    if not all(_under(f, cwd) for f in files):
        top = _git_top(cwd)
        if top is not None and all(_under(f, top) for f in files):
            base = top
        else:
            base = os.path.commonpath([cwd] + [os.path.dirname(f) for f in files])
    return base, [os.path.relpath(f, base).replace(os.sep, "/") for f in files]


class Run:
    """One invocation: walks, prefilters, migrates, writes or prints, and reports."""

    def __init__(self, args: argparse.Namespace, settings: Settings) -> None:
        self.args = args
        self.settings = settings
        self.mode = "check" if args.check else "diff" if args.diff else "write"
        self.stats = RunStats(mode=self.mode)
        # stdout carries the diff (or the code, for stdin): then findings go to stderr
        self.findings_stream = sys.stderr if (args.diff or self._stdin_mode()) else sys.stdout
        #: (real path, old, new) of each file ``--diff`` prints, in walk order
        self.diffs: List[Tuple[str, bytes, bytes]] = []
        #: shown path -> the suppression comments of that file (files that have any)
        self.suppressions: Dict[str, List[Suppression]] = {}
        self.palette = Palette(args.output_format == "text" and wants_color(args.color, self.findings_stream))

    def _note_suppressions(self, shown_path: str, source: bytes) -> None:
        from .suppress import suppressions_in

        found = suppressions_in(source)
        if found:
            self.suppressions[shown_path] = found

    def _stdin_mode(self) -> bool:
        return self.args.paths == ["-"]

    def _driver_code_shown(self, code: str) -> bool:
        return not any(code.startswith(p) for p in self.settings.ignore)

    def add(self, findings: Sequence[Finding]) -> None:
        self.stats.findings.extend(f for f in findings if f.code not in DRIVER_CODES or self._driver_code_shown(f.code))

    def triggers(self) -> Optional[Tuple[bytes, ...]]:
        from .triggers import ADMISSION, RULES_ENV, enabled_triggers

        if self.settings.select is None and not self.settings.ignore and not os.environ.get(RULES_ENV):
            return ADMISSION  # every registered code is on: their literals need not be read
        return enabled_triggers(self.settings.code_enabled)

    # -- the stdin form -----------------------------------------------------------------
    def run_stdin(self) -> None:
        from .walk import prefilter

        source = sys.stdin.buffer.read()
        path = self.args.stdin_filename or "-"
        self.stats.checked = 1
        self._note_suppressions(path, source)
        new = source
        if prefilter(source, self.triggers()):
            from .legacy_syntax import repaired
            from .pipeline import migrate_all

            repair = repaired(source)
            (result,) = list(migrate_all([(path, source if repair is None else repair.source)], self.settings, 1))
            if repair is not None:
                repair.as_read(result)
            self.stats.parsed = 1
            self.add(result.all_findings())
            new = result.new
        if new != source:
            self.stats.changed = 1
            if self.mode != "write":
                self.stats.changed_paths.append(path)
        if self.mode == "write":
            sys.stdout.buffer.write(new)
        elif self.mode == "diff" and new != source:
            sys.stdout.buffer.write(unified_diff(source, new, path))
        sys.stdout.flush()

    # -- files and directories ----------------------------------------------------------
    def run_paths(self) -> None:
        from .pipeline import default_workers
        from .progress import Progress
        from .walk import walk

        walked = walk(self.args.paths, exclude=self.args.exclude)
        if walked.missing:
            raise UsageError("no such file or directory: " + ", ".join(walked.missing))
        self.add(walked.findings)
        self.stats.checked = len(walked.files)
        progress = Progress(len(walked.files), enabled=not self.args.quiet)
        workers = self.args.jobs or default_workers()
        started: List["Workers"] = []  # the worker processes, once ``_read`` starts them
        try:
            jobs, where, repairs, others = self._read(walked.files, progress, workers, started)
            self.stats.parsed = len(jobs)
            if jobs:
                from .pipeline import migrate_repository
                from .write import DirtyGuard

                guard = None if (self.mode != "write" or self.args.allow_dirty) else DirtyGuard()
                results = migrate_repository(
                    jobs, where, self.settings, workers, self.args.paths, others, started[0] if started else None
                )
                for i, repair in repairs.items():
                    repair.as_read(results[i])
                # past the jobs: files without apex.amp the plan edits (callers of a model factory)
                edited = {shown: path for path, shown, _source in others}
                where += [edited[result.path] for result in results[len(where) :]]
                for path, result in zip(where, results):
                    self.add(result.all_findings())
                    if result.changed:
                        self.stats.changed += 1
                        self._emit(path, result.path, result.old, result.new, guard)
                    progress.advance()
        finally:
            for processes in started:
                processes.terminate()  # the run terminates them itself, unless it failed before
        progress.close()

    def _read(
        self, files: Sequence[Tuple[str, str]], progress: "Progress", workers: int, started: List["Workers"]
    ) -> Tuple[List[Tuple[str, bytes]], List[str], Dict[int, "Repair"], List[Tuple[str, str, bytes]]]:
        """Read ``files`` (real path, shown path): the jobs the prefilter admits (shown path,
        source to migrate) with their real paths, the repairs of old syntax by job index,
        and the files left out (real path, shown path, source: the cross-file plan looks
        for callers there).  Once enough files are admitted to pay for all ``workers``, the
        worker processes are started (into ``started``): they load LibCST and the rules
        while the rest of the tree is read."""
        from .early_pool import start_workers
        from .legacy_syntax import repaired
        from .pipeline import MIN_FILES_PER_WORKER
        from .walk import prefilter

        triggers = self.triggers()
        jobs: List[Tuple[str, bytes]] = []
        where: List[str] = []
        repairs: Dict[int, "Repair"] = {}
        others: List[Tuple[str, str, bytes]] = []
        for path, shown_path in files:
            try:
                with open(path, "rb") as fh:
                    source = fh.read()
            except OSError as exc:
                self.add([Finding(shown_path, 0, 0, UNREADABLE, f"could not read the file: {exc.strerror or exc}")])
                progress.advance()
                continue
            self._note_suppressions(shown_path, source)
            if prefilter(source, triggers) and self._small_enough(source, shown_path):
                repair = repaired(source)  # an old script Python 3 refuses (``legacy_syntax``)
                if repair is not None:
                    repairs[len(jobs)] = repair
                jobs.append((shown_path, source if repair is None else repair.source))
                where.append(path)
                if workers > 1 and not started and len(jobs) == MIN_FILES_PER_WORKER * workers:
                    started.append(start_workers(self.settings, workers))
            else:
                if self.settings.target == "native":
                    others.append((path, shown_path, source))
                progress.advance()
        return jobs, where, repairs, others

    def _small_enough(self, source: bytes, shown_path: str) -> bool:
        """Large files go to the rewriter only below the limit; above it, a file that
        imports apex is reported and one that does not is skipped."""
        limit = self.args.max_file_size * 1024 * 1024
        if len(source) <= limit:
            return True
        from .walk import imports_apex

        if imports_apex(source):
            self.add(
                [
                    Finding(
                        shown_path,
                        0,
                        0,
                        TOO_LARGE,
                        f"file is {len(source) / 1048576:.1f} MB, above --max-file-size "
                        f"{self.args.max_file_size:g} MB, and imports apex: not rewritten; "
                        "migrate it by hand or raise the limit",
                    )
                ]
            )
        return False

    def _emit(self, path: str, shown_path: str, old: bytes, new: bytes, guard) -> None:
        from .write import WriteRefused, atomic_write

        if self.mode != "write":
            self.stats.changed_paths.append(shown_path)
        if self.mode == "diff":
            self.diffs.append((path, old, new))
            return
        if self.mode == "check":
            return
        problem = guard.problem(path) if guard is not None else None
        if problem is not None:
            self.add([Finding(shown_path, 0, 0, DIRTY, problem)])
            self.stats.changed -= 1
            return
        try:
            atomic_write(path, new)
        except WriteRefused as refused:
            self.add([Finding(shown_path, 0, 0, refused.code, refused.message)])
            self.stats.changed -= 1
        except OSError as exc:
            self.add(
                [
                    Finding(
                        shown_path,
                        0,
                        0,
                        WRITE_FAILED,
                        f"could not write the file, original left intact: {exc.strerror or exc}",
                    )
                ]
            )
            self.stats.changed -= 1

    # -- reporting ----------------------------------------------------------------------
    def report(self) -> int:
        if self.diffs:
            base, names = diff_paths([path for path, _, _ in self.diffs])
            if base != os.getcwd():
                sys.stderr.write(f"{PROG}: the diff's paths are relative to {base}: apply it there (git apply)\n")
            sys.stdout.flush()
            sys.stdout.buffer.write(
                b"".join(unified_diff(old, new, name) for (_, old, new), name in zip(self.diffs, names))
            )
            sys.stdout.flush()
        from .suppress import apply

        kept, self.stats.suppressed, unused = apply(
            self.stats.findings, self.suppressions, self.settings, report_unused=self.args.show_unused_suppressions
        )
        self.stats.findings = sorted(kept + unused, key=lambda f: (f.path, f.line, f.col, f.code, f.message))
        stream = self.findings_stream
        fmt = self.args.output_format
        if fmt == "json":
            stream.write(render_json(self.stats))
        else:
            visible = shown(self.stats.findings, quiet=self.args.quiet)
            paint = self.palette
            stream.write(render_github(visible) if fmt == "github" else render_text(visible, paint))
            stream.write(changed_files(self.stats, paint))
            if not self.args.quiet:
                stream.write(paint(summary_line(self.stats), "bold") + "\n")
        stream.flush()
        status = self.stats.exit_status()
        if status == 2:
            sys.stderr.write(
                f"{PROG}: error: a rule failed on some files (APX002 above); those files were "
                "left unchanged. Please report it with the file; meanwhile --ignore the codes "
                "named there to migrate the rest.\n"
            )
        return status


def refuse_outside_vcs(paths: Sequence[str]) -> None:
    """In-place rewrites need a git work tree to undo them (cargo fix's rule)."""
    folders = {p: os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p))) for p in paths}
    outside = [p for p, folder in folders.items() if os.path.exists(p) and _git_top(folder) is None]
    if outside:
        raise UsageError(
            f"{', '.join(outside)}: not inside a git work tree, so an in-place rewrite could not be undone; "
            "commit the files to git first, look with --diff or --check, or pass --allow-no-vcs to write anyway"
        )


def _explain(code: str) -> int:
    from .explain import UnknownCode, explain

    try:
        text = explain(code)
    except UnknownCode as exc:
        raise UsageError(f"--explain: {exc}") from None
    sys.stdout.write(text)
    return 0


def command() -> NoReturn:
    """The ``apexcompat-migrate`` command (and ``python -m migrate``): ``main`` on the
    command line's arguments, then the process ends at once with its status.  A run leaves
    a large heap behind (the plan, the index's trees); tearing the interpreter down freed it
    object by object, for a process about to end (as long as a few files' migration on a big
    tree).  The output is flushed first; the run has closed every file it wrote and stopped
    its workers.  ``main`` itself returns, for a program that calls it."""
    from .stdlib_trees import leave_to_exit

    leave_to_exit()  # nor are the index's trees freed at the end of the run
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.explain is not None:
            return _explain(args.explain)
        if not args.paths:
            raise UsageError("no paths given: pass files or directories to migrate (or '-' for stdin)")
        if "-" in args.paths and len(args.paths) > 1:
            raise UsageError("'-' (stdin) cannot be combined with other paths")
        if args.stdin_filename and args.paths != ["-"]:
            raise UsageError("--stdin-filename only goes with '-' (reading stdin)")
        if args.max_file_size <= 0:
            raise UsageError("--max-file-size must be positive")
        if args.jobs is not None and args.jobs < 1:
            raise UsageError("--jobs must be at least 1")
        from .config import load

        try:
            config = load(args.paths, args.config)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        if not args.exclude:
            args.exclude = list(config.exclude)
        settings = make_settings(args, config)
        if not (args.check or args.diff or args.allow_no_vcs or args.paths == ["-"]):
            refuse_outside_vcs(args.paths)
        run = Run(args, settings)
        if args.paths == ["-"]:
            run.run_stdin()
        else:
            run.run_paths()
        return run.report()
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted; files already written are complete, the rest untouched\n")
        return 130
    except Exception as exc:  # a bug of ours: say what to do instead of a bare traceback
        import traceback

        traceback.print_exc()
        sys.stderr.write(
            f"{PROG}: internal error: {type(exc).__name__}: {exc}. Please report it with the "
            "traceback above; files written so far are complete, the others untouched.\n"
        )
        return 2
