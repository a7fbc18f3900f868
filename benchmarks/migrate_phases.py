"""Where does a ``--check -j 1`` run of ``apexcompat-migrate`` spend its time?

``python benchmarks/migrate_phases.py TREE`` runs the migrator over TREE in this process
(``-j 1``, ``--check``, nothing written) with timers around the phases the speed work
targets, and prints three tables on stderr:

- phases: the file-level migration, the rules, and inside them the metadata the engine
  resolves again after every rule that changed the text (scope analysis, parent links,
  expression contexts) and the re-parse of the changed statements;
- rules: per rule, how often it ran, how often it changed the text, its seconds;
- files: the slowest files, with the rules that changed them.

Wall seconds of ``time.perf_counter``; the phases nest (scopes run inside rules), so they
do not add up.  Run it from a checkout with ``PYTHONPATH`` set to it.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from typing import Any, Callable, Counter, Dict, List, Tuple


def _timed(owner: Any, name: str, key: str, seconds: Counter, calls: Counter, undo: List[Callable[[], None]]) -> None:
    """Replace ``owner.name`` by a wrapper adding its wall time to ``seconds[key]``; ``undo``
    gets what puts it back."""
    inner: Callable[..., Any] = getattr(owner, name)
    undo.append(lambda: setattr(owner, name, inner))

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            seconds[key] += time.perf_counter() - start
            calls[key] += 1

    setattr(owner, name, wrapper)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree")
    parser.add_argument("--files", type=int, default=15, help="slowest files shown")
    args = parser.parse_args(argv)

    from migrate import cli, engine
    from migrate.rules import _metadata

    seconds: Counter = collections.Counter()
    calls: Counter = collections.Counter()
    undo: List[Callable[[], None]] = []
    for owner, name, key in [
        (engine, "migrate_source", "migrate_source"),
        (engine, "resolve_scopes", "scope analysis"),
        (engine, "expression_contexts", "expression contexts"),
        (engine, "next_tree", "re-parse"),
        (_metadata.ParentProvider, "_gen_impl", "parent links"),
    ]:
        _timed(owner, name, key, seconds, calls, undo)

    per_rule: Dict[str, List[float]] = collections.defaultdict(lambda: [0, 0, 0.0])
    shared = engine._shared

    def timed_shared(rule_cls: type) -> type:
        cls = shared(rule_cls)
        if "_phase_timed" in vars(cls):
            return cls
        transform = cls.transform_module

        def transform_module(self: Any, tree: Any) -> Any:
            start = time.perf_counter()
            out = transform(self, tree)
            row = per_rule[rule_cls.__name__]
            row[0] += 1
            row[1] += out is not tree
            row[2] += time.perf_counter() - start
            return out

        cls.transform_module = transform_module  # type: ignore[attr-defined]
        cls._phase_timed = True  # type: ignore[attr-defined]
        return cls

    undo.append(lambda: setattr(engine, "_shared", shared))
    engine._shared = timed_shared

    per_file: List[Tuple[float, str, List[str]]] = []
    run_rules = engine._run_rules

    def timed_run_rules(module: Any, source: bytes, path: str, *rest: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = run_rules(module, source, path, *rest, **kwargs)
        per_file.append((time.perf_counter() - start, path, [r.__name__ for r in result[1]]))
        return result

    undo.append(lambda: setattr(engine, "_run_rules", run_rules))
    engine._run_rules = timed_run_rules
    old = os.getcwd()
    os.chdir(args.tree)
    start = time.perf_counter()
    try:
        code = cli.main(["--check", "-j", "1", "."])
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    finally:
        os.chdir(old)
        for step in reversed(undo):
            step()
        engine._SHARED_CLASSES.clear()  # their transform_module is timed
    total = time.perf_counter() - start
    out = sys.stderr
    print(f"\nwhole run {total:.2f} s (exit {code})", file=out)
    print(f"rules over {len(per_file)} files {sum(row[0] for row in per_file):.2f} s", file=out)
    for key, value in seconds.most_common():
        print(f"  {key:22s} {calls[key]:6d} calls {value:7.2f} s", file=out)
    print("rules (runs, changed, seconds):", file=out)
    for name, (runs, changed, spent) in sorted(per_rule.items(), key=lambda item: -item[1][2]):
        print(f"  {name:32s} {runs:5d} {changed:5d} {spent:7.2f}", file=out)
    print("slowest files:", file=out)
    for spent, path, changed_by in sorted(per_file, reverse=True)[: args.files]:
        print(f"  {spent:5.2f} {path} changed by {', '.join(changed_by) or 'none'}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
