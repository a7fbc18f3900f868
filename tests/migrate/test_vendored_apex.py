"""Copies of apex itself inside a repository: recognised by what they hold (the package, or
apex's whole source tree with its tests and examples), skipped whole, reported once, and
the user's own files beside them migrated as usual."""

from __future__ import annotations

import os
from pathlib import Path

from migrate.vendored_apex import PACKAGE, SOURCE_TREE, vendored_apex_kind
from migrate.walk import walk

from helpers_driver import make_repo, run_cli

#: a user's training script: native once migrated
TRAIN = b"""import torch
from apex import amp


def train(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()
"""
#: one of apex's own tests: private amp state, which the tool would refuse (APX220)
APEX_TEST = b"""from apex import amp


def test_scale(model, optimizer):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    assert amp._amp_state.loss_scalers[0].loss_scale() == 65536.0
"""


def apex_package(root: Path) -> dict:
    """The files of a (much reduced) copy of apex's package under ``root``."""
    return {
        f"{root}/__init__.py": b"from . import amp\nfrom . import optimizers\n",
        f"{root}/amp/__init__.py": b"from .frontend import initialize\n",
        f"{root}/amp/_amp_state.py": b"loss_scalers = []\n",
        f"{root}/optimizers/fused_adam.py": b"import amp_C\n",
    }


def apex_source_tree(root: str) -> dict:
    """The files of a (much reduced) checkout of apex's repository under ``root``."""
    files = apex_package(Path(root) / "apex")
    files.update(
        {
            f"{root}/setup.py": b"from setuptools import setup\nsetup(name='apex')\n",
            f"{root}/csrc/flatten_unflatten.cpp": b"// apex_C\n",
            f"{root}/tests/L0/run_amp/test_scale.py": APEX_TEST,
            f"{root}/examples/simple/main_amp.py": TRAIN,
        }
    )
    return files


def write(root: Path, files: dict) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def kind(path: Path):
    return vendored_apex_kind(str(path), os.listdir(path))


def walked(root: Path):
    result = walk([str(root)], use_gitignore=False)
    files = sorted(os.path.relpath(p, root).replace(os.sep, "/") for p, _ in result.files)
    return files, [(os.path.relpath(f.path, root).replace(os.sep, "/"), f.code) for f in result.findings]


def test_the_package_and_the_source_tree_are_recognised_by_what_they_hold(tmp_path):
    write(tmp_path, apex_source_tree("third_party/apex"))
    write(tmp_path, apex_source_tree("external/nvidia-apex-22.03"))  # any name: an unpacked release
    write(tmp_path, apex_package(Path("src/apex")))
    assert kind(tmp_path / "third_party" / "apex") == SOURCE_TREE
    assert kind(tmp_path / "external" / "nvidia-apex-22.03") == SOURCE_TREE
    assert kind(tmp_path / "third_party" / "apex" / "apex") == PACKAGE
    assert kind(tmp_path / "src" / "apex") == PACKAGE


def test_a_newer_apex_without_amp_is_recognised(tmp_path):
    write(tmp_path, {"apex/__init__.py": b"", "apex/normalization/fused_layer_norm.py": b"import torch\n"})
    assert kind(tmp_path / "apex") == PACKAGE


def test_user_code_named_after_apex_is_not_a_copy_of_it(tmp_path):
    # a package merely named apex-something, even holding apex-like files
    write(tmp_path, {"apex_utils/__init__.py": b"", "apex_utils/amp/_amp_state.py": b"x = 1\n"})
    # the repository's own package called apex: a small shim with an amp module of its own
    write(tmp_path, {"own/apex/__init__.py": b"", "own/apex/amp/__init__.py": b"", "own/apex/optimizers/adam.py": b""})
    # a module apex.py of the repository
    write(tmp_path, {"shim/apex.py": b"amp = None\n", "shim/setup.py": b"", "shim/csrc/flatten_unflatten.cpp": b""})
    # apex's package without its marker files (an empty amp/ folder), beside a setup.py and csrc/
    write(tmp_path, {"pkg/apex/__init__.py": b"", "pkg/setup.py": b"", "pkg/csrc/flatten_unflatten.cpp": b""})
    (tmp_path / "pkg" / "apex" / "amp").mkdir()
    for folder in ("apex_utils", "own/apex", "shim", "pkg", "pkg/apex"):
        assert kind(tmp_path / folder) is None, folder


