"""The walker: what is skipped, symlinks, the byte prefilter and the statically read triggers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from migrate.triggers import enabled_triggers, imported_rule_triggers, static_rule_triggers
from migrate.walk import display_path, imports_apex, prefilter, walk

from helpers_driver import make_repo


def names(result, root: Path):
    return [os.path.relpath(p, root).replace(os.sep, "/") for p, _ in result.files]


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def test_skips_tool_and_environment_folders(tmp_path):
    touch(
        tmp_path,
        "a.py", "pkg/b.py", "pkg/notes.txt", ".git/hooks/h.py", ".venv/lib/x.py", "venv/x.py",
        "myenv/lib/x.py", "lib/site-packages/x.py", "node_modules/x.py", "build/x.py", "dist/x.py",
        ".tox/py/x.py", "pkg/__pycache__/x.py",
    )
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    assert names(walk([str(tmp_path)], use_gitignore=False), tmp_path) == ["a.py", "pkg/b.py"]


def test_order_is_deterministic_and_files_are_deduplicated(tmp_path):
    touch(tmp_path, "z.py", "a/b.py", "a/a.py", "m.py")
    result = walk([str(tmp_path), str(tmp_path / "m.py"), str(tmp_path / "a")])
    assert names(result, tmp_path) == ["a/a.py", "a/b.py", "m.py", "z.py"]


def test_explicit_file_is_taken_even_if_not_python_or_excluded(tmp_path):
    touch(tmp_path, "build/script", "skip/x.py")
    result = walk([str(tmp_path / "build" / "script"), str(tmp_path / "skip" / "x.py")], exclude=["skip"])
    assert names(result, tmp_path) == ["build/script", "skip/x.py"]


def test_exclude_globs_match_names_and_relative_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    touch(tmp_path, "keep/a.py", "gen/b.py", "keep/c_pb2.py", "deep/x/y.py")
    result = walk(["."], exclude=["gen", "*_pb2.py", "deep/x"])
    assert names(result, tmp_path) == ["keep/a.py"]


def test_missing_paths_are_listed(tmp_path):
    assert walk([str(tmp_path / "nope.py")]).missing == [str(tmp_path / "nope.py")]


def test_gitignore_semantics_come_from_git(tmp_path):
    root = make_repo(
        tmp_path / "r",
        {
            ".gitignore": b"/out/\n*.gen.py\n!keep.gen.py\nlogs\n",
            "src/.gitignore": b"local_*.py\n",
            "src/a.py": b"x = 1\n",
        },
    )
    touch(root, "out/x.py", "src/out/y.py", "src/b.gen.py", "src/keep.gen.py", "src/local_1.py", "logs/z.py", "src/logs/q.py")
    # a nested repository brings its own ignore rules
    make_repo(root / "nested", {".gitignore": b"n.py\n", "m.py": b"x = 1\n"})
    touch(root, "nested/n.py")
    result = walk([str(root)])
    got = names(result, root)
    assert "nested/m.py" in got and "nested/n.py" not in got
    assert "src/a.py" in got and "src/keep.gen.py" in got and "src/out/y.py" in got  # "/out/" is anchored
    for ignored in ("out/x.py", "src/b.gen.py", "src/local_1.py", "logs/z.py", "src/logs/q.py"):
        assert ignored not in got


def test_gitignore_is_used_only_inside_a_repository(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")
    touch(tmp_path, "a.py")
    assert names(walk([str(tmp_path)]), tmp_path) == ["a.py"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinked_directories_are_walked_once_and_loops_reported(tmp_path):
    touch(tmp_path, "real/a.py")
    os.symlink("real", tmp_path / "alias")  # same directory twice: walked once
    os.symlink(".", tmp_path / "real" / "self")  # a loop
    result = walk([str(tmp_path)])
    assert names(result, tmp_path) == ["alias/a.py"]
    assert [f.code for f in result.findings] == ["APX009"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_file_reached_twice_is_walked_once(tmp_path):
    """By a link to it, and through a linked directory given beside its real one (a file's
    real path is its real directory's path and its name unless it is a link itself)."""
    touch(tmp_path, "real/a.py")
    os.symlink("a.py", tmp_path / "real" / "b.py")
    os.symlink("real", tmp_path / "alias")
    result = walk([str(tmp_path / "alias"), str(tmp_path / "real"), str(tmp_path / "real" / "a.py")])
    assert names(result, tmp_path) == ["alias/a.py"]


def test_display_paths_are_relative_below_cwd(tmp_path):
    assert display_path(str(tmp_path / "a" / "b.py"), str(tmp_path)) == "a/b.py"
    assert display_path("/elsewhere/x.py", str(tmp_path)) == "/elsewhere/x.py"



@pytest.mark.parametrize("start", [".", "pkg", "pkg/deep", "..", "../elsewhere", "absolute", "link"])
def test_walked_files_are_shown_by_their_display_path(tmp_path, monkeypatch, start):
    # the walker puts a file's shown path together from its folder's: the same as
    # ``display_path`` of the file, from the folder run in, below it, above it, beside it
    touch(tmp_path / "tree", "a.py", "pkg/b.py", "pkg/deep/c.py")
    touch(tmp_path / "elsewhere", "d.py", "sub/e.py")
    (tmp_path / "tree" / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    monkeypatch.chdir(tmp_path / "tree")
    result = walk([str(tmp_path / "tree" / "pkg") if start == "absolute" else start], use_gitignore=False)
    assert result.files
    assert [shown for _, shown in result.files] == [display_path(path) for path, _ in result.files]

def test_prefilter():
    assert prefilter(b"from apex import amp", (b"apex",))
    assert not prefilter(b"import torch", (b"apex", b"amp_C"))
    assert not prefilter(b"anything", ())  # no enabled rule: nothing to parse
    assert prefilter(b"anything", None)  # an enabled rule without triggers: everything


def test_enabled_triggers_follow_the_selection():
    table = [(("APX101", "APX102"), (b"apex",)), (("APX301",), (b"torch.cuda.amp",)), (("APX401",), ())]
    assert enabled_triggers(lambda c: c.startswith("APX1"), table) == (b"apex",)
    assert enabled_triggers(lambda c: c.startswith(("APX1", "APX3")), table) == (b"apex", b"torch.cuda.amp")
    assert enabled_triggers(lambda c: True, table) is None


def test_static_triggers_match_the_imported_rules():
    """The command line reads CODES/TRIGGERS without importing LibCST: it must never be
    narrower than the rules themselves, for every selection of a single rule."""
    static = static_rule_triggers()
    assert static is not None, "rule modules must declare CODES/TRIGGERS as literals"
    imported = imported_rule_triggers()
    for codes, _ in imported:
        select = lambda c, codes=codes: c in codes  # noqa: E731
        from_import = enabled_triggers(select, imported)
        from_static = enabled_triggers(select, static)
        if from_import is None:
            assert from_static is None
        else:
            assert from_static is None or set(from_import) <= set(from_static)


def test_static_triggers_give_up_on_non_literals(tmp_path):
    (tmp_path / "r.py").write_text("class R:\n    CODES = {'APX1': 'x'}\n    TRIGGERS = tuple(make())\n")
    assert static_rule_triggers(str(tmp_path)) is None
    (tmp_path / "r.py").write_text("class R:\n    CODES = {'APX1': 'x'}\n    TRIGGERS = (b'apex',)\nclass Base:\n    pass\n")
    assert static_rule_triggers(str(tmp_path)) == [(("APX1",), (b"apex",))]


def test_static_triggers_read_only_the_modules_that_declare_them(tmp_path):
    """A helper module naming neither CODES nor TRIGGERS is not parsed (one that does not
    parse would make the whole table unreadable); classes are found inside any statement."""
    (tmp_path / "helper.py").write_text("def broken(:\n")
    (tmp_path / "r.py").write_text(
        "if True:\n    try:\n        pass\n    except Exception:\n"
        "        class R:\n            CODES = {'APX1': 'x'}\n            TRIGGERS = (b'apex',)\n"
    )
    assert static_rule_triggers(str(tmp_path)) == [(("APX1",), (b"apex",))]
    (tmp_path / "helper.py").write_text("CODES = 1\ndef broken(:\n")
    assert static_rule_triggers(str(tmp_path)) is None


@pytest.mark.parametrize(
    "source, expected",
    [
        (b"# from apex import amp\nx = 1\n", False),
        (b"import os, apex\n", True),
        (b"    from apex.parallel import DDP\n", True),
        (b"from torch.cuda import amp\n", True),
        (b"y = torch.cuda.amp.autocast()\n", True),
        (b"from torch.cuda import Stream\n", False),
        (b"URL = 'https://github.com/NVIDIA/apex'\n", False),
    ],
)
def test_imports_apex_for_large_files(source, expected):
    assert imports_apex(source) is expected
