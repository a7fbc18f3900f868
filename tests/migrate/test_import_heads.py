"""The import head of a file the index left out (``import_heads``) answers the plan's
definition search as the file's whole summary would: the same imports, star imports and
top-level definitions, and the same ``find`` results through such files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.import_heads import import_head
from migrate.repo_index import ModuleResolver, summarise
from migrate.repo_plan import _Definitions

SHAPES = {
    "nested": """\
        import os, numpy as np
        from apex import amp
        from apex.amp import scale_loss
        import apex.amp as apex_amp
        from .sibling import helper as h, other

        def outer():
            from torch import nn
            import json as os

            def inner():
                from collections import OrderedDict
            class Local:
                def method(self):
                    from typing import List

        class Top:
            from math import pi
            def method(self):
                pass
            class Inner:
                pass

        if os.name:
            def chosen():
                pass
        else:
            from functools import partial as chosen
        try:
            from fast import impl
        except ImportError as error:
            from slow import impl
        else:
            import late
        finally:
            import done
        for _ in range(2):
            from loop import body
        else:
            from loop import tail
        with open("x") as handle:
            async def run():
                import inside_async
        while False:
            from spin import wait
        """,
    "match": """\
        match command:
            case "a":
                from a import go
            case _:
                def go():
                    pass
        """,
    "star": """\
        from .models import *
        from other import thing
        def thing():
            pass
        """,
    "shadow": """\
        from impl import Trainer
        class Trainer(Trainer):
            pass
        from impl import Trainer
        """,
}


def _write(root: Path, name: str, text: str) -> Path:
    (root / "pkg").mkdir(exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    path = root / "pkg" / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_head_holds_what_the_summary_reads_from_imports_and_definitions(tmp_path, name):
    path = _write(tmp_path, name, SHAPES[name])
    source = path.read_bytes()
    head, summary = import_head(str(path), source), summarise(str(path), name, source)
    assert head is not None and summary is not None
    assert head.imports == summary.imports
    assert list(head.imports) == list(summary.imports)  # a later import of a name replaces an earlier one
    assert head.star_imports == summary.star_imports
    assert head.definitions == summary.functions | summary.classes


def test_a_file_the_parser_rejects_has_no_head(tmp_path):
    path = _write(tmp_path, "broken", "def f(:\n")
    assert import_head(str(path), path.read_bytes()) is None


def test_the_head_agrees_with_the_summary_on_the_tools_own_sources():
    root = Path(__file__).resolve().parents[2]
    paths = sorted((root / "migrate").rglob("*.py"))[:120]
    assert paths
    for path in paths:
        source = path.read_bytes()
        head, summary = import_head(str(path), source), summarise(str(path), path.name, source)
        assert head is not None and summary is not None, path
        assert (head.imports, head.star_imports, head.definitions) == (
            summary.imports, summary.star_imports, summary.functions | summary.classes
        ), path


REPOSITORY = {
    "train.py": """\
        from apex import amp
        from lib.api import step, Model, helper, missing, shadowed, Star, later
        from lib import api
        """,
    "lib/__init__.py": "",
    "lib/api.py": """\
        from lib.core import step
        from lib.core import Model as Model
        from .broken import helper
        from lib.stars import Star
        import lib.core as later

        def shadowed():
            pass
        from lib.core import shadowed
        """,
    "lib/core.py": """\
        from apex import amp

        def step(model):
            with amp.scale_loss(model, None) as loss:
                loss.backward()

        class Model:
            pass

        def shadowed():
            pass
        """,
    "lib/broken.py": "def helper(:\n",
    "lib/stars.py": """\
        from lib.core import *
        from lib.more import *
        """,
    "lib/more.py": """\
        class Star:
            pass
        """,
}


def test_find_through_files_left_out_gives_what_their_summaries_give(tmp_path, monkeypatch):
    for name, text in REPOSITORY.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    indexed = {str(tmp_path / n) for n in ("train.py", "lib/core.py")}
    by_path = {p: summarise(p, p, Path(p).read_bytes()) for p in sorted(indexed)}
    unindexed = {
        str(tmp_path / n): (n, (tmp_path / n).read_bytes()) for n in REPOSITORY if str(tmp_path / n) not in indexed
    }
    importer = str(tmp_path / "train.py")
    questions = [
        (module, name, anywhere, stars)
        for module in ("lib.api", "lib.stars", "lib.core", "lib.broken", "lib.more")
        for name in ("step", "Model", "helper", "missing", "shadowed", "Star", "later", "core")
        for anywhere in (False, True)
        for stars in (False, True)
    ]

    def answers():
        resolver = ModuleResolver(list(by_path) + list(unindexed), [str(tmp_path)])
        definitions = _Definitions(dict(by_path), dict(unindexed), resolver)
        found = [definitions.find(m, n, importer, anywhere=a, through_stars=s) for m, n, a, s in questions]
        return found, definitions

    with_heads, definitions = answers()
    assert str(tmp_path / "lib/api.py") in definitions.heads  # answered by its head
    assert str(tmp_path / "lib/api.py") not in definitions.read  # not summarised for it
    monkeypatch.setattr(_Definitions, "_head", lambda self, path: None)
    assert with_heads == answers()[0]
    # the search follows re-exports through the files left out, and ends at a def of one
    # (the def comes first, whatever the file imports under its name later)
    found = dict(zip(questions, with_heads))
    assert found[("lib.api", "step", False, False)] == (str(tmp_path / "lib/core.py"), "step")
    assert found[("lib.api", "shadowed", False, False)] is None
    assert found[("lib.api", "shadowed", True, False)] == (str(tmp_path / "lib/api.py"), "shadowed")
