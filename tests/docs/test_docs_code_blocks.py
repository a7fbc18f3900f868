"""Every Python code block in docs/ and README.md runs on the CPU (or says why it cannot).

Each page runs in a fresh interpreter (its blocks in order, one shared namespace), in a
temporary working directory; see ``docs_codeblocks.py`` for the markers a page may use.
Code inside generated blocks (``<!-- generated: ... -->``) is not run: it is the committed
output of the migrate rule examples and the shim's own runs, which their own tests execute
and ``test_generated_blocks.py`` compares with a fresh run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docs_api_examples import _resolve, documented_objects, literal_blocks
from docs_codeblocks import parse_blocks, python_blocks

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS_DIR = REPO_ROOT / "docs"
RUNNER = Path(__file__).resolve().parent / "docs_codeblocks.py"
SKIP_DIRS = {"_build", "scripts"}


def doc_pages():
    pages = [REPO_ROOT / "README.md"]
    for path in sorted(DOCS_DIR.rglob("*.md")):
        if not SKIP_DIRS.intersection(path.relative_to(DOCS_DIR).parts):
            pages.append(path)
    return [p for p in pages if p.exists()]


def _page_param(page: Path):
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    marks = [pytest.mark.slow] if any(b.is_slow() for b in blocks) else []
    return pytest.param(page, id=str(page.relative_to(REPO_ROOT)), marks=marks)


PAGES = doc_pages()
PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p.read_text(encoding="utf-8"))]


def test_docs_have_pages_with_code():
    assert len(PAGES_WITH_CODE) >= 5, [str(p) for p in PAGES_WITH_CODE]


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES])
def test_not_run_markers_give_a_reason(page: Path):
    for block in python_blocks(page.read_text(encoding="utf-8")):
        reason = block.not_run_reason()
        assert reason is None or len(reason) >= 5, (
            f"{page}:{block.line}: '# not-run:' needs a reason (at least a few words)"
        )


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES_WITH_CODE])
def test_code_blocks_run(page: Path, tmp_path: Path):
    result_file = tmp_path / "result.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("CUDA_VISIBLE_DEVICES", "")  # the docs promise CPU; keep GPU hosts honest
    proc = subprocess.run(
        [sys.executable, str(RUNNER), str(page), str(result_file)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(result_file.read_text(encoding="utf-8"))
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    assert len(results) == len(blocks)
    for block, result in zip(blocks, results):
        where = f"{page.relative_to(REPO_ROOT)}:{block.line}"
        assert result["status"] != "failed", f"{where} raised:\n{result['error']}"
        if block.expected_output is not None and result["status"] == "ran":
            assert result["stdout"].rstrip() == block.expected_output.rstrip(), (
                f"{where}: printed output differs from the page's output block"
            )


def test_parser_handles_markers_and_outputs():
    text = "\n".join([
        "```python", "print('a')", "```", "", "<!-- output -->", "```text", "a", "```",
        "````{code-block} python", ":caption: x", "# not-run: needs a GPU", "x = 1", "````",
        "```bash", "echo hi", "```",
    ])
    blocks = parse_blocks(text)
    assert [b.lang for b in blocks] == ["python", "text", "python", "bash"]
    first, _, second, _ = blocks
    assert first.expected_output == "a" and first.line == 2
    assert second.not_run_reason() == "needs a GPU" and second.line == 11


def test_runner_reports_failure_at_the_markdown_line(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n```python\n# comment\nraise ValueError(x)\n```\n")
    result_file = tmp_path / "r.json"
    subprocess.run([sys.executable, str(RUNNER), str(page), str(result_file)], check=True, cwd=tmp_path)
    results = json.loads(result_file.read_text())
    assert [r["status"] for r in results] == ["ran", "failed"]
    assert f'File "{page}", line 9' in results[1]["error"]


API_OBJECTS = documented_objects()


def test_api_page_documents_the_public_amp_functions():
    for name in ("initialize", "scale_loss", "master_params", "state_dict", "load_state_dict",
                 "register_half_function", "register_float_function", "register_promote_function",
                 "half_function", "float_function", "promote_function", "disable_casts", "init"):
        assert f"apexcompat.amp.{name}" in API_OBJECTS, name


@pytest.mark.parametrize("name", [
    n for n in API_OBJECTS if any(is_py for _, is_py in literal_blocks(_resolve(n).__doc__))
])
def test_api_docstring_examples_run(name: str, tmp_path: Path):
    """The examples in the docstrings rendered by docs/shim/api.md run too (or say why not)."""
    for code, _is_python in literal_blocks(_resolve(name).__doc__):
        first = code.splitlines()[0].strip()
        if first.startswith("# not-run:"):
            assert len(first.split(":", 1)[1].strip()) >= 5, f"{name}: '# not-run:' needs a reason"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("CUDA_VISIBLE_DEVICES", "")
    proc = subprocess.run([sys.executable, str(RUNNER.with_name("docs_api_examples.py")), name],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"a docstring example of {name} failed:\n{proc.stderr}"
