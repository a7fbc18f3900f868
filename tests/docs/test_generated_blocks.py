"""The content committed between ``<!-- generated: ... -->`` markers is what a fresh run of its
generator produces (``python docs/scripts/generate.py --check``), and the supported-version
numbers the README and the pages state are the ones the packaging and the tox matrix use."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = REPO_ROOT / "docs" / "scripts"
#: sources whose fresh run is a training run or a measurement in several processes
SLOW_SOURCES = {"scale-trajectory", "o1-dtypes", "doctor"}
#: sources whose generator needs a package of the docs extra (``pip install -e ".[docs]"``)
DOCS_EXTRA_NEEDS = {"scale-trajectory": "matplotlib"}


def _load(name: str):
    """A docs script as a module (``generate.py`` puts its own folder on ``sys.path``)."""
    spec = importlib.util.spec_from_file_location(f"docs_script_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


generate = _load("generate")
blocks = _load("generated_blocks")


def _source_param(name: str):
    return pytest.param(name, id=name, marks=[pytest.mark.slow] if name in SLOW_SOURCES else [])


@pytest.mark.parametrize("source", [_source_param(name) for name in sorted(generate.SOURCES)])
def test_committed_block_is_what_its_generator_produces(source: str):
    if source in DOCS_EXTRA_NEEDS:
        pytest.importorskip(DOCS_EXTRA_NEEDS[source], reason="in the docs extra: pip install -e '.[docs]'")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(SCRIPTS / "generate.py"), "--check", "--only", source],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    if "not checked:" in proc.stdout:
        pytest.skip(proc.stdout.strip())


def test_every_block_in_the_pages_has_a_generator():
    names = set()
    for page in generate.pages():
        names.update(blocks.find_blocks(page.read_text(encoding="utf-8")))
    assert {"apex-script-source", "walkthrough-native-diff", "rule-reference", "scale-trajectory",
            "o1-dtype-table", "support-matrix-table"} <= names
    assert not any("_generated/" in page.read_text(encoding="utf-8") for page in generate.pages()), (
        "a page still includes docs/_generated, which is empty on GitHub and no longer generated"
    )


def _page_with(content: str) -> str:
    name = "apex-script-source"
    return f"intro\n\n{blocks.begin_line(name)}\n{content}{blocks.END.format(name=name)}\n\noutro\n"


def test_check_names_a_stale_block_and_the_command_that_refreshes_it(tmp_path: Path, monkeypatch, capsys):
    page = tmp_path / "page.md"
    page.write_text(_page_with("```python\nimport argparse  # an old copy\n```\n"), encoding="utf-8")
    monkeypatch.setattr(generate, "pages", lambda: [page])
    assert generate.main(["--check", "--only", "apex-script"]) == 1
    assert "page.md: block apex-script-source is stale; refresh it with " \
           "`python docs/scripts/generate.py --only apex-script`" in capsys.readouterr().err
    assert "an old copy" in page.read_text(encoding="utf-8"), "--check writes nothing"
    assert generate.main(["--only", "apex-script"]) == 0
    text = page.read_text(encoding="utf-8")
    assert "an old copy" not in text and text.startswith("intro\n\n") and text.endswith("\n\noutro\n")
    assert "def train_one_epoch(" in text
    assert generate.main(["--check", "--only", "apex-script"]) == 0


def test_blocks_replace_only_between_their_markers():
    text = _page_with("old\n")
    assert blocks.find_blocks(text)["apex-script-source"].content == "old\n"
    assert blocks.replace_blocks(text, {"apex-script-source": "new"}) == _page_with("new\n")
    assert blocks.replace_blocks(text, {"other": "x"}) == text
    assert blocks.find_blocks(_page_with(""))["apex-script-source"].content == ""
    with pytest.raises(ValueError, match="no '<!-- end generated: apex-script-source -->'"):
        blocks.find_blocks(text.replace("<!-- end generated", "<!-- end"))
    assert blocks.fenced("a ``` b", "text") == "````text\na ``` b\n````\n"


def test_code_inside_generated_blocks_is_not_run():
    from docs_codeblocks import parse_blocks, python_blocks

    text = _page_with("```python\nraise SystemExit\n```\n") + "```python\nprint(1)\n```\n"
    assert [b.generated for b in parse_blocks(text)] == [True, False]
    assert [b.source for b in python_blocks(text)] == ["print(1)"]


def _supported_range():
    """(lowest, highest) torch minor of the tox matrix, the torch floor and the Python floor
    of pyproject.toml."""
    tox = (REPO_ROOT / "tox.ini").read_text(encoding="utf-8")
    minors = [int(m) for m in re.search(r"torch2\.\{([\d,]+)\}", tox).group(1).split(",")]
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    torch_floor = re.search(r'"torch>=(\d+\.\d+)"', pyproject).group(1)
    python_floor = re.search(r'requires-python = ">=(\d+\.\d+)"', pyproject).group(1)
    return f"2.{min(minors)}", f"2.{max(minors)}", torch_floor, python_floor


def test_stated_supported_versions_are_the_packaging_and_matrix_ones():
    low, high, torch_floor, python_floor = _supported_range()
    assert low == torch_floor
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert f"**PyTorch {low} – {high}** (Python ≥ {python_floor}" in readme
    matrix = (REPO_ROOT / "docs" / "support-matrix.md").read_text(encoding="utf-8")
    assert f"**PyTorch {low} to {high}** on Python ≥ {python_floor}" in matrix
    started = (REPO_ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert f"Python ≥ {python_floor} and\nPyTorch ≥ {torch_floor}" in started


def test_readme_states_no_test_counts():
    """Test counts change with every commit: the README links to the dated matrix run instead."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"\b\d+ (passed|tests)\b|\| pass \| \d+", readme)
