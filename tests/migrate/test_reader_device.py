"""The device the module-scaler route's home reads off the models handed to its initialize
(``rules/_amp_device``): run, as migrated, where apex's initialize ran.  With amp off apex
returned what it was given unchecked (a tuple of modules here), and with amp on a model may
have no parameters: neither may raise where the original ran (StopIteration,
AttributeError), and the GradScaler falls back to ``"cuda"``."""

from __future__ import annotations

import warnings
from typing import Any, Dict

import pytest

from migrate.pipeline import migrate_repository
from migrate.rules._amp_repo_examples import REPOSITORY_EXAMPLES
from migrate.rules.base import example_files
from migrate.settings import Settings

torch = pytest.importorskip("torch")

GAN = "module-level-grad-scalers-beside-plain-branches-of-a-registry-gan"


def _home() -> Dict[str, Any]:
    """The migrated ``amp_setup.py`` of the registry-GAN example, run as a module."""
    before = next(e for e in REPOSITORY_EXAMPLES if e.id == GAN).before
    files = example_files(before)
    keys = [f"/example-repo/{name}" for name, _ in files]
    results = migrate_repository([(n, t.encode()) for n, t in files], keys, Settings(), 1, ["/example-repo"])
    source = next(r.new.decode() for (name, _), r in zip(files, results) if name == "amp_setup.py")
    assert "grad_scalers = [torch.amp.GradScaler(" in source, source
    namespace: Dict[str, Any] = {"__name__": "amp_setup"}
    exec(compile(source, "amp_setup.py", "exec"), namespace)
    return namespace


def _optimizers() -> Dict[str, Any]:
    net = torch.nn.Linear(2, 2)
    return {name: torch.optim.SGD(net.parameters(), lr=0.1) for name in ("generator", "discriminator")}


def test_amp_off_reads_nothing_off_the_models() -> None:
    home = _home()
    models = (torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))  # no list: apex returned it unchecked
    home["apex_amp_initialize"](models, _optimizers(), {"enabled": False})
    assert not any(s.is_enabled() for s in home["grad_scalers"])


def test_a_model_without_parameters_falls_back_to_cuda() -> None:
    home = _home()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an enabled "cuda" GradScaler on a machine without CUDA
        home["apex_amp_initialize"](torch.nn.ReLU(), _optimizers(), {"opt_level": "O1"})
    assert [s._device for s in home["grad_scalers"]] == ["cuda"]  # num_losses: 1
