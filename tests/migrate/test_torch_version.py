"""The installed torch's X.Y, read from the names of ``sys.path``'s metadata folders or, where
those do not tell, from ``importlib.metadata`` (``migrate.torch_version``)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from migrate import torch_version
from migrate.torch_version import installed_torch_version


@pytest.fixture
def metadata_answer(monkeypatch):
    """What ``importlib.metadata`` is asked, and the answer it is made to give."""
    asked = []

    def answer():
        asked.append(True)
        return (9, 9)

    monkeypatch.setattr(torch_version, "_from_metadata", answer)
    return asked


def folders(tmp_path, *contents):
    """One folder per entry of ``contents`` (the names of the folders inside it)."""
    made = []
    for index, names in enumerate(contents):
        folder = tmp_path / f"entry{index}"
        folder.mkdir()
        for name in names:
            (folder / name).mkdir()
        made.append(str(folder))
    return made


@pytest.mark.parametrize(
    "name, expected",
    [
        ("torch-2.7.1.dist-info", (2, 7)),
        ("torch-2.13.0+cpu.dist-info", (2, 13)),
        ("torch-2.10.0rc1.dist-info", (2, 10)),
        ("Torch-2.4.0.dist-info", (2, 4)),
        ("torch-2.1.0-py3.11.egg-info", (2, 1)),
    ],
)
def test_the_folder_name_gives_the_version(tmp_path, metadata_answer, name, expected):
    path = folders(tmp_path, ["numpy-2.0.0.dist-info"], ["torchvision-0.18.0.dist-info", name, "torch"])
    assert installed_torch_version(path) == expected
    assert not metadata_answer


def test_the_first_folder_holding_torch_wins(tmp_path, metadata_answer):
    path = folders(tmp_path, ["torch-1.13.1.dist-info"], ["torch-2.6.0.dist-info"])
    assert installed_torch_version(path) == (1, 13)
    assert installed_torch_version(path[::-1]) == (2, 6)
    assert not metadata_answer


def test_folders_that_cannot_be_listed_are_passed_over(tmp_path, metadata_answer):
    (tmp_path / "lib.zip").write_bytes(b"PK")
    path = [str(tmp_path / "missing"), str(tmp_path / "lib.zip")]
    assert installed_torch_version(path) == (9, 9)  # nothing found there: the metadata says
    assert installed_torch_version([*path, *folders(tmp_path, ["torch-2.3.1.dist-info"])]) == (2, 3)


@pytest.mark.parametrize(
    "names",
    [
        ["torch.egg-info"],  # a source checkout installed for development: no version in the name
        ["torch-2.6.0.dist-info", "torch-2.5.1.dist-info"],  # two of them: which one is read is the metadata's choice
    ],
)
def test_the_metadata_decides_where_the_first_folder_holding_torch_does_not_tell(tmp_path, metadata_answer, names):
    path = folders(tmp_path, names, ["torch-2.7.0.dist-info"])
    assert installed_torch_version(path) == (9, 9)
    assert metadata_answer == [True]


def test_torch_not_found_anywhere(tmp_path, monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert installed_torch_version(folders(tmp_path, ["torchvision-0.18.0.dist-info"])) is None


def test_the_answer_is_importlib_metadata_s_for_the_installed_torch():
    try:
        text = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        assert installed_torch_version() is None
        return
    major, minor = (int(part) for part in text.split(".")[:2])
    assert installed_torch_version() == (major, minor)


def test_a_wheel_s_version_is_read_without_importing_importlib_metadata():
    probe = (
        "import sys\n"
        "before = 'importlib.metadata' in sys.modules\n"
        "from migrate.torch_version import installed_torch_version, _FOLDER\n"
        "import os\n"
        "named = any(_FOLDER.fullmatch(n) for p in sys.path if os.path.isdir(p or '.') for n in os.listdir(p or '.'))\n"
        "installed_torch_version()\n"
        "print(before, named, 'importlib.metadata' in sys.modules)\n"
    )
    before, named, imported = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    if before == "True" or named == "False":
        pytest.skip("importlib.metadata is imported at start-up here, or torch is not installed from a wheel")
    assert imported == "False"