def test_a_project_with_its_own_extensions_keeps_its_files_beside_a_vendored_package(tmp_path):
    """setup.py and csrc/ of the user's own extension (no apex source in it) beside a copy of
    apex's package: only the package is apex."""
    write(tmp_path, apex_package(Path("proj/apex")))
    write(tmp_path, {"proj/setup.py": b"", "proj/csrc/my_op.cpp": b"", "proj/train.py": TRAIN})
    files, findings = walked(tmp_path)
    assert files == ["proj/setup.py", "proj/train.py"]
    assert findings == [("proj/apex", "APX006")]


def test_the_walk_skips_the_whole_source_tree_and_reports_it_once(tmp_path):
    write(tmp_path, apex_source_tree("apex"))  # sber-swap's layout: the checkout at the root
    write(tmp_path, {"train.py": TRAIN, "utils/io.py": b"import os\n"})
    files, findings = walked(tmp_path)
    assert files == ["train.py", "utils/io.py"]
    assert findings == [("apex", "APX006")]


def test_a_git_submodule_checkout_is_a_source_tree(tmp_path):
    write(tmp_path, apex_source_tree("third_party/apex"))
    (tmp_path / "third_party" / "apex" / ".git").write_text("gitdir: ../../.git/modules/apex\n")
    files, findings = walked(tmp_path)
    assert files == []
    assert findings == [("third_party/apex", "APX006")]


def test_cli_migrates_the_user_file_and_leaves_the_copy(tmp_path):
    repo = make_repo(tmp_path / "repo", {**apex_source_tree("third_party/apex"), "train.py": TRAIN})
    proc = run_cli([".", "--to", "native"], repo, rules=None)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out  # work left: the copy, once nothing imports apex
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == ["third_party/apex/"], out
    assert lines[0].startswith("third_party/apex/: APX006 a copy of apex's source tree (setup.py, csrc/, the apex package)")
    assert lines[-1] == "1 file rewritten, 1 copy of apex left (see above) (1 file checked)"
    for name, data in apex_source_tree("third_party/apex").items():
        assert (repo / name).read_bytes() == data, name
    migrated = (repo / "train.py").read_bytes()
    assert b"apex" not in migrated and b"scaler = torch.amp.GradScaler" in migrated


def test_cli_ignoring_apx006_keeps_the_copy_without_a_finding(tmp_path):
    repo = make_repo(tmp_path / "repo", {**apex_source_tree("apex"), "train.py": TRAIN})
    proc = run_cli([".", "--to", "native", "--ignore", "APX006", "--check"], repo, rules=None)
    out = proc.stdout.decode()
    assert proc.returncode == 1 and "would rewrite train.py" in out and "APX006" not in out, out
    run_cli([".", "--to", "native"], repo, rules=None)
    make_repo(repo, {})
    proc = run_cli([".", "--to", "native", "--ignore", "APX006", "--check"], repo, rules=None)
    assert proc.returncode == 0, proc.stdout.decode()


def test_user_imports_of_apex_beside_a_vendored_package_stay_apex(tmp_path):
    """A copy of apex's package at the root is what ``from apex import amp`` would import: the
    user's file is still migrated as apex code (the copy is not indexed as their module)."""
    repo = make_repo(tmp_path / "repo", {**apex_package(Path("apex")), "train.py": TRAIN})
    proc = run_cli([".", "--to", "native"], repo, rules=None)
    assert b"apex" not in (repo / "train.py").read_bytes(), proc.stdout.decode()
    assert (repo / "apex" / "amp" / "_amp_state.py").read_bytes() == b"loss_scalers = []\n"
