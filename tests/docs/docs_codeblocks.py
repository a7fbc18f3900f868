"""Find the Python code blocks of the Markdown docs and run one page's blocks in order.

The rules a page's author follows (docs/README-style contract, enforced by
``test_docs_code_blocks.py``):

* Every fenced block whose language is ``python`` (or ``py``) is executed, in order, in one
  fresh interpreter per page, all blocks of the page sharing one namespace.
* A block whose first line is ``# not-run: <reason>`` is not executed; the reason is
  required.
* A block whose first line is ``# requires: torch>=X.Y (<why>)`` is skipped on older torch.
* A block whose first line is ``# slow: <reason>`` marks its page's test ``slow``.
* A fenced ``text`` block preceded by the line ``<!-- output -->`` must equal what the
  previous Python block printed to stdout (trailing whitespace of the whole ignored).
* Blocks inside a generated block (``<!-- generated: NAME ... -->``, see
  ``docs/scripts/generated_blocks.py``) are output of a real run, committed by
  ``docs/scripts/generate.py`` and checked by ``test_generated_blocks.py``: never executed.

Run as a script (``python docs_codeblocks.py PAGE.md RESULT.json``) it executes the page and
writes per-block stdout and status to RESULT.json; the tests drive it in a subprocess so
every page starts from a fresh interpreter and a fresh ``apexcompat.amp`` state.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "scripts"))
from generated_blocks import inside_generated  # noqa: E402

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
OUTPUT_MARKER = "<!-- output -->"
NOT_RUN = re.compile(r"^#\s*not-run\s*:(?P<reason>.*)$")
REQUIRES = re.compile(r"^#\s*requires\s*:\s*torch\s*>=\s*(?P<version>\d+\.\d+)\b.*$")
SLOW = re.compile(r"^#\s*slow\s*:(?P<reason>.*)$")
PYTHON_LANGS = {"python", "py", "python3"}


@dataclass
class Block:
    """One fenced block: ``lang`` is the first word of its info string."""

    lang: str
    source: str
    line: int  # 1-based line of the first source line
    expected_output: Optional[str] = None  # for Python blocks followed by an output block
    generated: bool = False  # inside a generated block: shown, not run

    @property
    def first_line(self) -> str:
        return self.source.split("\n", 1)[0].strip()

    @property
    def is_python(self) -> bool:
        return self.lang in PYTHON_LANGS

    def not_run_reason(self) -> Optional[str]:
        """``None`` if the block runs, else the reason given (possibly empty: an error)."""
        match = NOT_RUN.match(self.first_line)
        return match.group("reason").strip() if match else None

    def required_torch(self) -> Optional[str]:
        match = REQUIRES.match(self.first_line)
        return match.group("version") if match else None

    def is_slow(self) -> bool:
        return bool(SLOW.match(self.first_line))


def _info_lang(info: str) -> str:
    info = info.strip()
    directive = re.match(r"^\{(code-block|code|sourcecode)\}\s*(\S*)", info)
    if directive:
        return directive.group(2).lower()
    return info.split()[0].lower() if info else ""


def parse_blocks(text: str) -> List[Block]:
    """Every fenced block of a Markdown page, with Python blocks' expected outputs attached."""
    lines = text.split("\n")
    blocks: List[Block] = []
    generated_lines = inside_generated(text)
    pending_output_marker = False
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            if lines[i].strip() == OUTPUT_MARKER:
                pending_output_marker = True
            elif lines[i].strip():
                pending_output_marker = False
            i += 1
            continue
        fence, info = match.group("fence"), match.group("info")
        body: List[str] = []
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence[0] * len(fence)) and not lines[j].strip().strip(fence[0])
        ):
            body.append(lines[j])
            j += 1
        # MyST directive options (":caption: x") at the top of a {code-block} are not code.
        k = 0
        if info.strip().startswith("{"):
            while k < len(body) and body[k].startswith(":"):
                k += 1
        block = Block(lang=_info_lang(info), source="\n".join(body[k:]), line=i + 2 + k,
                      generated=any(i + 1 in region for region in generated_lines))
        if pending_output_marker:
            previous = next((b for b in reversed(blocks) if b.is_python), None)
            if previous is None or block.is_python:
                raise ValueError(f"line {i + 1}: {OUTPUT_MARKER} must follow a Python block and precede a text block")
            previous.expected_output = block.source
        blocks.append(block)
        pending_output_marker = False
        i = j + 1
    return blocks


def python_blocks(text: str) -> List[Block]:
    return [b for b in parse_blocks(text) if b.is_python and not b.generated]


def _torch_at_least(version: str) -> bool:
    import torch

    have = tuple(int(x) for x in re.findall(r"\d+", torch.__version__)[:2])
    return have >= tuple(int(x) for x in version.split("."))


def run_page(page: Path) -> List[dict]:
    """Run a page's Python blocks in order in this interpreter; one result per block."""
    namespace: dict = {"__name__": "__main__"}
    results = []
    failed = False
    for block in python_blocks(page.read_text(encoding="utf-8")):
        result = {"line": block.line, "status": "ran", "stdout": "", "error": ""}
        if block.not_run_reason() is not None:
            result["status"] = "not-run"
        elif failed:
            result["status"] = "after-failure"
        elif block.required_torch() and not _torch_at_least(block.required_torch()):
            result["status"] = "skipped-old-torch"
        else:
            # Pad with newlines so tracebacks point at the Markdown file's own line numbers.
            code = compile("\n" * (block.line - 1) + block.source, str(page), "exec")
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out):
                    exec(code, namespace)
            except BaseException:  # noqa: B036 - report everything, incl. SystemExit
                result["status"] = "failed"
                result["error"] = traceback.format_exc()
                failed = True
            result["stdout"] = out.getvalue()
        results.append(result)
    return results


def main(argv: List[str]) -> int:
    page, out_path = Path(argv[0]), Path(argv[1])
    results = run_page(page)
    out_path.write_text(json.dumps(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # the results are written: leave without the interpreter's teardown, where torch's
    # native thread pools once aborted the process ("terminate called without an active
    # exception", exit -6 in a CI run) after every block had passed
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
