"""Shapes from a second sweep of unseen apex repositories: a run-once guard around
``amp.initialize`` (a test that reads what its own branch sets, nnU-Net's trainer) gets its
GradScaler in that branch, with a disabled one where ``__init__`` first sets the flag, never one
switched by the flipped test (else it is refused); ``from apex import amp`` followed
by ``global amp`` in a method (mt-dnn) binds the module's name, read by the other methods."""

from __future__ import annotations

import ast

import pytest

from migrate.engine import migrate_source
from migrate.rules._amp_examples import EXAMPLES
from migrate.settings import Settings


def migrate(text: str):
    result = migrate_source(text.encode(), "t.py", Settings())
    assert result.parse_error is None and result.internal_error is None, result.internal_error
    return result


def codes(result):
    return sorted({f.code for f in result.all_findings()})


def refusals(result) -> str:
    return " | ".join(f.message for f in result.all_findings() if f.code == "APX220")


RUN_ONCE = """\
import torch
from apex import amp


class Trainer:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        {init_flag}

    def setup(self):
        {guard}
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")
            {set_flag}

    def fit(self, x, y):
        self.setup()
        loss = self.net(x).sum()
        self.opt.zero_grad()
        with amp.scale_loss(loss, self.opt) as scaled:
            scaled.backward()
        self.opt.step()
"""


@pytest.mark.parametrize(
    "init_flag, guard, set_flag, read",
    [
        ("self.ready = False", "if not self.ready:", "self.ready = True", "self.ready"),
        ("self.ready = False", "if torch.cuda.is_available() and not self.ready:", "self.ready = True", "self.ready"),
        ("self.calls = 0", "if self.calls == 0:", "self.calls += 1", "self.calls"),
        (
            "self.state = {}",
            "if not getattr(self, 'done', False) and self.state is not None:",
            "self.state = None",
            "self.state",
        ),
    ],
)
def test_a_run_once_guard_gets_its_scaler_in_the_branch_and_a_disabled_one_where_init_sets_the_flag(
    init_flag, guard, set_flag, read
):
    result = migrate(RUN_ONCE.format(init_flag=init_flag, guard=guard, set_flag=set_flag))
    text = result.new.decode()
    assert "apex" not in text and "APX220" not in codes(result) and "APX238" in codes(result)
    # the disabled one right before __init__ first sets the flag; the enabled one in the branch
    assert f"        self.scaler = torch.amp.GradScaler(enabled=False)\n        {init_flag}\n" in text
    assert f'            self.scaler = torch.amp.GradScaler("cuda")\n            {set_flag}\n' in text
    # the forward's switch reads the scaler, never the flipped flag
    assert "enabled=self.scaler.is_enabled()" in text
    ast.parse(text)


@pytest.mark.parametrize(
    "init_flag, why",
    [
        # nothing in __init__ sets the flag: an instance may reach a use with no scaler
        ("pass", "Trainer.__init__ does not set self.ready in its own body"),
        # __init__ calls a method before it sets the flag (it could use the scaler)
        ("self.setup()\n        self.ready = False", "Trainer.__init__ calls self.setup() before it sets self.ready"),
    ],
)
def test_a_run_once_guard_without_a_proven_first_scaler_keeps_the_file_on_the_shim(init_flag, why):
    result = migrate(RUN_ONCE.format(init_flag=init_flag, guard="if not getattr(self, 'ready', False):",
                                     set_flag="self.ready = True"))
    text = result.new.decode()
    assert "from apexcompat import amp" in text and "GradScaler(" not in text
    assert "reads self.ready, which its own branch assigns (a run-once guard)" in refusals(result)
    assert why in refusals(result)


NESTED = """\
import torch
from apex import amp


def setup(state, net, opt):
    if not state["amp_done"]:
        state["amp_done"] = True
        if net is not None:
            net, opt = amp.initialize(net, opt, opt_level="O1")
    return net, opt


def fit(net, opt, x):
    loss = net(x).sum()
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()
"""


def test_an_item_set_in_the_outer_branch_of_a_nested_initialize_is_seen():
    result = migrate(NESTED)
    assert 'reads state["amp_done"], which its own branch assigns' in refusals(result)


@pytest.mark.parametrize(
    "guard, set_flag",
    [
        # the initialize's own targets: the same model and optimizer come back
        ("if self.opt is not None:", "pass"),
        # a flag the branch sets that no test reads
        ("if torch.cuda.is_available():", "self.ready = True"),
        # a local named like an attribute the test reads
        ("if self.ready is not None:", "ready = True"),
    ],
)
def test_a_branch_that_sets_nothing_its_tests_read_is_migrated(guard, set_flag):
    result = migrate(RUN_ONCE.format(init_flag="self.ready = False", guard=guard, set_flag=set_flag))
    text = result.new.decode()
    assert "apex" not in text and "self.scaler = torch.amp.GradScaler" in text
    assert "APX220" not in codes(result)


#: the documented example: ``from apex import amp`` then ``global amp`` in ``__init__``
GLOBAL_AMP = next(e.before for e in EXAMPLES if e.id == "amp-imported-into-a-global")
INIT_LINE = '            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")\n'


def test_an_initialize_for_inference_under_a_flag_its_branch_sets_is_not_refused():
    source = """\
from apex import amp


def load(model, cfg):
    if not cfg.loaded:
        [model] = amp.initialize([model], opt_level="O1")
        cfg.loaded = True
    return model
"""
    assert "APX220" not in codes(migrate(source))


def _names(text: str):
    return {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}


def test_amp_imported_into_a_global_is_migrated_and_the_declaration_goes_with_the_import():
    result = migrate(GLOBAL_AMP)
    text = result.new.decode()
    assert "apex" not in text and "global" not in text and "amp" not in _names(text)
    assert "self.scaler.scale(loss).backward()" in text and "self.scaler.step(self.opt)" in text
    assert migrate(text).new.decode() == text  # a second run changes nothing


def test_a_global_declaration_naming_more_keeps_the_other_names():
    source = "counter = 0\n" + GLOBAL_AMP.replace("global amp\n", "global amp, counter\n")
    source = source.replace(INIT_LINE, INIT_LINE + "            counter = 1\n")
    text = migrate(source).new.decode()
    assert "global counter\n" in text and "amp" not in _names(text)


def test_amp_imported_into_a_global_on_the_shim_keeps_its_declaration():
    source = GLOBAL_AMP.replace("if half:", "if half and not getattr(self, 'ready', 0):")
    source = source.replace(INIT_LINE, INIT_LINE + "            self.ready = 1\n")
    result = migrate(source)
    text = result.new.decode()
    assert "from apexcompat import amp\n                global amp\n" in text
    assert "with amp.scale_loss(loss, self.opt) as scaled:" in text and "APX220" in codes(result)
