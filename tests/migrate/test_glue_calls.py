"""The launcher edits of the glue route (migrate/glue_calls.py): where the GradScaler's
keyword goes in a call, which statements go under autocast, and the shapes refused."""

from __future__ import annotations

import ast

import pytest

from migrate.glue_calls import GlueEdit, apply_glue, glue_edit
from migrate.glue_plan import _imports_module_of

HEAD = """\
import torch

from nets.build import build
from nets.steps import step


def main(cfg, batches):
    device = torch.device("cpu")
    model, optimizer = build(cfg, device)
"""


def _edit(body: str, helper_texts=None):
    source = (HEAD + body).encode()
    edit = glue_edit(source, "train.py", "main", 9, {"build"}, helper_texts or {"step": "step"}, "scaler", "scaler")
    return source, edit


def test_keyword_goes_after_the_last_argument_of_a_call_over_several_lines():
    source, edit = _edit("""\
    for x in batches:
        loss = model(x.to(device)).sum()
        step(
            cfg,
            loss,  # the loss
            optimizer,
        )
""")
    assert isinstance(edit, GlueEdit), edit
    new = apply_glue(source, edit).decode()
    assert "            optimizer, scaler=scaler\n        )" in new
    assert "    model, optimizer, scaler = build(cfg, device)\n" in new
    assert "        with torch.autocast(device.type, dtype=torch.float16, enabled=scaler.is_enabled()):\n" \
           "            loss = model(x.to(device)).sum()\n" in new
    ast.parse(new)


def test_a_call_without_arguments_gets_the_keyword_alone():
    source, edit = _edit("    step()\n")
    assert isinstance(edit, GlueEdit), edit
    assert "    step(scaler=scaler)\n" in apply_glue(source, edit).decode()


def test_a_forward_pass_in_a_branch_before_the_loss_is_refused():
    _source, edit = _edit("""\
    for x in batches:
        if cfg.warm:
            out = model(x)
        else:
            out = model(x * 2)
        loss = out.sum()
        step(cfg, loss, optimizer)
""")
    assert isinstance(edit, str) and "`out`" in edit and "train.py:12" in edit, edit


def test_a_call_before_the_factory_call_is_refused():
    source = (HEAD.replace("    model, optimizer = build(cfg, device)\n", "    step(cfg, 0, None)\n"
                           "    model, optimizer = build(cfg, device)\n")).encode()
    edit = glue_edit(source, "train.py", "main", 10, {"build"}, {"step": "step"}, "scaler", "scaler")
    assert isinstance(edit, str) and "comes before the factory's call" in edit, edit


def test_a_helper_called_with_double_star_is_refused():
    _source, edit = _edit("    step(**cfg.kwargs)\n")
    assert isinstance(edit, str) and "`**`" in edit, edit


def test_a_multi_line_string_where_autocast_would_go_is_refused():
    _source, edit = _edit('''\
    for x in batches:
        note = """a
b"""
        loss = model(x).sum() + len(note)
        step(cfg, loss, optimizer)
''')
    assert isinstance(edit, str) and "string over several lines" in edit, edit


def test_what_a_helper_returns_may_feed_another_helper_call():
    source, edit = _edit("""\
    start = step(cfg, 0, optimizer)
    for x in range(start, 4):
        loss = model(torch.ones(2) * x).sum()
        step(cfg, loss, optimizer)
""")
    assert isinstance(edit, GlueEdit), edit
    assert len(edit.wraps) == 1
    ast.parse(apply_glue(source, edit))


def test_no_torch_import_refuses():
    source = (HEAD.replace("import torch\n", "import torch as th\n") + "    step(cfg, 0, optimizer)\n").encode()
    edit = glue_edit(source, "train.py", "main", 9, {"build"}, {"step": "step"}, "scaler", "scaler")
    assert isinstance(edit, str) and "import torch" in edit, edit


def test_a_model_handed_to_another_object_is_refused():
    _source, edit = _edit("""\
    watcher = torch.nn.ModuleList([model])
    for x in batches:
        loss = model(x).sum()
        step(cfg, loss, optimizer)
""")
    assert isinstance(edit, str) and "`model`" in edit and "train.py:10" in edit, edit


def test_a_model_used_for_its_state_and_handed_to_the_helpers_is_accepted():
    source, edit = _edit("""\
    model.train()
    for x in batches:
        loss = model(x).sum()
        step(cfg, loss, optimizer, model)
    torch.save(model.state_dict(), "m.pt")
""")
    assert isinstance(edit, GlueEdit), edit
    ast.parse(apply_glue(source, edit))



