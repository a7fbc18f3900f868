"""The whole-repository pipeline: the index (``repo_index``), the cross-file plan
(``repo_plan``), the all-or-nothing components and shim files as inputs of a native run,
through real command-line runs in temporary directories."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

import pytest

from migrate.repo_index import ModuleResolver, summarise
from migrate.repo_plan import build_plan
from migrate.rules._amp_examples import AMP_OR_NONE_GIVEN


def write_tree(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "migrate", *args, "."], cwd=root, capture_output=True, text=True, timeout=120
    )


def report(root: Path, *args: str) -> dict:
    proc = run_cli(root, "--output-format", "json", "--check", *args)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def plan_for(root: Path):
    files = sorted(p for p in root.rglob("*.py"))
    summaries = [summarise(str(p), str(p.relative_to(root)), p.read_bytes()) for p in files]
    return build_plan([s for s in summaries if s], [str(root)])


LAUNCHER = textwrap.dedent(
    """\
    import torch
    from apex import amp

    from {module} import train_one_epoch


    def main():
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for epoch in range(3):
            train_one_epoch(model, optimizer, epoch)
    """
)
ENGINE = textwrap.dedent(
    """\
    import torch
    from apex import amp


    def train_one_epoch(model, optimizer, epoch):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    """
)


# --- resolving modules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "files, importer, module, expected",
    [
        ({"train.py": "", "engine.py": ""}, "train.py", "engine", "engine.py"),
        ({"tools/train.py": "", "pkg/__init__.py": "", "pkg/engine.py": ""}, "tools/train.py", "pkg.engine", "pkg/engine.py"),
        ({"tools/train.py": "", "src/pkg/__init__.py": "", "src/pkg/engine.py": ""}, "tools/train.py", "pkg.engine", "src/pkg/engine.py"),
        ({"train.py": "", "pkg/__init__.py": ""}, "train.py", "pkg", "pkg/__init__.py"),
        ({"train.py": "", "engine.py": ""}, "train.py", "torch.nn", None),
        # the same module found in two places is not guessed
        ({"a/train.py": "", "a/engine.py": "", "engine.py": ""}, "a/train.py", "engine", None),
    ],
)
def test_module_resolution(tmp_path, files, importer, module, expected):
    write_tree(tmp_path, files)
    resolver = ModuleResolver([str(tmp_path / f) for f in files], [str(tmp_path)])
    found = resolver.resolve(module, str(tmp_path / importer))
    assert found == (str(tmp_path / expected) if expected else None)


def test_relative_imports_are_resolved_in_packages(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/engine/__init__.py": "",
            "pkg/engine/trainer.py": ENGINE,
            "pkg/train.py": LAUNCHER.format(module=".engine.trainer"),
        },
    )
    plan = plan_for(tmp_path)
    trainer = plan.files[str(tmp_path / "pkg/engine/trainer.py")]
    launcher = plan.files[str(tmp_path / "pkg/train.py")]
    assert trainer.entries == ("train_one_epoch",) and trainer.scaler_name == "scaler"
    assert launcher.pass_to == (("train_one_epoch", "scaler"),)
    assert trainer.component == launcher.component is not None


def test_the_index_reads_amp_sites_calls_and_escaping_names(tmp_path):
    source = textwrap.dedent(
        """\
        import apex
        from apexcompat import amp as shim_amp
        from engine import run, other

        registry = {"run": run}

        def main(model, optimizer):
            model, optimizer = apex.amp.initialize(model, optimizer)
            other(model)

        class Trainer:
            def step(self, loss):
                with shim_amp.scale_loss(loss, self.optimizer) as scaled:
                    scaled.backward()
        """
    ).encode()
    summary = summarise("/r/x.py", "x.py", source)
    assert [(s.member, s.owner, s.training) for s in summary.amp_sites] == [
        ("initialize", "main", True),
        ("scale_loss", "Trainer", False),
    ]
    assert [(c.text, c.module, c.name, c.owner) for c in summary.calls] == [("other", "engine", "other", "main")]
    assert "run" in summary.escaping and "other" not in summary.escaping
    assert summary.functions == {"main"} and summary.classes == {"Trainer"}


def test_a_name_in_a_type_annotation_does_not_escape():
    """``def render(net: Net) -> Net`` and ``best: Net = ...`` hand the class to nobody (sweep20's
    NeRF: a render helper annotated with the network whose loader keeps amp's state); a list
    holding it does."""
    source = textwrap.dedent(
        """\
        from nets import Net, Head, Tail

        def render(net: Net, *rest: Head, **named: "Tail") -> Net:
            best: Net = net
            return best

        HOOKS = [Tail]
        """
    ).encode()
    summary = summarise("/r/x.py", "x.py", source)
    assert "Net" not in summary.escaping and "Head" not in summary.escaping
    assert "Tail" in summary.escaping


def test_an_amp_imported_in_a_function_is_seen_there_and_in_its_nested_functions_only():
    source = textwrap.dedent(
        """\
        class Trainer:
            def __init__(self, model, optimizer):
                from apex import amp
                self.model, self.optimizer = amp.initialize(model, optimizer)

                def backward(loss):
                    with amp.scale_loss(loss, self.optimizer) as scaled:
                        scaled.backward()

            def fit(self, loss):
                with amp.scale_loss(loss, self.optimizer) as scaled:
                    scaled.backward()
        """
    ).encode()
    summary = summarise("/r/x.py", "x.py", source)
    assert [(s.member, s.method, s.line) for s in summary.amp_sites] == [
        ("initialize", "__init__", 4),
        ("scale_loss", "__init__", 7),
    ]


_INIT = "model, opt = amp.initialize(model, opt, {})"


@pytest.mark.parametrize(
    ("body", "once"),
    [
        ([_INIT.format("")], True),
        (["if a:", "    " + _INIT.format(""), "elif b:", "    " + _INIT.format("loss_scale=8")], True),
        (["if a:", "    " + _INIT.format(""), "else:", "    if b:", "        " + _INIT.format("loss_scale=8")], True),
        (["if a:", "    if b:", "        " + _INIT.format(""), "    else:", "        " + _INIT.format("")], True),
        ([_INIT.format(""), _INIT.format("loss_scale=8")], False),  # one after the other
        (["if a:", "    " + _INIT.format(""), "if b:", "    " + _INIT.format("")], False),  # two ifs: both may run
        (["for a in b:", "    if a:", "        " + _INIT.format(""), "    else:", "        " + _INIT.format("")], False),
        # a loop that only initializes and stores: the scaler is made once, after it
        (["if a:", "    for k in range(len(b)):", "        " + _INIT.format(""), "        b[k] = model"], True),
        (["for k in b:", "    " + _INIT.format(""), "    b.append(model)"], True),
        # a loop that does anything else between its initializes (here: trains) is a loop
        (["for k in b:", "    " + _INIT.format(""), "    train(model, opt)"], False),
        (["for k in b:", "    " + _INIT.format(""), "    if k:", "        break"], False),
    ],
    ids=["one", "if-elif", "else-if", "nested-if-else", "in-sequence", "two-ifs", "in-a-loop", "setup-loop-in-if",
         "setup-loop-append", "loop-that-trains", "loop-that-breaks"],
)
def test_the_index_knows_alternative_initializes(body, once):
    source = "from apex import amp\n\ndef main(model, opt, a, b):\n" + "".join(f"    {line}\n" for line in body)
    summary = summarise("/r/x.py", "x.py", source.encode())
    assert summary.initializes_once() is once


def test_the_index_tells_calls_on_the_instance_from_other_calls():
    """``self.m()`` in a method (or a closure of it) is on the instance; the first parameter of
    a static method, or of a method of a class nested in a definition, is not (the
    master_params helpers' callers in other files are filtered by the class of those on self)."""
    source = textwrap.dedent("""\
        class Trainer:
            def fit(self):
                self.clip()
                def later():
                    self.clip()
                return later

            @staticmethod
            def probe(self):
                self.clip()

            class Inner:
                def run(self):
                    self.clip()

            def build(self):
                class Local:
                    def run(self):
                        self.clip()
                return Local
        """)
    summary = summarise("/r/x.py", "x.py", source.encode())
    calls = {(c.line, c.on_self) for c in summary.method_calls if c.method == "clip"}
    assert calls == {(3, True), (5, True), (10, False), (14, False), (19, False)}


# --- planned and refused layouts, through the command line ---------------------------------------


def test_launcher_and_engine_come_out_native_together(tmp_path):
    write_tree(tmp_path, {"train.py": LAUNCHER.format(module="engine"), "engine.py": ENGINE})
    proc = run_cli(tmp_path, "--allow-no-vcs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    train, engine = (tmp_path / "train.py").read_text(), (tmp_path / "engine.py").read_text()
    assert "apex" not in train + engine
    assert "train_one_epoch(model, optimizer, epoch, scaler=scaler)" in train
    assert "def train_one_epoch(model, optimizer, epoch, scaler):" in engine
    assert "scaler.scale(loss).backward()" in engine
    assert run_cli(tmp_path, "--check").returncode == 0, "a second run has nothing left to do"


def test_a_caller_without_a_scaler_keeps_the_component_on_the_shim_and_says_where(tmp_path):
    write_tree(
        tmp_path,
        {
            "train.py": LAUNCHER.format(module="engine"),
            "engine.py": ENGINE,
            "finetune.py": "from engine import train_one_epoch\n\n\ndef tune(m, o):\n    train_one_epoch(m, o, 0)\n",
        },
    )
    found = report(tmp_path)
    manual = {(f["path"], f["code"]): f["message"] for f in found["findings"] if f["needs_manual_work"]}
    assert set(manual) == {("engine.py", "APX220"), ("train.py", "APX220")}
    assert "train_one_epoch is also called from finetune.py (in tune()), where no GradScaler exists" in manual[
        ("engine.py", "APX220")
    ]


def test_a_component_is_native_in_every_file_or_in_none(tmp_path):
    """The engine cannot go native for a reason of its own (its step is in another
    function): the launcher, which alone could, stays on the shim too."""
    engine = ENGINE.replace("    optimizer.step()\n", "") + "\n\ndef finish(optimizer):\n    optimizer.step()\n"
    write_tree(tmp_path, {"train.py": LAUNCHER.format(module="engine"), "engine.py": engine})
    found = report(tmp_path)
    codes = {(f["path"], f["code"]) for f in found["findings"] if f["needs_manual_work"]}
    assert ("engine.py", "APX220") in codes and ("train.py", "APX220") in codes
    run_cli(tmp_path, "--allow-no-vcs")
    assert "from apexcompat import amp" in (tmp_path / "train.py").read_text()
    assert "scaler" not in (tmp_path / "train.py").read_text()


def test_a_definition_passed_on_as_a_value_gets_no_plan(tmp_path):
    launcher = LAUNCHER.format(module="engine") + "\n\nHOOKS = [train_one_epoch]\n"
    write_tree(tmp_path, {"train.py": launcher, "engine.py": ENGINE})
    plan = plan_for(tmp_path)
    # no call chain hands the GradScaler on; only the module-level one of the reader route
    # (APX252), which every caller of the step reads alike, plans these files
    assert not [f for f in plan.files.values() if f.component is not None and not (f.module_reader or f.module_readers)]
    assert any("passed on as a value in train.py" in why for why in plan.unplanned.values())


#: sweep20's NeRF: the launcher initializes, loads amp's state through a network class of
#: another file, and calls a render helper that initializes the same class for inference
#: (beside a function annotated with it); a script without apex.amp builds that class too
SEVERAL_REFUSED = {
    "train.py": """\
        import torch
        from apex import amp

        from networks import Proposal
        from procedures import render_only


        def main():
            net = Proposal()
            optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
            net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
            net.load("last.pt")
            for _ in range(3):
                loss = net(torch.randn(2, 4)).sum()
                optimizer.zero_grad()
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                optimizer.step()
            render_only("last.pt")
        """,
    "procedures.py": """\
        from apex import amp

        from networks import Proposal


        def render_only(path):
            net = Proposal()
            net = amp.initialize(net, opt_level="O1")
            net.load(path)
            return net


        def draw(net: Proposal, x):
            return net(x)
        """,
    "networks.py": """\
        import torch


        class Proposal(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 1)

            def forward(self, x):
                return self.layer(x)

            def load(self, path):
                save = torch.load(path)
                self.load_state_dict(save["model"])
                from apex import amp
                amp.load_state_dict(save["amp"])
        """,
    "average.py": """\
        from torch.cuda.amp import GradScaler

        from networks import Proposal


        def average(path):
            net = Proposal()
            net.load(path)
            return GradScaler()
        """,
}


def test_a_launcher_reached_by_several_refused_definitions_names_the_same_one_every_run(tmp_path):
    """The launcher reaches two definitions that cannot get the GradScaler: the class whose
    loader keeps amp's state (also built where no GradScaler exists) and the render helper
    that only passes it on to that class.  Its TODO names the class, whatever the order of
    Python's sets (PYTHONHASHSEED) and on a second run too, where the helper, now native,
    no longer needs the GradScaler, and the script, whose torch.cuda.amp import the first run
    dropped, is no longer indexed (the annotation ``net: Proposal`` passes nothing on)."""
    write_tree(tmp_path, SEVERAL_REFUSED)
    diffs = set()
    for seed in range(8):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        args = [sys.executable, "-m", "migrate", "--diff", "--allow-no-vcs", "."]
        diffs.add(subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env).stdout)
    assert len(diffs) == 1, "the output does not depend on the order of a set"
    run_cli(tmp_path, "--allow-no-vcs")
    launcher = (tmp_path / "train.py").read_text()
    assert "saved or loaded in networks.py (Proposal)" in launcher and "(render_only)" not in launcher
    second = run_cli(tmp_path, "--check", "--allow-no-vcs")
    assert "0 files would be rewritten" in second.stdout + second.stderr, second.stdout + second.stderr


# --- files already on the shim ------------------------------------------------------------------


def test_shim_first_then_native(tmp_path):
    write_tree(tmp_path, {"train.py": LAUNCHER.format(module="engine"), "engine.py": ENGINE})
    assert run_cli(tmp_path, "--to", "shim", "--allow-no-vcs").returncode == 0
    assert "from apexcompat import amp" in (tmp_path / "engine.py").read_text()
    found = report(tmp_path)
    assert found["summary"]["files_changed"] == 2
    assert run_cli(tmp_path, "--allow-no-vcs").returncode == 0
    text = (tmp_path / "train.py").read_text() + (tmp_path / "engine.py").read_text()
    assert "apexcompat" not in text and "apex" not in text
    assert "scaler.step(optimizer)" in text


def test_a_shim_file_that_cannot_go_native_keeps_its_bytes_apart_from_todos(tmp_path):
    source = textwrap.dedent(
        """\
        from apexcompat import amp  # the shim


        def save(path):
            return {"amp": amp.state_dict(), "path": "apexcompat.amp"}
        """
    )
    # a script without apex saves through it, where no GradScaler exists
    write_tree(tmp_path, {"ckpt.py": source, "export.py": "from ckpt import save\n\nprint(save('model.pt'))\n"})
    found = report(tmp_path)
    assert [f["code"] for f in found["findings"] if f["needs_manual_work"]] == ["APX403"]
    assert not [f for f in found["findings"] if f["code"] == "APX102"]
    run_cli(tmp_path, "--allow-no-vcs")
    after = (tmp_path / "ckpt.py").read_text()
    assert after.startswith("from apexcompat import amp  # the shim\n")
    assert '"apexcompat.amp"' in after  # strings are not touched


# --- a scaler wrapper class, and a component dropped at apply time ------------------------------

WRAPPER_LAUNCHER = textwrap.dedent(
    """\
    import torch
    from apex import amp

    from utils import ApexStepper


    def main(use_apex=True):
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        stepper = None
        if use_apex:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            stepper = ApexStepper()
        for _ in range(3):
            stepper(model, torch.randn(8, 4), optimizer)
        return {"amp": stepper.state_dict()}
    """
)
WRAPPER = textwrap.dedent(
    """\
    from apex import amp


    class ApexStepper:
        def __call__(self, model, batch, optimizer):
            loss = model(batch).pow(2).mean()
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()

        def state_dict(self):
            if "state_dict" in amp.__dict__:
                return amp.state_dict()
    """
)


def test_a_wrapper_class_without_init_becomes_a_scaler_holder(tmp_path):
    write_tree(tmp_path, {"train.py": WRAPPER_LAUNCHER, "utils/__init__.py": "from .steppers import ApexStepper\n",
                          "utils/steppers.py": WRAPPER})
    proc = run_cli(tmp_path, "--allow-no-vcs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    train, steppers = (tmp_path / "train.py").read_text(), (tmp_path / "utils/steppers.py").read_text()
    assert not re.search(r"^\s*(from|import) apex", train + steppers, re.M)
    # created before the if that builds the wrapper, which uses it
    assert train.index("scaler = torch.amp.GradScaler") < train.index("if use_apex:")
    assert "stepper = ApexStepper(scaler=scaler)" in train
    assert "    def __init__(self, scaler):\n        self.scaler = scaler\n" in steppers
    assert "self.scaler.scale(loss).backward()" in steppers and "return self.scaler.state_dict()" in steppers
    assert run_cli(tmp_path, "--check").returncode == 0


def test_a_component_whose_forward_cannot_be_autocast_keeps_the_shim_and_says_why(tmp_path):
    """The wrapper scales a loss computed by its caller: autocast cannot be placed there, the
    migrated pair would train in float32, so the plan is dropped and both files say why."""
    wrapper = WRAPPER.replace("    def __call__(self, model, batch, optimizer):\n        loss = model(batch).pow(2).mean()\n",
                              "    def __call__(self, loss, optimizer):\n")
    launcher = WRAPPER_LAUNCHER.replace("stepper(model, torch.randn(8, 4), optimizer)",
                                        "stepper(model(torch.randn(8, 4)).pow(2).mean(), optimizer)")
    write_tree(tmp_path, {"train.py": launcher, "utils/__init__.py": "from .steppers import ApexStepper\n",
                          "utils/steppers.py": wrapper})
    found = report(tmp_path)
    manual = {f["path"]: f["message"] for f in found["findings"] if f["needs_manual_work"]}
    assert set(manual) == {"train.py", "utils/steppers.py"}
    assert manual["train.py"].startswith(
        "the GradScaler plan across files was dropped: in utils/steppers.py, the forward pass and loss are not next"
    )
    run_cli(tmp_path, "--allow-no-vcs")
    assert "from apexcompat import amp" in (tmp_path / "utils/steppers.py").read_text()
    assert "torch.amp.GradScaler(" not in (tmp_path / "train.py").read_text()


OUT_OF_REACH = """\
    import torch
    from apex import amp

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    loss = compute(batch)
    optimizer.step()
    with amp.scale_loss(loss, optimizer) as scaled_loss:{comment}
        scaled_loss.backward()
    optimizer.step()
"""


def test_a_single_file_whose_forward_cannot_be_autocast_keeps_the_shim(tmp_path):
    """As written, the native rewrite would train in float32 (the TODO notwithstanding): the
    file keeps apex.amp through the shim, says why, and a second run changes nothing."""
    _keeps_the_shim_saying(
        tmp_path, OUT_OF_REACH.format(comment=""), "as written, a native rewrite would train in float32: the forward pass"
    )


def _keeps_the_shim_saying(tmp_path: Path, source: str, reason: str) -> None:
    """``source`` as train.py keeps apex.amp through the shim, its one manual finding starts
    with ``reason``, and a second run changes nothing."""
    write_tree(tmp_path, {"train.py": source})
    found = report(tmp_path)
    manual = [f for f in found["findings"] if f["needs_manual_work"]]
    assert [f["code"] for f in manual] == ["APX220"]
    assert manual[0]["message"].startswith(reason)
    run_cli(tmp_path, "--allow-no-vcs")
    first = (tmp_path / "train.py").read_text()
    assert "from apexcompat import amp" in first and "GradScaler" not in first
    run_cli(tmp_path, "--allow-no-vcs")
    assert (tmp_path / "train.py").read_text() == first


def test_a_reviewed_autocast_todo_keeps_the_native_rewrite(tmp_path):
    """A suppressed APX210 means the user took the rewrite as it is: it stays native."""
    write_tree(tmp_path, {"train.py": OUT_OF_REACH.format(comment="  # apexcompat: ignore[APX210]")})
    run_cli(tmp_path, "--allow-no-vcs")
    text = (tmp_path / "train.py").read_text()
    assert "torch.amp.GradScaler(" in text and "apexcompat import" not in text


MICRO_STEP_CLIP = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, accumulation, clipper):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
        for i, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulation
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            clipper.step(amp.master_params(optimizer)){comment}
            if (i + 1) % accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
    """


def test_a_call_given_the_gradients_on_every_micro_step_keeps_the_shim(tmp_path):
    """A clipper of the user's called after every backward, the step at the accumulation
    boundary: apex handed it unscaled gradients, a GradScaler could only hand it scaled ones
    (unscale_ runs once per step), so as written the native file would clip at the threshold
    times the loss scale: it keeps apex.amp through the shim, says why, and a second run
    changes nothing (DLE-BERT run_squad.py's GradientClipper)."""
    _keeps_the_shim_saying(
        tmp_path,
        MICRO_STEP_CLIP.format(comment=""),
        "as written, a native rewrite would clip scaled gradients on every micro-step: per-micro-step "
        "gradient use: clipper.step(...) runs after every backward",
    )


SWITCHED_MICRO_STEP_CLIP = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, fp16, accumulation=2):
        if fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for i, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulation
            if fp16:
                with amp.scale_loss(loss, optimizer{delay}) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            if fp16:
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if (i + 1) % accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
    """


def test_a_switched_clip_on_every_micro_step_scales_its_threshold(tmp_path):
    """The fp16 and fp32 clips of an if, after every backward, the step at the accumulation
    boundary: written once as the fp32 branch's clip, with the threshold times the scale
    (APX328), as apex clipped the unscaled gradients (the scale holds until the step's update).
    Before, the scaled threshold went with the branch the merge dropped and the file kept the
    shim (found by the training-loop shapes check, tests/migrate/e2e/shapes.py)."""
    write_tree(tmp_path, {"train.py": textwrap.dedent(SWITCHED_MICRO_STEP_CLIP.format(delay=""))})
    run_cli(tmp_path, "--allow-no-vcs")
    after = (tmp_path / "train.py").read_text()
    assert "apex" not in after
    assert "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0 * scaler.get_scale())" in after
    assert "unscale_" not in after


def test_a_switched_clip_on_every_delayed_micro_step_keeps_the_shim(tmp_path):
    """The same with a delayed unscale: apex clipped scaled gradients on the delayed
    micro-steps and unscaled ones at the boundary, which no one threshold does: the file keeps
    the shim."""
    _keeps_the_shim_saying(
        tmp_path,
        SWITCHED_MICRO_STEP_CLIP.format(delay=", delay_unscale=(i + 1) % accumulation != 0"),
        "as written, a native rewrite would clip scaled gradients on every micro-step: per-micro-step "
        "gradient use: torch.nn.utils.clip_grad_norm_(...) runs after every backward",
    )


HELPER_BACKWARD_CLIP = """\
    import torch
    from apex import amp


    def backward(loss, optimizer):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()


    class Trainer:
        def __init__(self, model, optimizer, accumulation=2):
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
            self.accumulation = accumulation

        def train_step(self, i, x, y):
            loss = torch.nn.functional.mse_loss(self.model(x), y) / self.accumulation
            backward(loss, self.optimizer)
            if (i + 1) % self.accumulation == 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                self.optimizer.zero_grad()
    """


def test_a_clip_left_on_scaled_gradients_with_a_todo_keeps_the_shim(tmp_path):
    """The scaled backward in a helper the method calls, the clip and the step after it: the
    clip would get an APX327 TODO (its unscale_ point is not followed) and, as written, cut
    the scaled gradients; the file keeps apex.amp through the shim instead (the shapes check
    found the native output training otherwise; the reason says where the step is)."""
    _keeps_the_shim_saying(
        tmp_path,
        HELPER_BACKWARD_CLIP,
        "as written, a native rewrite would clip scaled gradients: gradients used after the scaled backward: "
        "torch.nn.utils.clip_grad_norm_(...) saw gradients apex had unscaled, but self.scaler keeps them scaled "
        "until self.scaler.step(self.optimizer) (the scaled backward runs in a function this one calls, and "
        "self.optimizer.step() here is not followed from it)",
    )


def test_a_norm_read_on_every_micro_step_keeps_the_native_rewrite_and_its_todo(tmp_path):
    """A call not named as a clip (a norm read for the log, Swin's get_grad_norm) leaves the
    gradients the step uses alone: the file stays native, with its TODO."""
    source = MICRO_STEP_CLIP.format(comment="").replace("clipper.step(", "log_norm(").replace(", clipper)", ", log_norm)")
    write_tree(tmp_path, {"train.py": source})
    run_cli(tmp_path, "--allow-no-vcs")
    text = (tmp_path / "train.py").read_text()
    assert "torch.amp.GradScaler(" in text and "apexcompat import" not in text
    assert "# TODO(apexcompat): per-micro-step gradient use: log_norm(...)" in text


def test_a_reviewed_micro_step_todo_keeps_the_native_rewrite(tmp_path):
    """A suppressed APX326 means the user took the rewrite as it is: it stays native."""
    write_tree(tmp_path, {"train.py": MICRO_STEP_CLIP.format(comment="  # apexcompat: ignore[APX326]")})
    run_cli(tmp_path, "--allow-no-vcs")
    text = (tmp_path / "train.py").read_text()
    assert "torch.amp.GradScaler(" in text and "apexcompat import" not in text


SCALERS = """\
    from apex import amp


    class ApexScaler:
        state_dict_key = "amp"

        def __call__(self, loss, optimizer):
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
    """

SUPPRESS_LAUNCHER = """\
    from contextlib import suppress

    import torch
    from apex import amp

    from scalers import ApexScaler


    def train(model, optimizer, amp_autocast=suppress, loss_scaler=None):
        for _ in range(3):
            with amp_autocast():
                loss = model(torch.randn(8, 4)).pow(2).mean()
            loss_scaler(loss, optimizer)


    def main(use_apex):
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        amp_autocast = suppress
        if use_apex:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            loss_scaler = ApexScaler()
        train(model, optimizer, amp_autocast=amp_autocast, loss_scaler=loss_scaler)
    """


def test_a_called_wrapper_of_a_launcher_with_a_no_op_context_gets_its_autocast_from_there(tmp_path):
    write_tree(tmp_path, {"train.py": SUPPRESS_LAUNCHER, "scalers.py": SCALERS})
    summaries = {p.name: summarise(str(p), p.name, p.read_bytes()) for p in tmp_path.glob("*.py")}
    assert summaries["train.py"].noop_contexts == {"amp_autocast"}
    assert summaries["scalers.py"].called_wrappers() == {"ApexScaler"}
    plan = plan_for(tmp_path)
    files = {Path(p).name: f for p, f in plan.files.items()}
    assert files["scalers.py"].autocast_from_caller == ("ApexScaler",)
    assert files["train.py"].autocast_for_calls == ("ApexScaler",)
    # without the no-op variable, the wrapper must find its forward pass itself (today's plan)
    write_tree(tmp_path, {"train.py": SUPPRESS_LAUNCHER.replace("amp_autocast = suppress", "amp_autocast = torch.autocast")})
    files = {Path(p).name: f for p, f in plan_for(tmp_path).files.items()}
    assert files["scalers.py"].autocast_from_caller == () and files["train.py"].autocast_for_calls == ()


def test_a_launcher_whose_losses_are_not_under_its_no_op_context_drops_the_plan_and_says_why(tmp_path):
    launcher = SUPPRESS_LAUNCHER.replace(
        "            with amp_autocast():\n                loss = model(torch.randn(8, 4)).pow(2).mean()\n",
        "            loss = model(torch.randn(8, 4)).pow(2).mean()\n            with amp_autocast():\n                pass\n",
    )
    write_tree(tmp_path, {"train.py": launcher, "scalers.py": SCALERS})
    manual = {f["path"]: f["message"] for f in report(tmp_path)["findings"] if f["needs_manual_work"]}
    assert manual["train.py"].startswith(
        "the GradScaler plan across files was dropped: in train.py, the forward passes of the losses handed to "
        "ApexScaler cannot be put under torch.autocast on this branch: the losses handed to ApexScaler() are not "
        "all computed under `with amp_autocast():`"
    ), manual
    assert set(manual) == {"train.py", "scalers.py"}
    write_tree(tmp_path, {"train.py": SUPPRESS_LAUNCHER})
    proc = run_cli(tmp_path, "--allow-no-vcs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    train = (tmp_path / "train.py").read_text()
    assert "amp_autocast = functools.partial(torch.autocast, device_type=\"cuda\", dtype=torch.float16)" in train
    assert "loss_scaler = ApexScaler(scaler=scaler)" in train
    assert "self.scaler.scale(loss).backward()" in (tmp_path / "scalers.py").read_text()


STEPPER_TRAINER = textwrap.dedent(
    """\
    from apex import amp

    from steppers import AmpStepper


    class Trainer:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1"{scale})
            self.stepper = AmpStepper(model)

        def iterate(self, x):
            loss = self.model(x).mean()
            self.stepper.step(loss, self.optimizer)
    """
)
STEPPERS = textwrap.dedent(
    """\
    from apex import amp


    class AmpStepper:
        def __init__(self, model):
            self.model = model
            amp._amp_state.loss_scalers[0]._scale_seq_len = 100

        def step(self, loss, optimizer):
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
    """
)


@pytest.mark.parametrize("scale, dynamic", [("", True), (', loss_scale="dynamic"', True), (", loss_scale=128.0", False),
                                            (", loss_scale=cfg.scale", False)])
def test_a_stepper_class_gets_its_autocast_from_the_launcher_and_its_dynamic_flag(tmp_path, scale, dynamic):
    """The loss AmpStepper.step() scales is a parameter, handed over by the launcher's Trainer:
    the plan has the launcher put autocast around its forward pass, and says whether the
    component's loss scale is provably dynamic (where a growth-interval setting may apply)."""
    write_tree(tmp_path, {"trainer.py": STEPPER_TRAINER.format(scale=scale), "steppers.py": STEPPERS})
    files = {Path(p).name: f for p, f in plan_for(tmp_path).files.items()}
    assert files["steppers.py"].autocast_at_caller == ("AmpStepper.step",)
    assert files["trainer.py"].loss_methods == (("AmpStepper", "step", 0, "loss"),)
    assert files["steppers.py"].dynamic_scaler is dynamic
    manual = [f["message"] for f in report(tmp_path)["findings"] if f["needs_manual_work"]]
    if dynamic:
        assert manual == [], manual
        assert run_cli(tmp_path, "--allow-no-vcs").returncode == 0
        assert "self.scaler.set_growth_interval(100)" in (tmp_path / "steppers.py").read_text()
        trainer = (tmp_path / "trainer.py").read_text()
        assert 'with torch.autocast("cuda", dtype=torch.float16):\n            loss = self.model(x).mean()' in trainer
    else:
        assert any("apex ignores _scale_seq_len when the loss scale is static" in m for m in manual), manual


def test_a_method_the_class_calls_itself_places_its_own_autocast(tmp_path):
    """``self.backward(loss)`` inside the class: the class's own file wraps the forward pass."""
    stepper = STEPPERS.replace("    def step(self, loss, optimizer):", "    def train(self, x, optimizer):\n"
                               "        self.step(self.model(x).mean(), optimizer)\n\n    def step(self, loss, optimizer):")
    write_tree(tmp_path, {"trainer.py": STEPPER_TRAINER.format(scale=""), "steppers.py": stepper})
    files = {Path(p).name: f for p, f in plan_for(tmp_path).files.items()}
    assert files["steppers.py"].autocast_at_caller == () and files["trainer.py"].loss_methods == ()


# --- a model class that steps itself, apex.amp given to helpers ----------------------------------

MODEL_FILE = """\
import torch
from apex import amp


class Net(torch.nn.Module):
    WIDTH = 4

    def __init__(self):
        super().__init__()
        self.model = torch.nn.Linear(self.WIDTH, 1)

    @staticmethod
    def sample(n):
        return torch.randn(n, Net.WIDTH)

    @classmethod
    def build(cls):
        return cls()

    def train_step(self, x, optimizer):
        loss = self.model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""

MODEL_LAUNCHER = """\
import torch
from apex import amp

from nets import Net


def main():
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1"{losses})
    for _ in range(3):
        {step}
"""


@pytest.mark.parametrize(
    ("step", "planned"),
    [
        ("model.train_step(Net.sample(Net.WIDTH), optimizer)", True),  # class attribute, static method
        ("Net.train_step(model, Net.sample(2), optimizer)", False),  # a method read through the class
        ("Net.build().train_step(Net.sample(2), optimizer)", False),  # a class method may build one
        ("other.train_step(Net.sample(2), optimizer)", False),  # a receiver not proven to be a Net
    ],
    ids=["attributes-and-static", "unbound-method", "class-method", "unproven-receiver"],
)
def test_a_model_class_built_before_the_scaler_takes_it_in_its_stepping_method(tmp_path, step, planned):
    write_tree(tmp_path, {"nets.py": MODEL_FILE, "train.py": MODEL_LAUNCHER.format(losses="", step=step)})
    plan = plan_for(tmp_path)
    nets, train = plan.files.get(str(tmp_path / "nets.py")), plan.files.get(str(tmp_path / "train.py"))
    if planned:
        assert nets.method_entries == (("Net", "train_step"),) and not nets.entries
        assert train.pass_to == (("model.train_step", "scaler"),)
        text = run_cli(tmp_path, "--to", "native", "--allow-no-vcs", "--diff").stdout
        assert "def train_step(self, x, optimizer, scaler):" in text
        assert "model.train_step(Net.sample(Net.WIDTH), optimizer, scaler=scaler)" in text
        assert 'torch.autocast(next((p.device.type for p in self.parameters()), "cuda")' in text
    else:
        assert nets is None or not nets.method_entries


def test_num_losses_reaches_the_files_of_the_component(tmp_path):
    step = "model.train_step(Net.sample(2), optimizer)"
    write_tree(tmp_path, {"nets.py": MODEL_FILE, "train.py": MODEL_LAUNCHER.format(losses=", num_losses=2", step=step)})
    plan = plan_for(tmp_path)
    assert {f.loss_scalers for f in plan.files.values() if f.component is not None} == {2}
    assert plan.files[str(tmp_path / "nets.py")].scaler_name == "scalers"


HELPERS = """\
\"\"\"Tools that also take apex.amp.\"\"\"
import torch


def restore(path, model, amp=None):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    if amp is not None:
        amp.load_state_dict(state["amp"])


def log_amp(amp):
    print(amp)


class Keeper:
    def __init__(self, amp):
        self.amp = amp

    def save(self):
        return self.amp.state_dict()

    def swap(self, other):
        self.amp = other
"""

HELPER_LAUNCHER = """\
import torch
from apex import amp

from tools import {name}


def main(model, optimizer, x):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    {call}
    loss = model(x).sum()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    ("name", "call", "given"),
    [
        ("restore", 'restore("last.pt", model, amp=amp)', (("restore", "amp"),)),
        ("restore", 'restore("last.pt", model, amp)', (("restore", "amp"),)),  # by position
        ("log_amp", "log_amp(amp)", ()),  # amp passed on: not followed
        ("Keeper", "Keeper(amp)", ()),  # self.amp assigned twice
    ],
    ids=["keyword", "positional", "passed-on", "reassigned-on-self"],
)
def test_apex_amp_given_to_a_helper_is_followed_only_when_it_only_serves_state(tmp_path, name, call, given):
    write_tree(tmp_path, {"tools.py": HELPERS, "train.py": HELPER_LAUNCHER.format(name=name, call=call)})
    plan = plan_for(tmp_path)
    tools, train = plan.files.get(str(tmp_path / "tools.py")), plan.files.get(str(tmp_path / "train.py"))
    assert (tools.amp_parameters if tools else ()) == given
    assert (train.amp_arguments if train else ()) == ((name,) if given else ())
    findings = report(tmp_path, "--to", "native", "--allow-no-vcs")["findings"]
    fallback = [f["message"] for f in findings if f["code"] == "APX220"]
    assert bool(fallback) == (not given), fallback


@pytest.mark.parametrize(
    "source, named",
    [
        (b"x = 1\n", False),
        (b"# amp.scale_loss is not called here\nx = 1\n", False),  # a comment (a TODO of ours) names nothing
        (b"with self.amp.scale_loss(loss, opt) as s:\n    s.backward()\n", True),
        (b"scale = getattr(amp, 'scale_loss')\n", True),
        (b"def f(:\n    scale_loss\n", True),  # unreadable: nothing is taken as unscaled on a guess
        (b"x = 1  # see amp.scale_loss\r\nwith amp.autocast():\r\n    pass\r\n", False),  # a comment after code
        (b'x = "#"; y = amp.scale_loss\n', True),  # a "#" in a string before it on its line
        (b'"""Notes.\n# scale_loss, in a docstring"""\n', True),
        (b'print(f"{step}: scale_loss")\n', True),  # an f-string's text is a string's, whatever the tokens
        (b'x = "#"; print(f"{step}: scale_loss")\n', True),  # ... also where the tokenizer decides
    ],
)
def test_the_index_tells_code_that_names_scale_loss(source, named):
    from migrate.repo_index import names_scale_loss

    assert names_scale_loss(source) is named


UNSCALED_SETUP = """\
import torch
from apex import amp


def build(args):
    net = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
    return net, optimizer
"""


def test_a_launcher_is_told_when_no_file_of_the_repository_scales_a_loss(tmp_path):
    loop = "from setup import build\n\n\ndef run(args, x):\n    net, opt = build(args)\n    net(x).sum().backward()\n"
    write_tree(tmp_path, {"setup.py": UNSCALED_SETUP, "loop.py": loop})
    assert plan_for(tmp_path).files[str(tmp_path / "setup.py")].nothing_scaled
    # a file without apex that scales through another name of amp (argus's self.amp) says otherwise
    (tmp_path / "steps.py").write_text("def step(self, loss, opt):\n    with self.amp.scale_loss(loss, opt) as s:\n"
                                       "        s.backward()\n")
    summaries = [summarise(str(p), p.name, p.read_bytes()) for p in sorted(tmp_path.glob("*.py"))]
    others = [(str(tmp_path / "steps.py"), "steps.py", (tmp_path / "steps.py").read_bytes())]
    plan = build_plan([s for s in summaries if s and s.amp_sites], [str(tmp_path)], others)
    assert str(tmp_path / "setup.py") not in plan.files or not plan.files[str(tmp_path / "setup.py")].nothing_scaled


def test_an_unscaled_initialize_comes_out_native_without_a_scaler(tmp_path):
    loop = "from setup import build\n\n\ndef run(args, x):\n    net, opt = build(args)\n    net(x).sum().backward()\n"
    write_tree(tmp_path, {"setup.py": UNSCALED_SETUP, "loop.py": loop})
    found = report(tmp_path, "--allow-no-vcs")
    assert [f["code"] for f in found["findings"] if f["needs_manual_work"]] == []
    assert "APX229" in {f["code"] for f in found["findings"]}
    proc = run_cli(tmp_path, "--allow-no-vcs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    setup = (tmp_path / "setup.py").read_text()
    assert "apex" not in setup and "GradScaler" not in setup
    assert 'net.forward = torch.autocast("cuda", dtype=torch.float16)(net.forward)' in setup
    assert (tmp_path / "loop.py").read_text() == loop
    assert run_cli(tmp_path, "--check").returncode == 0, "a second run has nothing left to do"


# --- why a definition that scales a loss is not reached ----------------------------------------

LAUNCHER_ALONE = textwrap.dedent(
    """\
    import torch
    from apex import amp


    def build():
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        return amp.initialize(model, optimizer, opt_level="O1")
    """
)


def test_a_step_called_only_from_a_file_without_apex_says_where(tmp_path):
    loop = "from engine import train_one_epoch\n\n\ndef run(model, optimizer):\n    train_one_epoch(model, optimizer, 0)\n"
    write_tree(tmp_path, {"train.py": LAUNCHER_ALONE, "engine.py": ENGINE, "loop.py": loop})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert (
        "train_one_epoch is called only from files without apex.amp (loop.py:5, in run), where no GradScaler exists"
        in proc.stdout + proc.stderr
    )


def test_a_step_called_from_several_files_without_apex_names_each(tmp_path):
    # each caller would have to hand the GradScaler on: the reason names every one of them
    loop = "from engine import train_one_epoch\n\n\ndef run(model, optimizer):\n    train_one_epoch(model, optimizer, 0)\n"
    tune = loop.replace("def run(", "def tune(")
    write_tree(tmp_path, {"train.py": LAUNCHER_ALONE, "engine.py": ENGINE, "loop.py": loop, "tune.py": tune})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert (
        "train_one_epoch is called only from files without apex.amp (loop.py:5, in run; tune.py:5, in tune), "
        "where no GradScaler exists" in proc.stdout + proc.stderr
    )


def test_a_step_class_subclassed_in_another_file_says_so(tmp_path):
    engine = ENGINE.replace("def train_one_epoch(", "class Stepper:\n    def step(self, ").replace("\n    ", "\n        ")
    engine = engine.replace("class Stepper:\n        def step", "class Stepper:\n    def step")
    other = "from apex import amp\n\nfrom engine import Stepper\n\n\nclass Loud(Stepper):\n    pass\n"
    write_tree(tmp_path, {"train.py": LAUNCHER_ALONE, "engine.py": engine, "other.py": other})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert "Stepper is subclassed, passed on or stored in other.py, never called directly" in proc.stdout + proc.stderr


#: ENGINE's step as a method of a class that names itself in ``super(Stepper, self)``
SUPER_STEPPER_ENGINE = ENGINE.replace("def train_one_epoch(", "class Stepper:\n    def step(self, ").replace(
    "\n    ", "\n        "
).replace(
    "class Stepper:\n        def step",
    "class Stepper:\n    def __init__(self):\n        super(Stepper, self).__init__()\n\n    def step",
)


def test_a_step_class_named_in_its_own_super_call_is_not_called_handed_away(tmp_path):
    # super(Stepper, self) hands the class to nobody: the reason is its subclass in other.py,
    # not "decorated, registered or passed on as a value"
    engine = SUPER_STEPPER_ENGINE
    other = "from apex import amp\n\nfrom engine import Stepper\n\n\nclass Loud(Stepper):\n    pass\n"
    write_tree(tmp_path, {"train.py": LAUNCHER_ALONE, "engine.py": engine, "other.py": other})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert "Stepper is subclassed, passed on or stored in other.py, never called directly" in proc.stdout + proc.stderr
    assert "decorated, registered" not in proc.stdout + proc.stderr


def _stepper_launcher(built_first: bool) -> str:
    """A launcher that builds two Steppers before or after its amp.initialize and steps each."""
    build = "    steppers = [Stepper() for _ in range(2)]\n"
    initialize = (
        "    model = torch.nn.Linear(4, 1)\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        '    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n'
    )
    body = build + initialize if built_first else initialize + build
    head = "import torch\nfrom apex import amp\n\nfrom engine import Stepper\n\n\ndef main():\n"
    return head + body + "    for stepper in steppers:\n        stepper.step(model, optimizer, 0)\n"


def test_a_step_class_built_before_the_initialize_takes_a_scaler_made_before_it(tmp_path):
    # DL-Art-School's ConfigurableStep: super(Step, self) in its own file is no use other than
    # by calls; the launcher builds the steps before the initialize, whose GradScaler reads
    # nothing bound in between: it is made before the first step is built
    write_tree(tmp_path, {"train.py": _stepper_launcher(built_first=True), "engine.py": SUPER_STEPPER_ENGINE})
    found = report(tmp_path, "--allow-no-vcs")
    assert [f["code"] for f in found["findings"] if f["needs_manual_work"]] == []
    assert run_cli(tmp_path, "--allow-no-vcs").returncode == 0
    train_after = (tmp_path / "train.py").read_text()
    assert 'scaler = torch.amp.GradScaler("cuda")\n    steppers = [Stepper(scaler=scaler)' in train_after
    assert "apex" not in train_after and "apex" not in (tmp_path / "engine.py").read_text()
    assert run_cli(tmp_path, "--check").returncode == 0, "a second run has nothing left to do"


def test_a_step_class_built_before_options_the_initialize_reads_is_refused(tmp_path):
    # the opt level is bound after the steps are built: a GradScaler made before them could
    # not read it, so the builder keeps the shim and says which name stands in the way
    launcher = _stepper_launcher(built_first=True).replace(
        "    steppers = [Stepper() for _ in range(2)]\n", '    steppers = [Stepper() for _ in range(2)]\n    level = "O1"\n'
    ).replace('opt_level="O1"', "opt_level=level")
    write_tree(tmp_path, {"train.py": launcher, "engine.py": SUPER_STEPPER_ENGINE})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    out = " ".join((proc.stdout + proc.stderr).split())
    assert (
        "Stepper() is called before amp.initialize, so it cannot be given the GradScaler (the GradScaler made "
        "before it would read level, bound after it)" in out
    )
    assert "used other than by calls" not in out


def test_a_step_class_named_in_its_own_super_call_takes_the_scaler_when_built_after_the_initialize(tmp_path):
    write_tree(tmp_path, {"train.py": _stepper_launcher(built_first=False), "engine.py": SUPER_STEPPER_ENGINE})
    found = report(tmp_path, "--allow-no-vcs")
    assert [f["code"] for f in found["findings"] if f["needs_manual_work"]] == []
    proc = run_cli(tmp_path, "--allow-no-vcs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    engine_after = (tmp_path / "engine.py").read_text()
    assert "apex" not in engine_after and "super(Stepper, self).__init__()" in engine_after
    assert "def __init__(self, scaler):" in engine_after and "self.scaler.step(optimizer)" in engine_after
    assert "Stepper(scaler=scaler)" in (tmp_path / "train.py").read_text()
    assert run_cli(tmp_path, "--check").returncode == 0, "a second run has nothing left to do"


def test_a_step_class_built_from_a_module_imported_by_name_says_so(tmp_path):
    # imaginaire's get_trainer: importlib.import_module(cfg.trainer.type).Trainer(...)
    engine = ENGINE.replace("def train_one_epoch(", "class Stepper:\n    def step(self, ").replace("\n    ", "\n        ")
    engine = engine.replace("class Stepper:\n        def step", "class Stepper:\n    def step")
    other = "from engine import Stepper as Base\n\n\nclass Stepper(Base):\n    pass\n"
    factory = textwrap.dedent(
        """\
        import importlib


        def get_stepper(kind):
            lib = importlib.import_module(kind)
            return lib.Stepper()
        """
    )
    write_tree(tmp_path, {"train.py": LAUNCHER_ALONE, "engine.py": engine, "other.py": other, "factory.py": factory})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert (
        "Stepper is subclassed, passed on or stored in other.py, a file without apex.amp, never called directly; "
        "it is built as `.Stepper(...)` of a module imported by name at run time (factory.py:6, in get_stepper): "
        "which class that is, no GradScaler route can tell" in " ".join((proc.stdout + proc.stderr).split())
    )


def test_a_step_class_no_call_of_which_has_the_scaler_names_every_caller(tmp_path):
    # FARM's Trainer: built by an example that names apex only in a comment and by scripts
    # without apex.amp; none has a GradScaler, so none is "also" a caller without one
    engine = textwrap.dedent(
        """\
        import torch
        from apex import amp


        class Stepper:
            def __init__(self, model, optimizer):
                self.model = model
                self.optimizer = optimizer

            def step(self):
                loss = self.model(torch.randn(8, 4)).pow(2).mean()
                self.optimizer.zero_grad()
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
                self.optimizer.step()
        """
    )
    example = "# fp16 needs apex installed\nfrom engine import Stepper\n\n\ndef run(model, optimizer):\n" \
        "    Stepper(model, optimizer).step()\n"
    other = "from engine import Stepper\n\n\ndef tune(model, optimizer):\n    Stepper(model, optimizer).step()\n"
    write_tree(tmp_path, {"train.py": LAUNCHER_ALONE, "engine.py": engine, "example.py": example, "other.py": other})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert (
        "Stepper is called from example.py:6 (run), and from files without apex.amp (other.py:5, in tune), "
        "none of which has a GradScaler" in " ".join((proc.stdout + proc.stderr).split())
    )


def test_a_script_function_between_the_launcher_and_the_scaling_says_it_runs_as_a_script(tmp_path):
    # FARM's custom-optimizer example: indexed for a comment naming apex, its function (run
    # only under the file's __main__ guard) calls the step that scales; it has no GradScaler
    script = (
        "# fp16 needs apex installed\nfrom engine import train_one_epoch\n\n\ndef main(model, optimizer):\n"
        "    train_one_epoch(model, optimizer, 0)\n\n\nif __name__ == \"__main__\":\n    main(None, None)\n"
    )
    # the step also runs a plain backward on another path and steps every other epoch, so the
    # backwards of several calls, fp16 or not, may add up to one step: no module-level
    # GradScaler of the launcher can stand in (APX252; without it the engine reads one,
    # test_reader_route_*)
    launcher = LAUNCHER_ALONE.replace(
        "    return amp.initialize(", "    model, optimizer = amp.initialize("
    ) + "    return model, optimizer\n"
    engine = ENGINE.replace("def train_one_epoch(model, optimizer, epoch):", "def train_one_epoch(model, optimizer, epoch, fp16=True):")
    engine = engine.replace(
        "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n        scaled_loss.backward()\n",
        "    if fp16:\n        with amp.scale_loss(loss, optimizer) as scaled_loss:\n            scaled_loss.backward()\n"
        "    else:\n        loss.backward()\n",
    ).replace("    optimizer.step()\n", "    if epoch % 2:\n        optimizer.step()\n")
    write_tree(tmp_path, {"train.py": launcher, "engine.py": engine, "script.py": script})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert "train_one_epoch is called only from script.py:6 (main), where no GradScaler exists" in proc.stderr
    assert (
        "reached through script.py (main), which is run only as its file's script "
        '(under `if __name__ == "__main__":`), where no GradScaler exists' in " ".join((proc.stdout + proc.stderr).split())
    )


def test_reader_route_the_engine_reads_the_launchers_module_level_grad_scaler(tmp_path):
    # the same repository, the launcher importing nothing of the engine: one module initializes
    # apex and scales nothing, the engine scales where no call chain from it reaches (APX252)
    script = "from engine import train_one_epoch\n\n\ndef main(model, optimizer):\n    train_one_epoch(model, optimizer, 0)\n"
    launcher = LAUNCHER_ALONE.replace(
        "    return amp.initialize(", "    model, optimizer = amp.initialize("
    ) + "    return model, optimizer\n"
    write_tree(tmp_path, {"train.py": launcher, "engine.py": ENGINE, "script.py": script})
    run_cli(tmp_path, "--to", "native", "--allow-no-vcs")
    assert "scaler = torch.amp.GradScaler(" in (tmp_path / "train.py").read_text()
    engine = (tmp_path / "engine.py").read_text()
    assert "import train\n" in engine and "train.scaler.scale(loss).backward()" in engine
    assert "apex" not in engine


def test_a_step_class_subclassed_in_a_file_without_apex_is_not_called_there(tmp_path):
    engine = ENGINE.replace("def train_one_epoch(", "class Stepper:\n    def step(self, ").replace("\n    ", "\n        ")
    engine = engine.replace("class Stepper:\n        def step", "class Stepper:\n    def step")
    other = "from engine import Stepper\n\n\nclass Loud(Stepper):\n    pass\n"
    write_tree(tmp_path, {"train.py": LAUNCHER_ALONE, "engine.py": engine, "other.py": other})
    proc = run_cli(tmp_path, "--to", "native", "--diff")
    assert (
        "Stepper is subclassed, passed on or stored in other.py, a file without apex.amp, never called directly"
        in proc.stdout + proc.stderr
    )


FACTORY = """\
    import torch
    from apex import amp


    def build(cfg):
        net = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        if cfg.amp:
            net, opt = amp.initialize(net, opt, opt_level="O1"{more})
        return net, opt
    """
FACTORY_USER = """\
    import torch
    from apex import amp

    from factory import build


    def backward(loss, opt):
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()


    def {name}(cfg):
        net, opt = build(cfg)
        backward(net(torch.randn(2, 4)).sum(), opt)
    """

CLASS_USER = """\
    import torch
    from apex import amp

    from factory import build


    class {name}:
        def __init__(self, cfg):
            self.cfg = cfg
            net, opt = build(cfg)
            self.net = net
            self.opt = opt

        def fit(self, x):
            loss = self.net(x).sum()
            with amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
            self.opt.step()
    """



def test_a_model_factory_returns_the_scaler_to_its_one_caller(tmp_path):
    write_tree(tmp_path, {"factory.py": FACTORY.format(more=""), "train.py": FACTORY_USER.format(name="main")})
    plan = plan_for(tmp_path)
    factory, user = plan.files[str(tmp_path / "factory.py")], plan.files[str(tmp_path / "train.py")]
    assert (factory.returns_scaler, factory.returned_to) == ("build", "train.py")
    assert user.received == (("main", "build"),) and user.component == factory.component is not None


@pytest.mark.parametrize(
    "user, names, received",
    [
        # top-level functions
        (FACTORY_USER, ("main", "tune"), ("main", "tune")),
        # the __init__ of a trainer class each, kept on self for the methods that scale
        (CLASS_USER, ("Trainer", "Tuner"), ("Trainer.__init__", "Tuner.__init__")),
    ],
    ids=["functions", "class-inits"],
)
def test_a_model_factory_returns_a_scaler_to_each_caller_of_its_own(tmp_path, user, names, received):
    tree = {"factory.py": FACTORY.format(more=""), "train.py": user.format(name=names[0]),
            "tune.py": user.format(name=names[1])}
    write_tree(tmp_path, tree)
    plan = plan_for(tmp_path)
    factory = plan.files[str(tmp_path / "factory.py")]
    train, tune = plan.files[str(tmp_path / "train.py")], plan.files[str(tmp_path / "tune.py")]
    assert (factory.returns_scaler, factory.returned_to) == ("build", "train.py, tune.py")
    assert (train.received, tune.received) == (((received[0], "build"),), ((received[1], "build"),))
    assert train.component == tune.component == factory.component is not None


@pytest.mark.parametrize(
    "files",
    [
        # called from two files, one of which runs the other: which GradScaler scales the
        # first caller's losses after the second's call would be unproven
        {"factory.py": FACTORY.format(more=""), "train.py": FACTORY_USER.format(name="main"),
         "tune.py": FACTORY_USER.format(name="tune").replace(
             "from factory import build\n", "from factory import build\n    from train import main\n"
         ).replace("        net, opt = build(cfg)\n", "        main(cfg)\n        net, opt = build(cfg)\n")},
        # called twice from one file: not this route
        {"factory.py": FACTORY.format(more=""),
         "train.py": FACTORY_USER.format(name="main")
         + "\n\n    def tune(cfg):\n        net, opt = build(cfg)\n        backward(net(torch.randn(2, 4)).sum(), opt)\n"},
        # one loss scaler per loss id: not this route
        {"factory.py": FACTORY.format(more=", num_losses=2"), "train.py": FACTORY_USER.format(name="main")},
    ],
)
def test_no_factory_route_without_its_proof(tmp_path, files):
    write_tree(tmp_path, files)
    plan = plan_for(tmp_path)
    assert not any(f.returns_scaler or f.received for f in plan.files.values())


def test_factory_initializes_in_sequence_with_other_options_keep_the_shim(tmp_path):
    factory = FACTORY.format(more="").replace(
        "        return net, opt\n",
        "            net2 = torch.nn.Linear(4, 1)\n"
        "            net2 = amp.initialize(net2, torch.optim.SGD(net2.parameters(), lr=0.1), opt_level=\"O2\")\n"
        "        return net, opt\n",
    )
    write_tree(tmp_path, {"factory.py": factory, "train.py": FACTORY_USER.format(name="main")})
    messages = [f["message"] for f in report(tmp_path, "--to", "native")["findings"] if f["code"] == "APX220"]
    assert any(
        "amp.initialize is called for training more than once with different options "
        "(opt_level=\"O2\" here, opt_level=\"O1\" first): one GradScaler cannot follow both" in m
        for m in messages
    ), messages



@pytest.mark.parametrize(
    "extra, reason",
    [
        # a subclass whose __init__ skips the base's: its instances would have no GradScaler
        ({"distill.py": "from train import Trainer\n\n\nclass Distill(Trainer):\n"
                        "    def __init__(self, cfg):\n        self.cfg = cfg\n"},
         "Distill in distill.py derives from Trainer but its __init__ does not call the base's"),
        # a subclass that scales through apex.amp itself: not followed
        ({"tune.py": "from apex import amp\n\nfrom train import Trainer\n\n\nclass Tuner(Trainer):\n"
                     "    def fit(self, x):\n        with amp.scale_loss(self.net(x).sum(), self.opt) as s:\n"
                     "            s.backward()\n"},
         "Tuner in tune.py derives from Trainer and uses apex.amp itself"),
        # the factory also called from a file without apex.amp that returns what it gets:
        # one more value there cannot be proven harmless
        ({"serve.py": "from factory import build\n\n\ndef serve(cfg):\n    return build(cfg)\n"},
         "what build() returns at serve.py:5, a file without apex.amp, is used other than by an assignment"),
    ],
)
def test_a_trainer_class_that_cannot_keep_the_factory_scaler_keeps_the_shim(tmp_path, extra, reason):
    write_tree(tmp_path, {"factory.py": FACTORY.format(more=""), "train.py": CLASS_USER.format(name="Trainer"),
                          **extra})
    findings = report(tmp_path, "--to", "native")["findings"]
    messages = [f["message"] for f in findings if f["code"] == "APX220" and f["path"] in ("factory.py", "train.py")]
    assert len(messages) == 2 and all(reason in m for m in messages), findings


@pytest.mark.parametrize("early", ["self.fit(torch.randn(2, 4))", "self.warm_up()"])
def test_a_method_the_init_runs_before_the_factory_returns_keeps_the_shim(tmp_path, early):
    # a method that scales, or one that calls it, run by __init__ before the factory's
    # GradScaler is on self
    user = CLASS_USER.format(name="Trainer").replace(
        "            net, opt = build(cfg)\n",
        f"            {early}\n            net, opt = build(cfg)\n",
    ) + "\n        def warm_up(self):\n            self.fit(torch.randn(2, 4))\n"
    write_tree(tmp_path, {"factory.py": FACTORY.format(more=""), "train.py": user})
    messages = [f["message"] for f in report(tmp_path, "--to", "native")["findings"] if f["code"] == "APX220"]
    assert any("this comes before build() returns the GradScaler it would use" in m for m in messages), messages


# --- a function handed apex.amp in its own file, referred to from another file -----------------

AMP_PARAM_TRAIN = AMP_OR_NONE_GIVEN  # run_epoch(model, optimizer, batches, amp, clip), called in main


def test_the_index_reads_import_lines_and_local_calls_given_amp(tmp_path):
    source = (
        "import pkg.train\nfrom . import steps\nfrom .train import *\nfrom apex import amp\n\n\n"
        "def main(m, o, fp16):\n    if fp16:\n        from apex import amp as local_amp\n"
        "        run_epoch(m, o, local_amp)\n    log(amp=amp)\n    run_epoch(m, o, None)\n    steps.go(amp)\n"
    )
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/launch.py": source})
    summary = summarise(str(tmp_path / "pkg/launch.py"), "pkg/launch.py", source.encode())
    assert summary is not None
    assert summary.import_lines == {"pkg.train": 1, "pkg.steps": 2, "pkg.train.*": 3, "apex.amp": 4}
    assert summary.amp_local_calls == {"run_epoch", "log"}  # not a method call, not a call without amp
    # ``global amp`` in a setup function binds the module's name there
    setup = (
        "def setup(m, o):\n    global amp\n    from apex import amp\n    return amp.initialize(m, o)\n\n\n"
        "def main(m, o):\n    m, o = setup(m, o)\n    run_epoch(m, o, amp)\n"
    )
    assert summarise("setup.py", "setup.py", setup.encode()).amp_local_calls == {"run_epoch"}


def _outside_plan(tmp_path: Path, files: Dict[str, str]):
    """The plan of ``train.py`` plus ``files``, as the pipeline builds it: files without apex
    are not indexed, only searched."""
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/train.py": AMP_PARAM_TRAIN, **files})
    paths = sorted(tmp_path.rglob("*.py"))
    texts = {p: p.read_bytes() for p in paths}
    summaries = [summarise(str(p), str(p.relative_to(tmp_path)), texts[p]) for p in paths if b"apex" in texts[p]]
    others = [(str(p), str(p.relative_to(tmp_path)), texts[p]) for p in paths if b"apex" not in texts[p]]
    return build_plan([s for s in summaries if s], [str(tmp_path)], others).files.get(str(tmp_path / "pkg/train.py"))


@pytest.mark.parametrize(
    "files, where",
    [
        ({"tune.py": "from pkg.train import run_epoch\n\n\ndef tune(m, o, b):\n    run_epoch(m, o, b, None)\n"},
         "tune.py:5"),
        ({"tune.py": "import pkg.train\n\n\ndef tune(m, o, b):\n    pkg.train.run_epoch(m, o, b, None)\n"},
         "tune.py:1"),
        ({"tune.py": "from pkg import train\n\nSTEP = train.run_epoch\n"}, "tune.py:1"),
        ({"pkg/tune.py": "from .train import *\n"}, "pkg/tune.py:1"),
        # a file with apex of its own (indexed) that imports it under another name
        ({"tune.py": "from apex import amp\nfrom pkg.train import run_epoch as epoch\n\n\n"
                     "def tune(m, o, b):\n    epoch(m, o, b, amp)\n"}, "tune.py:6"),
    ],
)
def test_a_function_given_amp_in_its_file_and_used_from_another_is_noted(tmp_path, files, where):
    plan = _outside_plan(tmp_path, files)
    assert plan is not None and plan.used_elsewhere == (("run_epoch", where),)


@pytest.mark.parametrize(
    "files",
    [
        {},
        # the module's other functions, a same-named function of another module, the name in text only
        {"tune.py": "from pkg.train import main\n\nmain(None, None, None, [])\n"},
        {"other.py": "def run_epoch():\n    pass\n", "tune.py": "from other import run_epoch\n\nrun_epoch()\n"},
        {"notes.py": "# pkg.train.run_epoch trains one epoch\n"},
    ],
)
def test_a_function_given_amp_used_only_in_its_file_has_no_such_note(tmp_path, files):
    plan = _outside_plan(tmp_path, files)
    assert plan is None or plan.used_elsewhere == ()


def test_a_function_given_amp_and_used_from_another_file_keeps_the_shim_with_the_reason(tmp_path):
    tune = "from pkg.train import run_epoch\n\n\ndef tune(m, o, b):\n    run_epoch(m, o, b, None)\n"
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/train.py": AMP_PARAM_TRAIN, "tune.py": tune})
    messages = [f["message"] for f in report(tmp_path, "--to", "native")["findings"] if f["code"] == "APX220"]
    assert messages == [
        "apex.amp (or None) is given to run_epoch() as its parameter amp, and run_epoch is also used from "
        "tune.py:5, which would still hand it apex.amp or None, so that parameter cannot carry the GradScaler; "
        "this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand"
    ]
    # without that file the function takes the GradScaler (APX230)
    (tmp_path / "tune.py").unlink()
    codes = {f["code"] for f in report(tmp_path, "--to", "native")["findings"]}
    assert "APX230" in codes and "APX220" not in codes


SERVE = "from factory import build\n\n\ndef serve(cfg):\n{body}"
#: a training script that builds its model through the factory and scales its loss
TRAIN = """\
    import torch
    from apex import amp

    from factory import build


    def main(cfg):
        net, opt = build(cfg)
        for step in range(2):
            loss = net(torch.randn(2, 4)).sum()
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
            opt.step()
    """


@pytest.mark.parametrize(
    "body, edited",
    [
        # unpacked into names: the unpacking takes the GradScaler into ``_``
        ("    net, _ = build(cfg)\n    return net\n", "    net, _, _ = build(cfg)\n    return net\n"),
        ("    (net, opt) = build(cfg)\n    return net\n", "    (net, opt, _) = build(cfg)\n    return net\n"),
        ("    [net, opt] = build(\n        cfg,\n    )\n    return net\n",
         "    [net, opt, _] = build(\n        cfg,\n    )\n    return net\n"),
        # discarded, indexed by a literal, or kept in a name only indexed so: nothing to change
        ("    build(cfg)\n", None),
        ("    return build(cfg)[0]\n", None),
        ("    pair = build(cfg)\n    return pair[0], pair[1]\n", None),
    ],
    ids=["names", "parenthesised", "list-over-lines", "discarded", "indexed", "name-indexed"],
)
def test_a_factory_caller_without_apex_keeps_working(tmp_path, body, edited):
    serve = SERVE.format(body=body)
    write_tree(tmp_path, {"factory.py": FACTORY.format(more=""), "train.py": TRAIN, "serve.py": serve})
    proc = run_cli(tmp_path, "--to", "native", "--allow-no-vcs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "apex" not in (tmp_path / "factory.py").read_text() + (tmp_path / "train.py").read_text()
    assert "return net, opt, scaler" in (tmp_path / "factory.py").read_text()
    assert (tmp_path / "serve.py").read_text() == (serve if edited is None else SERVE.format(body=edited))
    said = proc.stdout + proc.stderr
    assert ("serve.py:5:1: APX235 [*] build() now returns the GradScaler" in said) == (edited is not None), said
    again = run_cli(tmp_path, "--to", "native", "--check")
    assert again.returncode == 0 and "0 files would be rewritten" in again.stdout + again.stderr, again


@pytest.mark.parametrize(
    "body, why",
    [
        ("    net, *rest = build(cfg)\n    return net\n", "is unpacked with a starred name"),
        ("    pair = build(cfg)\n    net, opt = pair\n    return net\n",
         "is kept in `pair`, which is used other than by a literal index k >= 0"),
        ("    return build(cfg)[-1]\n", "is indexed other than by a literal k >= 0"),
        ("    net, _ = build(cfg)\n    return _(net)\n", "is unpacked in a file that reads `_` itself"),
        ("    return len(build(cfg))\n", "is used other than by an assignment of its own"),
    ],
    ids=["starred", "name-unpacked", "negative-index", "reads-underscore", "passed-on"],
)
def test_a_factory_caller_without_apex_that_cannot_be_proven_keeps_the_shim(tmp_path, body, why):
    serve = SERVE.format(body=body)
    write_tree(tmp_path, {"factory.py": FACTORY.format(more=""), "train.py": TRAIN, "serve.py": serve})
    findings = report(tmp_path, "--to", "native")["findings"]
    messages = [f["message"] for f in findings if f["code"] == "APX220"]
    reason = f"what build() returns at serve.py:5, a file without apex.amp, {why}"
    assert len(messages) == 2 and all(reason in m for m in messages), messages
    assert not any(f["code"] == "APX235" for f in findings)


def test_a_factory_caller_without_apex_is_left_alone_when_the_component_falls_back(tmp_path):
    # train.py keeps apex.amp for a reason of its own (private amp state): the component is
    # dropped, so the factory keeps returning two values and serve.py must not change
    serve = SERVE.format(body="    net, _ = build(cfg)\n    return net\n")
    user = TRAIN + "        print(amp._amp_state)\n"
    write_tree(tmp_path, {"factory.py": FACTORY.format(more=""), "train.py": user, "serve.py": serve})
    proc = run_cli(tmp_path, "--to", "native", "--allow-no-vcs")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "apexcompat" in (tmp_path / "factory.py").read_text()
    assert (tmp_path / "serve.py").read_text() == serve and "APX235" not in proc.stdout + proc.stderr


# --- a state-keeping class of another file, beside one no file builds -------------------------

RESTORER_LAUNCHER = """\
    import torch
    from apex import amp

    from keep import Keeper


    def main():
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        keeper = Keeper(model, optimizer)
        loss = model(torch.randn(8, 4)).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        keeper.save("last.pt")
    """
RESTORER_KEEP = """\
    import torch
    from apex import amp


    class Keeper:
        def __init__(self, model, optimizer):
            self.objects = (model, optimizer)

        def save(self, path):
            torch.save([o.state_dict() for o in self.objects] + [amp.state_dict()], path)


    class OldKeeper:
        def __init__(self, **objects):
            self.objects = objects

        def save(self, path):
            torch.save(dict(amp=amp.state_dict()), path)
    """


@pytest.mark.parametrize(
    ("other", "unreferenced"),
    [
        ({}, ("OldKeeper",)),
        # named by another file, even without a call: its users are not followed
        ({"tools.py": "from keep import OldKeeper\n\nKINDS = [OldKeeper]\n"}, ()),
        ({"tools.py": "import keep\n\nKIND = keep.OldKeeper\n"}, ()),
        ({"tools.py": "from keep import *\n\nKIND = OldKeeper\n"}, ()),
    ],
)
def test_a_class_no_file_names_takes_the_scaler_beside_a_planned_one(tmp_path, other, unreferenced):
    write_tree(tmp_path, {"train.py": RESTORER_LAUNCHER, "keep.py": RESTORER_KEEP, **other})
    keep = build_plan(
        [s for p in sorted(tmp_path.rglob("*.py")) for s in [summarise(str(p), p.name, p.read_bytes())] if s],
        [str(tmp_path)],
    ).files[str(tmp_path / "keep.py")]
    assert keep.unreferenced == unreferenced
    assert keep.entries == tuple(sorted({"Keeper", *unreferenced}))


NET_LOADER = {
    "train.py": """\
        import torch
        from apex import amp

        from model import Net
        from probe import probe


        def main(resume=None):
            net = Net()
            optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
            net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
            if resume:
                net.load_from(resume, True)
            for _ in range(3):
                loss = net(torch.randn(2, 4)).sum()
                optimizer.zero_grad()
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                optimizer.step()
            return probe(net)
        """,
    "model.py": """\
        import torch


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 1)

            def forward(self, x):
                return self.layer(x)

            def load_from(self, path, use_amp=False):
                save = torch.load(path)
                self.load_state_dict(save["model"])
                if use_amp:
                    from apex import amp
                    amp.load_state_dict(save["amp"])
        """,
    "probe.py": """\
        import torch
        from torch.cuda.amp import autocast

        from model import Net


        def probe(trained):
            fresh = Net()
            fresh.load_state_dict(trained.state_dict())
            with autocast():
                return fresh(torch.ones(1, 4))
        """,
}


def test_a_class_whose_methods_take_the_scaler_may_be_built_where_no_grad_scaler_exists(tmp_path):
    """Net is built before amp.initialize and its load_from takes the GradScaler: probe.py,
    which the training run reaches, builds a Net too but never loads through it, so that
    building hands nothing on; the launcher's call passes the GradScaler (required: no other
    file calls load_from).  Before, "Net is also called from probe.py:8" kept both files on
    the shim."""
    write_tree(tmp_path, NET_LOADER)
    model = plan_for(tmp_path).files[str(tmp_path / "model.py")]
    assert model.method_entries == (("Net", "load_from"),) and model.optional_methods == ()
    found = report(tmp_path)
    assert not [f for f in found["findings"] if f["needs_manual_work"]], found["findings"]
    run_cli(tmp_path, "--allow-no-vcs")
    assert "def load_from(self, path, use_amp=False, *, scaler):" in (tmp_path / "model.py").read_text()
    assert "net.load_from(resume, True, scaler=scaler)" in (tmp_path / "train.py").read_text()
    assert "fresh = Net()" in (tmp_path / "probe.py").read_text()


def test_a_method_that_takes_the_scaler_called_where_a_training_run_reaches_keeps_the_shim(tmp_path):
    """The same, but probe() loads through the new Net with the flag on: in the training run
    apex loaded that state into its live loss scaler, which a GradScaler left out would not, so
    nothing is planned, and the reason names the call and the training initialize."""
    files = dict(NET_LOADER, **{"probe.py": NET_LOADER["probe.py"].replace(
        "fresh.load_state_dict(trained.state_dict())\n",
        "fresh.load_state_dict(trained.state_dict())\n            fresh.load_from(\"last.pt\", True)\n")})
    write_tree(tmp_path, files)
    launcher = plan_for(tmp_path).files[str(tmp_path / "train.py")]
    assert launcher.refusal == (
        "the amp state is saved or loaded in model.py (Net), which cannot get the GradScaler: Net.load_from is also "
        "called from probe.py (in probe()), where no GradScaler exists, and that file does not run alone (main of train.py "
        "initializes amp for training)"
    )


def test_a_launcher_whose_state_keeper_cannot_get_the_scaler_keeps_the_shim(tmp_path):
    """Keeper is also built by a script without apex.amp: keep.py stays on the shim, and so
    does the launcher (it scales its own loss, but its amp state is kept in keep.py)."""
    files = {"train.py": RESTORER_LAUNCHER, "keep.py": RESTORER_KEEP.split("\n\n\nclass OldKeeper")[0] + "\n",
             "probe.py": "import torch\n\nfrom keep import Keeper\n\n\ndef probe(model):\n"
                         "    return Keeper(model, torch.optim.SGD(model.parameters(), lr=0.0))\n"}
    write_tree(tmp_path, files)
    launcher = plan_for(tmp_path).files[str(tmp_path / "train.py")]
    assert launcher.refusal == (
        "the amp state is saved or loaded in keep.py (Keeper), which cannot get the GradScaler: "
        "Keeper is also called from probe.py (in probe()), where no GradScaler exists"
    )
    found = report(tmp_path)["findings"]
    shim = sorted((f["path"], f["code"]) for f in found if f["code"] in ("APX102", "APX220"))
    assert shim == [("keep.py", "APX102"), ("train.py", "APX102"), ("train.py", "APX220")], found


def test_a_launcher_keeps_the_shim_when_the_file_it_passes_the_scaler_to_falls_back(tmp_path):
    """The plan would pass the GradScaler to Keeper, but keep.py falls back (apex's private
    state): the component is dropped, and the launcher, which scales its own loss, keeps
    apex.amp too rather than coming out native beside a file that reads apex.amp's state."""
    keep = RESTORER_KEEP.split("\n\n\nclass OldKeeper")[0] + "\n" + (
        "\n\n    def scale_now():\n        return amp._amp_state.loss_scalers[0].loss_scale()\n"
    )
    write_tree(tmp_path, {"train.py": RESTORER_LAUNCHER, "keep.py": keep})
    found = report(tmp_path)["findings"]
    shim = sorted((f["path"], f["code"]) for f in found if f["code"] in ("APX102", "APX220"))
    assert ("train.py", "APX102") in shim and ("train.py", "APX220") in shim, found
    launcher = [f["message"] for f in found if f["path"] == "train.py" and f["code"] == "APX220"]
    assert launcher and launcher[0].startswith("the GradScaler plan across files was dropped: in keep.py"), launcher


#: a library whose step function scales with apex (its callers initialize, outside the
#: repository), beside tests whose package has the library's name too (ignite's layout)
LIBRARY_WITH_A_TEST_PACKAGE = {
    'lib/__init__.py': '',
    'lib/engine.py': '__all__ = ["create_trainer", "apex_step"]\n\n\ndef apex_step(model, optimizer):\n    from apex import amp as apex_amp\n\n    def update(x):\n        optimizer.zero_grad()\n        loss = model(x).sum()\n        with apex_amp.scale_loss(loss, optimizer) as scaled_loss:\n            scaled_loss.backward()\n        optimizer.step()\n        return loss.item()\n\n    return update\n\n\ndef create_trainer(model, optimizer, amp_mode=None):\n    if amp_mode == "apex":\n        return apex_step(model, optimizer)\n    return None\n',
    'examples/train.py': 'from lib.engine import create_trainer\n\n\ndef main(model, optimizer, batches):\n    update = create_trainer(model, optimizer)\n    return update\n',
    'tests/__init__.py': '',
    'tests/lib/__init__.py': '',
    'tests/lib/engine.py': 'def make_batches(n):\n    return list(range(n))\n',
    'tests/test_engine.py': 'import torch\n\nfrom lib.engine import create_trainer\n\n\ndef test_apex_trainer():\n    model = torch.nn.Linear(1, 1).cuda()\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    from apex import amp\n\n    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")\n    update = create_trainer(model, optimizer, amp_mode="apex")\n    update(torch.randn(4, 1).cuda())\n',
    'tests/test_metrics.py': 'import torch\n\n\ndef test_apex_mean():\n    model = torch.nn.Linear(1, 1).cuda()\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    from apex import amp\n\n    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n    total = sum(model(torch.ones(1, 1).cuda()).item() for _ in range(3))\n    assert total == total\n',
}


def test_a_library_step_and_its_tests_say_where_the_losses_are_scaled(tmp_path):
    """The library's step function is in its __all__: code outside the repository calls it
    after its own amp.initialize, so no GradScaler follows it; a test importing the library
    through a module name the test package answers to too cannot send it one (and the walk
    from it follows both files that name may denote, so it is not taken for unscaled); a test
    module that only initializes runs under pytest alone, what it calls scales nothing: it
    gets autocast without a GradScaler (before: "the launcher is no script")."""
    write_tree(tmp_path, LIBRARY_WITH_A_TEST_PACKAGE)
    found = report(tmp_path)["findings"]
    why = {f["path"]: f["message"] for f in found if f["code"] == "APX220"}
    assert "(apex_step is exported by the __all__ of lib/engine.py: code outside the repository may call it" in why[
        "lib/engine.py"
    ], why
    assert why["tests/test_engine.py"].startswith(
        "no amp.scale_loss in this file: it calls create_trainer from lib.engine, a module name 2 files of the "
        "repository answer to (tests/lib/engine.py, lib/engine.py): which one the import finds depends on sys.path"
    ), why
    assert "tests/test_metrics.py" not in why, why
    assert any(f["path"] == "tests/test_metrics.py" and f["code"] == "APX229" for f in found), found


UNBOUND_SCALE_BESIDE_A_STAR_IMPORT = {
    "train.py": 'import torch\n\nfrom trainer import Trainer\n\n\ndef main(args):\n    model = torch.nn.Linear(4, 1)\n'
    '    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    if args.fp16:\n        from apex import amp\n'
    '        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n'
    "    Trainer(model, optimizer).fit(args.batches)\n\n\nif __name__ == \"__main__\":\n    main(parse_args())\n",
    "trainer.py": "import torch\n{star}\n\nclass Trainer:\n    def __init__(self, model, optimizer):\n"
    "        self.model, self.optimizer = model, optimizer\n        from apex import amp\n\n"
    "    def fit(self, batches):\n        for x in batches:\n            loss = self.model(x).sum()\n"
    "            with amp.scale_loss(loss, self.optimizer) as scaled_loss:\n                scaled_loss.backward()\n"
    "            self.optimizer.step()\n",
    "amp_setup.py": "from mixed import amp_module\n\namp = amp_module()\n",
}


@pytest.mark.parametrize("star, proven", [("", True), ("from amp_setup import *\n", False)])
def test_a_scale_loss_read_through_a_star_imported_amp_is_no_unbound_one(tmp_path, star, proven):
    """fit()'s amp is bound in __init__ only, so its amp.scale_loss raises NameError and the
    launcher's initialize scales no loss (autocast, no GradScaler), unless a star import of
    the trainer may bind amp (amp_setup.py's module level does): then fit() may scale."""
    files = dict(UNBOUND_SCALE_BESIDE_A_STAR_IMPORT)
    files["trainer.py"] = files["trainer.py"].format(star=star)
    write_tree(tmp_path, files)
    plan = plan_for(tmp_path)
    launcher = plan.files[str(tmp_path / "train.py")]
    assert launcher.nothing_scaled is proven
    assert bool(launcher.unbound_reached) is proven


CALL_THROUGH_A_NAME_TWO_FILES_ANSWER_TO = {
    "lib/__init__.py": "",
    "lib/engine.py": "from apex import amp\n\n\ndef step(model, optimizer, x):\n    optimizer.zero_grad()\n"
    "    loss = model(x).float().pow(2).mean()\n    with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
    "        scaled_loss.backward()\n    optimizer.step()\n    return loss\n",
    "tools/lib/__init__.py": "",
    "tools/lib/engine.py": "def describe(model):\n    return sum(p.numel() for p in model.parameters())\n",
    "tools/check.py": "import torch\nfrom apex import amp\n\nfrom lib.engine import step\n\n\ndef main():\n"
    "    net = torch.nn.Linear(4, 2).cuda()\n    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    '    net, opt = amp.initialize(net, opt, opt_level="O1")\n    print(step(net, opt, torch.randn(8, 4).cuda()))\n'
    '\n\nif __name__ == "__main__":\n    main()\n',
}


def test_a_call_through_a_module_name_two_files_answer_to_keeps_both_sides_on_the_shim(tmp_path):
    """lib.engine is lib/engine.py or tools/lib/engine.py for tools/check.py, as sys.path has
    it.  The walk from the launcher follows both (before, it followed neither and took the
    launcher for unscaled: autocast and no GradScaler while step() scaled), and step() cannot
    be sent a GradScaler along that call (before: a required scaler parameter no call passed),
    so both keep apex.amp and say why; a second run changes nothing."""
    write_tree(tmp_path, CALL_THROUGH_A_NAME_TWO_FILES_ANSWER_TO)
    found = report(tmp_path)["findings"]
    why = {f["path"]: f["message"] for f in found if f["code"] == "APX220"}
    assert why["tools/check.py"].startswith(
        "no amp.scale_loss in this file: it calls step from lib.engine, a module name 2 files of the repository "
        "answer to"
    ), why
    assert "(step is called from tools/check.py:11 (main) through lib.engine, a module name 2 files" in why[
        "lib/engine.py"
    ], why
    assert not any(f["code"] in ("APX213", "APX229") for f in found), found
    first = run_cli(tmp_path, "--allow-no-vcs")
    assert first.returncode in (0, 1), first.stdout + first.stderr
    second = run_cli(tmp_path, "--check", "--allow-no-vcs")
    assert "0 files would be rewritten" in second.stdout + second.stderr, second.stdout + second.stderr


def test_a_repeated_dropped_plan_note_gives_back_its_reason_without_the_brackets_around_it():
    # a second run finds the first run's notes again; the reason of the dropped plan must come
    # back as it was, or the run writes the note anew (not a fixed point).  A dropped
    # module-scaler route keeps the earlier note around it: two brackets close after it
    from migrate.engine import MigrationResult
    from migrate.findings import Finding
    from migrate.pipeline import DROPPED, _fallback_reason

    reason = "in a.py, the forward pass and loss are not next to this amp.scale_loss: wrap them (by hand)"
    for message in (
        f"amp.initialize is not in this file (x is built by name; nor can a module-level GradScaler stand in "
        f"({DROPPED}{reason})); this file keeps apex.amp semantics",
        f"amp.initialize is not in this file ({DROPPED}{reason}); this file keeps apex.amp semantics",
        f"no amp.scale_loss in this file: {DROPPED}{reason}; this file keeps apex.amp semantics",
    ):
        result = MigrationResult("b.py", b"", b"", findings=[Finding("b.py", 1, 0, "APX220", message)])
        assert _fallback_reason(result) == reason, message


def test_the_plan_reads_no_file_without_apex_that_names_nothing_it_looks_for(monkeypatch):
    """The cross-file lookups (the apex.amp names another file takes, a function's users) read
    a file the index left out only when its text names what they look for: a big tree of
    ordinary modules costs no summaries (the re-export check once read them all)."""
    import migrate.repo_plan as repo_plan

    helper = "from apex import amp\n\n\ndef build(model, optimizer):\n    return amp.initialize(model, optimizer)\n"
    user = "from .helper import *\n\n\ndef go(model, optimizer):\n    return amp.scale_loss(model, optimizer)\n"
    ordinary = "import math\n\n\ndef example(values):\n    return [math.sqrt(v) for v in values]  # sample, clamp\n"
    others = [("/r/pkg/user.py", "pkg/user.py", user.encode())]
    others += [(f"/r/pkg/m{i}.py", f"pkg/m{i}.py", ordinary.encode()) for i in range(20)]
    read = []
    real = repo_plan.summarise
    monkeypatch.setattr(repo_plan, "summarise", lambda path, *a: read.append(path) or real(path, *a))
    plan = build_plan([summarise("/r/pkg/helper.py", "pkg/helper.py", helper.encode())], ["/r"], others)
    assert read == ["/r/pkg/user.py"]
    assert plan.files["/r/pkg/helper.py"].amp_importers == (("amp", "pkg/user.py"),)


PRUNING_LAUNCHER = """\
    import torch
    from utils.prune_utils import *

    try:
        from apex import amp
        mixed_precision = True
    except ImportError:
        mixed_precision = False


    def train(model, optimizer, loader, sr_flag, s, accumulate):
        if mixed_precision:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for ni, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y)
            if mixed_precision:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            BNOptimizer.updateBN(sr_flag, model, s)
            if ni % accumulate == 0:
                optimizer.step()
                optimizer.zero_grad()


    if __name__ == "__main__":
        train(torch.nn.Linear(4, 1), None, [], True, 1e-4, 2)
    """

PRUNE_UTILS = """\
    import torch


    class BNOptimizer:
        @staticmethod
        def updateBN(sr_flag, model, s):
            if sr_flag:
                model.weight.grad.data.add_(s * torch.sign(model.weight.data))
    """


def test_a_star_imported_helper_changing_the_gradients_on_every_micro_step_keeps_the_shim(tmp_path):
    """yolov3-channel-and-layer-pruning (sweep19): ``BNOptimizer.updateBN`` of another file,
    taken with ``from utils.prune_utils import *``, adds the L1 sparsity term to the gradients
    after every backward, the step only at the accumulation boundary.  apex had unscaled them
    there; natively the term would be added to scaled gradients and divided by the loss scale
    at the step (before: no finding, the call was passed over as opaque).  No unscale_ can run
    on each micro-step, so the launcher keeps apex.amp through the shim and says why; a second
    run changes nothing."""
    write_tree(tmp_path, {"train.py": PRUNING_LAUNCHER, "utils/__init__.py": "", "utils/prune_utils.py": PRUNE_UTILS})
    found = report(tmp_path)
    manual = [f for f in found["findings"] if f["needs_manual_work"]]
    assert [f["code"] for f in manual] == ["APX220"]
    assert manual[0]["message"].startswith(
        "as written, a native rewrite would change scaled gradients on every micro-step: per-micro-step gradient "
        "use: BNOptimizer.updateBN(...), which may change the gradients, runs after every backward"
    )
    run_cli(tmp_path, "--allow-no-vcs")
    first = (tmp_path / "train.py").read_text()
    assert "from apexcompat import amp" in first and "GradScaler" not in first
    run_cli(tmp_path, "--allow-no-vcs")
    assert (tmp_path / "train.py").read_text() == first
    assert (tmp_path / "utils/prune_utils.py").read_text() == textwrap.dedent(PRUNE_UTILS)


def test_the_index_tells_gradient_reads_from_autograd_grad():
    """``grad_readers``: the definitions that read ``.grad`` off an object; GradAlign's
    ``get_input_grad`` calls ``torch.autograd.grad`` and reads no gradient of a parameter
    (understanding-fast-adv: taken as one, its launcher's reason changed)."""
    source = textwrap.dedent(
        """\
        import torch


        def input_grad(loss, delta):
            return torch.autograd.grad(loss, delta)[0]


        class BNOptimizer:
            @staticmethod
            def update(model, s):
                model.weight.grad.data.add_(s * torch.sign(model.weight.data))
        """
    ).encode()
    summary = summarise("utils.py", "utils.py", source)
    assert summary.grad_readers == {"BNOptimizer"}


#: a launcher handing apex.amp (or None) to the training function of another file (``amp_value_plan``)
VALUE_LAUNCHER = """\
from apex import amp

from engine import train_one_epoch


def main(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train_one_epoch(model, loader, optimizer, amp)
"""
VALUE_ENGINE = """\
def train_one_epoch(model, loader, optimizer, amp=None):
    for x, y in loader:
        loss = model(x).sum()
        if amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
{extra}"""


def _value_plan(tmp_path: Path, extra: str = "", files: Dict[str, str] = {}):
    """The plan of ``VALUE_LAUNCHER`` and ``VALUE_ENGINE`` (with ``extra`` lines), as the
    pipeline builds it: files without apex are not indexed, only searched."""
    write_tree(tmp_path, {"main.py": VALUE_LAUNCHER, "engine.py": VALUE_ENGINE.format(extra=extra), **files})
    paths = sorted(tmp_path.rglob("*.py"))
    texts = {p: p.read_bytes() for p in paths}
    summaries = [summarise(str(p), str(p.relative_to(tmp_path)), texts[p]) for p in paths if b"apex" in texts[p]]
    others = [(str(p), str(p.relative_to(tmp_path)), texts[p]) for p in paths if b"apex" not in texts[p]]
    sources = {str(p): texts[p] for p in paths if b"apex" in texts[p]}
    plan = build_plan([s for s in summaries if s], [str(tmp_path)], others, sources=sources)
    return plan.files.get(str(tmp_path / "main.py")), plan.files.get(str(tmp_path / "engine.py"))


def test_amp_handed_to_a_training_function_of_another_file_is_planned(tmp_path):
    launcher, engine = _value_plan(tmp_path)
    assert launcher.amp_value_calls == ("train_one_epoch",) and launcher.amp_value_refusals == ()
    assert engine.amp_value_parameters == (("train_one_epoch", "amp"),)
    assert engine.amp_value_models == (("train_one_epoch", "model"),)  # autocast goes around its calls
    assert launcher.component == engine.component is not None


@pytest.mark.parametrize(
    "extra, files, why",
    [
        ("\n\ndef evaluate(model, loader, optimizer):\n    train_one_epoch(model, loader, optimizer)\n", {},
         "is also called or used as a value in its own file"),
        ("", {"tune.py": "from engine import train_one_epoch\n\ntrain_one_epoch(None, [], None)\n"},
         "tune.py also refers to it"),
        ("", {"tune.py": "import engine\n\nSTEP = engine.train_one_epoch\n"}, "tune.py also refers to it"),
        ("    keep(amp)\n", {}, "but also uses it another way"),
    ],
)
def test_amp_handed_to_a_training_function_not_proven_says_why(tmp_path, extra, files, why):
    launcher, engine = _value_plan(tmp_path, extra, files)
    assert engine is None or engine.amp_value_parameters == ()
    assert launcher.amp_value_calls == ()
    ((text, reason),) = launcher.amp_value_refusals
    assert text == "train_one_epoch" and why in reason, reason


#: NET_LOADER with a second network built beside Net and given to the same amp.initialize
#: (``[net, head], optimizer = amp.initialize([net, head], optimizer)``), whose class, in a
#: file without apex.amp, has a load_from of its own
NET_AND_HEAD = dict(NET_LOADER, **{
    "train.py": NET_LOADER["train.py"].replace(
        "from model import Net\n", "from head import Head\n        from model import Net\n").replace(
        "net = Net()\n", "net = Net()\n            head = Head()\n").replace(
        "net, optimizer = amp.initialize(net, optimizer,", "[net, head], optimizer = amp.initialize([net, head], optimizer,"
    ).replace("net.load_from(resume, True)\n", "net.load_from(resume, True)\n                head.load_from(resume)\n"),
    "head.py": """\
        import torch


        class Head(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 1)

            def load_from(self, path):
                self.load_state_dict(torch.load(path)["head"])
        """,
})


def test_a_call_that_reaches_another_class_method_of_that_name_passes_nothing(tmp_path):
    """head.load_from() reaches Head.load_from (head = Head(), kept by the list initialize),
    not Net.load_from: only net's call passes the GradScaler.  Before, the list unpacking
    bound both names to something unknown and "net.load_from() ... is not proven to call
    Net.load_from" kept both files on the shim."""
    write_tree(tmp_path, NET_AND_HEAD)
    assert "[net, head], optimizer = amp.initialize([net, head]" in (tmp_path / "train.py").read_text()
    model = plan_for(tmp_path).files[str(tmp_path / "model.py")]
    assert model.method_entries == (("Net", "load_from"),)
    found = report(tmp_path)
    assert not [f for f in found["findings"] if f["needs_manual_work"]], found["findings"]
    run_cli(tmp_path, "--allow-no-vcs")
    train = (tmp_path / "train.py").read_text()
    assert "net.load_from(resume, True, scaler=scaler)" in train and "head.load_from(resume)\n" in train


#: Head inherits load_from from a base class of its own (no apex.amp there)
HEAD_OF_A_BASE = dict(NET_AND_HEAD, **{
    "head.py": NET_AND_HEAD["head.py"].replace("class Head(torch.nn.Module):", "class Loader(torch.nn.Module):")
    + "\n\n        class Head(Loader):\n            pass\n",
})


@pytest.mark.parametrize(
    "files, reason",
    [
        # Head's load_from is its base's (Loader, no apex.amp): the call passes nothing
        (HEAD_OF_A_BASE, None),
        # one that loads amp's state in a load_from of its own: no route gives it the GradScaler
        (dict(NET_AND_HEAD, **{"head.py": "import torch\nfrom apex import amp\n\n\nclass Head(torch.nn.Module):\n"
                                          "    def load_from(self, path):\n"
                                          "        amp.load_state_dict(torch.load(path)['amp'])\n"}),
         "head.load_from() in train.py (in main()) calls Head.load_from of head.py, which uses amp too, not "
         "Net.load_from: no route hands the GradScaler to both"),
    ],
    ids=["inherited-without-amp", "other-class-uses-amp"],
)
def test_the_method_a_call_reaches_is_looked_up_through_the_class_bases(tmp_path, files, reason):
    write_tree(tmp_path, files)
    plan = plan_for(tmp_path)
    if reason is None:
        assert plan.files[str(tmp_path / "model.py")].method_entries == (("Net", "load_from"),)
        run_cli(tmp_path, "--allow-no-vcs")
        train = (tmp_path / "train.py").read_text()
        assert "net.load_from(resume, True, scaler=scaler)" in train and "head.load_from(resume)\n" in train
    else:
        assert reason in plan.files[str(tmp_path / "train.py")].refusal
