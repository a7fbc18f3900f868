"""The launcher edits of the glue route (migrate/glue_calls.py): where the GradScaler's
keyword goes in a call, which statements go under autocast, and the shapes refused."""

from __future__ import annotations

import ast

from migrate.glue_calls import GlueEdit, apply_glue, glue_edit

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


FACTORY = """\
import torch


def build(args):
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer
"""
HELPER = """\
def backward_step(args, {params}, optimizer):
    optimizer.zero_grad()
{compute}    if args.fp16:
        from apex import amp
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()


def compute(model, x):
    return model(x).pow(2).mean()
"""
LAUNCHER = """\
import torch

from pkg.factory import build
from pkg.losses import backward_step


def train(args, batches):
    model, optimizer = build(args)
    for x in batches:
{body}
"""


def _migrate_layout(tmp_path, helper: str, body: str) -> str:
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "factory.py").write_text(FACTORY)
    (tmp_path / "pkg" / "losses.py").write_text(helper)
    (tmp_path / "train.py").write_text(LAUNCHER.format(body=body))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "migrate", "--to", "native", "--allow-no-vcs", "--diff", str(tmp_path)],
                          capture_output=True, text=True, cwd=root, env={"PYTHONPATH": str(root), "PATH": ""})
    return done.stdout + done.stderr


def test_the_launcher_wraps_the_forward_pass_of_a_loss_it_hands_over(tmp_path):
    out = _migrate_layout(tmp_path, HELPER.format(params="loss", compute=""),
                          "        loss = model(x).pow(2).mean()\n        backward_step(args, loss, optimizer)")
    assert "+        backward_step(args, loss, optimizer, scaler=scaler)" in out, out
    assert '+        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):' in out, out
    assert "APX220" not in out, out


def test_a_helper_that_runs_the_model_it_is_handed_keeps_the_shim(tmp_path):
    # the helper computes the loss from the model itself: no autocast of the launcher covers it
    out = _migrate_layout(tmp_path, HELPER.format(params="model, x", compute="    loss = compute(model, x)\n"),
                          "        backward_step(args, model, x, optimizer)")
    assert "APX220" in out and "scaler=scaler" not in out, out