#: the helper computes the loss from the model it is handed (the launcher hands it the model)
HELPER_RUNS_THE_MODEL = """\
from apex import amp


def backward_step(cfg, model, inputs, optimizer):
    optimizer.zero_grad()
    loss = score(model, inputs)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()


def score(model, inputs):
    return model(inputs).square().mean()
"""


def _migrate_layout(tmp_path, replace=None) -> str:
    """The repository example's launcher layout (``GLUE_LAUNCHER``), some files replaced,
    migrated with the CLI: its diff and findings."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    from migrate.rules._amp_repo_examples import GLUE_LAUNCHER

    parts = re.split(r"^# file: (.*)\n", GLUE_LAUNCHER.format(more=""), flags=re.M)
    files = dict(zip(parts[1::2], parts[2::2]), **(replace or {}))
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "migrate", "--to", "native", "--allow-no-vcs", "--diff", str(tmp_path)],
                          capture_output=True, text=True, cwd=root, env={"PYTHONPATH": str(root), "PATH": ""})
    return done.stdout + done.stderr


def test_the_launcher_wraps_the_forward_pass_of_a_loss_it_hands_over(tmp_path):
    out = _migrate_layout(tmp_path)
    assert "+        backward_step(cfg, loss, optimizer, scaler=scaler)" in out, out
    assert '+        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):' in out, out
    assert "APX220" not in out, out


def test_a_helper_that_runs_the_model_it_is_handed_keeps_the_shim(tmp_path):
    # no autocast of the launcher covers the forward pass the helper runs
    out = _migrate_layout(tmp_path, {
        "nets/losses.py": HELPER_RUNS_THE_MODEL,
        "train.py": _LAUNCHER_HANDING_THE_MODEL,
    })
    assert "APX220" in out and "scaler=scaler" not in out, out


_LAUNCHER_HANDING_THE_MODEL = """\
import torch

from nets.build import build_model
from nets.losses import backward_step


def train(cfg, batches):
    model, optimizer = build_model(cfg)
    for inputs, _targets in batches:
        backward_step(cfg, model, inputs.cuda(), optimizer)
"""


def test_a_nested_unpacking_of_the_factory_takes_the_scaler_after_its_last_bracket():
    source = HEAD.replace("    model, optimizer = build(cfg, device)\n",
                          "    model, [opt_g, opt_d] = build(cfg, device)\n").encode() + b"    step(cfg, 0, opt_g)\n"
    edit = glue_edit(source, "train.py", "main", 9, {"build"}, {"step": "step"}, "scaler", "scaler")
    assert isinstance(edit, GlueEdit), edit
    assert "    model, [opt_g, opt_d], scaler = build(cfg, device)\n" in apply_glue(source, edit).decode()


FACTORY_MODULE, FACTORY_PACKAGE = "repo/nets/build.py", "repo/nets/__init__.py"


@pytest.mark.parametrize(
    "source, path, found",
    [
        (b"from nets.build import make\n", FACTORY_MODULE, True),
        (b"from .build import make\n", FACTORY_MODULE, True),
        (b"from . import build\n", FACTORY_MODULE, True),
        (b"import nets.build as b\n", FACTORY_MODULE, True),
        (b"    from nets import build\n", FACTORY_MODULE, True),
        (b"from nets import (\n    a,\n    build,\n)\n", FACTORY_MODULE, True),
        (b"from nets import a, \\\n    build\n", FACTORY_MODULE, True),
        (b"import os, \\\n    sys, \\\n    nets.build\n", FACTORY_MODULE, True),
        (b"from nets import (a,  # b)\n    build)\n", FACTORY_MODULE, False),  # the search stops at a ")"
        (b"x = 1; import nets.build\n", FACTORY_MODULE, False),  # only an import opening its line
        (b"from nets import make\n", FACTORY_MODULE, False),
        (b"from rebuild import make\n", FACTORY_MODULE, False),
        (b"text = 'from build import make'\n", FACTORY_MODULE, False),
        (b"def main():\n    build()\n", FACTORY_MODULE, False),
        # a relative import counts where it names the module, or takes the factory package's names
        (b"from .other import make\n", FACTORY_MODULE, False),
        (b"from . import make\n", FACTORY_MODULE, False),
        (b"from . import make\n", FACTORY_PACKAGE, True),
        (b"from .. import make\n", FACTORY_PACKAGE, True),
        (b"from repo.nets import make\n", FACTORY_PACKAGE, True),
        (b"from .build import make\n", FACTORY_PACKAGE, False),
    ],
)
def test_launcher_candidates_import_the_factory_module(source, path, found):
    # the glue route looks for the factory's callers only among the files that may import it
    assert _imports_module_of(source, path) is found
