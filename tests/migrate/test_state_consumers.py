"""apex.amp handed to a consumer the tool leaves as it is (``repo_plan._amp_holders``): a
resume helper's ``**kwargs`` loop, a method of the class the receiver is built from.  What the
index reads of such consumers, and which calls the plan proves, through ``build_plan``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.repo_index import VAR_KEYWORD, summarise
from test_repo_plan import plan_for, write_tree

LAUNCHER = """\
import torch
from apex import amp

from state import RunState, make_state


def main(model, optimizer, resume):
    {binding}
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    state.keep(amp)
    with amp.scale_loss(model(resume).sum(), optimizer) as scaled:
        scaled.backward()
    optimizer.step()
"""
STATE = """\
class RunState:
    def __init__(self, saved=None):
        self.saved = saved

    @classmethod
    def load(cls, path):
        return cls(saved=path)

    @classmethod
    def other(cls, path):
        return path

    def keep(self, amp):
        {use}


def make_state():
    return RunState()
"""


def _summary(source: str):
    return summarise("m.py", "m.py", textwrap.dedent(source).encode())


def test_the_values_of_a_kwargs_loop_are_read_as_the_parameter_they_receive():
    summary = _summary(
        """\
        def restart(path, **objects):
            for key, value in objects.items():
                if value is not None:
                    try:
                        value.load_state_dict(path[key], strict=False)
                    except TypeError:
                        value.load_state_dict(path[key])


        def passes_on(**objects):
            other(objects)


        def used_after(**objects):
            for value in objects.values():
                value.state_dict()
            value.cuda()
        """
    )
    assert summary.parameter_uses["restart"][VAR_KEYWORD] == {"none_check", "load_state_dict", "type_error"}
    assert summary.parameter_uses["passes_on"][VAR_KEYWORD] == {"other"}
    assert summary.parameter_uses["used_after"][VAR_KEYWORD] == {"state_dict", "other"}


def test_class_factories_are_the_class_methods_that_only_return_cls_calls():
    summary = _summary(STATE.format(use="self.saved = amp.state_dict()"))
    assert summary.class_factories["RunState"] == {"load"}
    assert summary.method_parameters[("RunState", "keep")] == (("amp",), ())
    assert summary.method_parameter_uses[("RunState", "keep")]["amp"] == {"state_dict"}


@pytest.mark.parametrize(
    "binding, use, given",
    [
        ("state = RunState.load(resume)\n    state = RunState()", "self.saved = amp.state_dict()", "scaler"),
        ("state = RunState.load(resume) if resume else None", "self.saved = amp.state_dict()", "refused"),
        ("state = RunState.load(resume)", "amp.load_state_dict(self.saved)", "holder"),
        ("state = RunState.load(resume)", "self.amp = amp", "refused"),  # kept: read who knows where
        ("state = RunState.other(resume)", "self.saved = amp.state_dict()", "refused"),  # not a factory
        ("state = make_state()", "self.saved = amp.state_dict()", "refused"),  # returns what it likes
        ("state = RunState()\n    for state in [state]:\n        pass", "self.saved = amp.state_dict()", "refused"),
        ("state = RunState()", "self.saved = amp.state_dict()\n        amp.cuda()", "refused"),
    ],
)
def test_a_method_of_the_receivers_class_is_proven_from_every_binding(tmp_path: Path, binding, use, given):
    write_tree(tmp_path, {"train.py": LAUNCHER.format(binding=binding), "state.py": STATE.format(use=use)})
    train = plan_for(tmp_path).files.get(str(tmp_path / "train.py"))
    arguments = train.amp_arguments if train else ()
    holders = train.amp_holders if train else ()
    assert (arguments, holders) == {
        "scaler": (("state.keep",), ()),
        "holder": (("state.keep",), ("state.keep",)),
        "refused": ((), ()),
    }[given]


def test_a_receiver_that_is_a_parameter_is_not_proven(tmp_path: Path):
    launcher = LAUNCHER.format(binding="pass").replace("def main(model, optimizer, resume)",
                                                       "def main(model, optimizer, resume, state=None)")
    launcher = launcher.replace("    pass\n", "    if state is None:\n        state = RunState()\n")
    write_tree(tmp_path, {"train.py": launcher, "state.py": STATE.format(use="self.saved = amp.state_dict()")})
    assert str(tmp_path / "train.py") not in plan_for(tmp_path).files


def test_one_call_text_with_an_unproven_twin_is_left_alone(tmp_path: Path):
    launcher = LAUNCHER.format(binding="state = RunState()") + (
        "\n\ndef other(resume):\n    state = make_state()\n    state.keep(amp)\n"
    )
    write_tree(tmp_path, {"train.py": launcher, "state.py": STATE.format(use="self.saved = amp.state_dict()")})
    assert str(tmp_path / "train.py") not in plan_for(tmp_path).files


def test_a_class_of_the_launchers_own_file_is_not_a_consumer_left_as_it_is(tmp_path: Path):
    launcher = LAUNCHER.format(binding="state = RunState()").replace("from state import RunState, make_state\n", "")
    write_tree(tmp_path, {"train.py": launcher + "\n\n" + STATE.format(use="self.saved = amp.state_dict()")})
    assert str(tmp_path / "train.py") not in plan_for(tmp_path).files
