"""Turn .ci/matrix result lines (TSV) into the Markdown support table of docs/support-matrix.md.

    python .ci/matrix-table.py results.tsv [more.tsv ...] [--logs DIR ...]

With ``--logs`` the failing test ids of each env (pytest's ``FAILED``/``ERROR`` summary lines in
``DIR/ENV.log``, first directory that has the log) are listed under the table. A later line for
the same env wins, across files too.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

FIELDS = ["env", "torch", "rc", "passed", "failed", "skipped", "errors", "seconds", "status", "commit", "tests"]


def read_results(paths: list[Path]) -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = {k: "-" for k in FIELDS}
                row.update(zip(FIELDS, line.split("\t")))
                rows[row["env"]] = row
    return rows


def env_sort_key(env: str) -> tuple:
    m = re.fullmatch(r"torch(\d+)\.(\d+)(\w*)", env)
    return (int(m[1]), int(m[2]), m[3]) if m else (99, 99, env)


def result_word(row: dict[str, str]) -> str:
    return {"passed": "pass", "failed": "**FAIL**", "skipped-disk": "skipped (disk)", "no-tests": "no tests"}.get(
        row["status"], row["status"]
    )


def failures(log: Path) -> list[str]:
    if not log.is_file():
        return []
    text = log.read_text(encoding="utf-8", errors="replace")
    return re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.M)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--logs", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    rows = read_results(args.results)
    print("| tox env | torch | tests | result | passed | failed | skipped | errors | env wall time | commit |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for env in sorted(rows, key=env_sort_key):
        r = rows[env]
        tests = "whole suite" if r["tests"] in ("all", "-") else f"`{r['tests']}`"
        print(
            f"| `{env}` | {r['torch']} | {tests} | {result_word(r)} | {r['passed']} | {r['failed']} | {r['skipped']} "
            f"| {r['errors']} | {r['seconds']} s | `{r['commit']}` |"
        )
    failing: dict[str, list[str]] = {}
    for env in sorted(rows, key=env_sort_key):
        logs = [d / f"{env}.log" for d in args.logs if (d / f"{env}.log").is_file()]
        for test_id in failures(logs[0]) if logs else []:
            failing.setdefault(test_id, []).append(env)
    if failing:
        print("\nFailing tests, with the envs they failed in:\n")
        for test_id, envs in failing.items():
            print(f"- `{test_id}`: " + ", ".join(f"`{e}`" for e in envs))

if __name__ == "__main__":
    main()
