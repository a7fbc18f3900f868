"""README's relative links resolve, and excerpts of tool output quoted in README/docs are
still what the tool prints (``<!-- excerpt-of: apexcompat-migrate ARGS -->`` before a block).

Links inside docs/ are checked by the strict Sphinx build (docs/build.sh); README.md is not
part of the site, so its links are checked here."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docs_codeblocks import parse_blocks

REPO_ROOT = Path(__file__).resolve().parents[2]
README = REPO_ROOT / "README.md"
EXCERPT = re.compile(r"^<!-- excerpt-of: apexcompat-migrate (?P<args>.+?) -->$", re.M)


def test_readme_relative_links_resolve():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert local, "README links to the docs"
    missing = [link for link in local if not (REPO_ROOT / link).exists()]
    assert not missing, missing


def _excerpts():
    for page in [README, *sorted((REPO_ROOT / "docs").rglob("*.md"))]:
        if "_build" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        for match in EXCERPT.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            block = next(b for b in parse_blocks(text) if b.line > line)
            yield pytest.param(match.group("args"), block.source, id=f"{page.name}:{line}")


@pytest.mark.parametrize("args,excerpt", list(_excerpts()))
def test_quoted_tool_output_is_real(tmp_path: Path, args: str, excerpt: str):
    argv = shlex.split(args)
    for arg in argv:  # copy the paths the command names, so the diff paths are the same
        source = REPO_ROOT / arg
        if not arg.startswith("-") and source.exists():
            shutil.copytree(source, tmp_path / arg, ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-m", "migrate", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    actual = proc.stdout.splitlines()
    position = 0
    for line in excerpt.splitlines():
        assert line in actual[position:], f"not in the real output (in this order): {line!r}\n{proc.stdout}"
        position = actual.index(line, position) + 1


def test_commands_in_shell_blocks_name_existing_files():
    """``python some/path.py`` and ``apexcompat-migrate ... examples/x`` in README/docs shell
    blocks point at files and folders of this repository."""
    pages = [README, *sorted((REPO_ROOT / "docs").rglob("*.md"))]
    checked = 0
    for page in pages:
        if "_build" in page.parts:
            continue
        for block in parse_blocks(page.read_text(encoding="utf-8")):
            if block.lang not in ("bash", "sh", "console"):
                continue
            for path in re.findall(r"(?:python3? |apexcompat-migrate [^\n#]*?)((?:examples|docs|benchmarks)/[\w./-]+)", block.source):
                assert (REPO_ROOT / path).exists(), f"{page.name}:{block.line}: {path} does not exist"
                checked += 1
    assert checked >= 5
