"""The carrier route (``rules/_amp_carrier.py``): apex.amp kept on the options object
(``opts.amp = amp``) comes out native only where every read of ``opts.amp`` is proven, and
each refusal names its reason.  Small repositories through the whole-repository pipeline."""

from __future__ import annotations

from typing import Dict, List

import pytest

from migrate.repo_index import summarise
from migrate.repo_plan import build_plan
from migrate.settings import Settings
from test_rule_examples import _migrate_files

LAUNCHER = """\
import torch
{imports}

def step(opts, net, opt, x):
    loss = net(x).sum()
    with opts.amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()


def main(opts):
    net = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    from apex import amp
{setup}    for _ in range(3):
{loop}        step(opts, net, opt, torch.randn(2, 4))
"""
INIT = "    net, opt = amp.initialize(net, opt)\n"
STORE = "    opts.amp = amp\n"


def _launcher(imports: str = "", setup: str = INIT + STORE, loop: str = "") -> str:
    return LAUNCHER.format(imports=imports, setup=setup, loop=loop)


def _run(files: Dict[str, str]) -> Dict[str, object]:
    results = _migrate_files(list(files.items()), Settings(target="native"))
    return dict(zip(files, results))


def _shim_reasons(result) -> List[str]:
    return [f.message for f in result.all_findings() if f.code == "APX220"]


def test_a_proven_route_puts_the_scaler_on_the_carrier():
    new = _run({"train.py": _launcher()})["train.py"].new.decode()
    assert "opts.scaler = scaler" in new
    assert "opts.scaler.scale(loss).backward()" in new
    assert "opts.scaler.step(opt)" in new and "opts.scaler.update()" in new
    assert "apex" not in new and "opts.amp" not in new


def test_a_call_inside_the_initialize_if_gets_the_scaler_before_that_if():
    setup = "    if opts.fp16:\n        net, opt = amp.initialize(net, opt)\n        opts.amp = amp\n" \
            "        step(opts, net, opt, torch.randn(2, 4))\n"
    new = _run({"train.py": _launcher(setup=setup)})["train.py"].new.decode()
    scaler_at, carried_at, if_at = (new.index(t) for t in ("scaler = torch.amp", "opts.scaler = scaler", "if opts.fp16"))
    assert scaler_at < carried_at < if_at


def test_a_taken_attribute_name_gives_the_other_one():
    new = _run({"train.py": _launcher(setup=INIT + STORE + "    opts.scaler = None\n")})["train.py"].new.decode()
    assert "opts.grad_scaler = scaler" in new and "opts.grad_scaler.scale(loss)" in new


@pytest.mark.parametrize(
    "files, reason",
    [
        # another file calls the step function with an options object of its own
        (
            {"train.py": _launcher(), "other.py": "from train import step\n\n\ndef go(o, n, p, x):\n    step(o, n, p, x)\n"},
            "step() is also called from other.py, which stores no apex.amp as .amp on what it hands it as opts "
            "(no GradScaler would be there)",
        ),
        # another file runs the launcher and may read what it stored on the options it hands
        (
            {"train.py": _launcher(), "run.py": "from train import main\n\n\ndef go(o):\n    main(o)\n"},
            "main() is also called from run.py, which this route does not follow",
        ),
        # the options object is handed to a function of a file that reads .amp
        (
            {
                "train.py": _launcher(imports="from tools import show\n", loop="        show(opts)\n"),
                "tools.py": "def show(o):\n    print(o.amp)\n",
            },
            "opts is handed to show() of tools.py, which reads .amp",
        ),
        # the carrier name is bound to another object after the store
        (
            {"train.py": _launcher(setup=INIT + STORE + "    opts = dict(opts=opts)\n")},
            "opts is bound again in main() after apex.amp is stored on it",
        ),
        # the attribute is read other than by a call of a member the GradScaler replaces
        (
            {"train.py": _launcher(loop="        print(opts.amp)\n")},
            "opts.amp is used here other than by a call of load_state_dict/master_params/scale_loss/state_dict",
        ),
        # stored before the initialize
        (
            {"train.py": _launcher(setup=STORE + INIT)},
            "amp.initialize does not run in main() before apex.amp is stored on opts",
        ),
    ],
    ids=["called-elsewhere", "launcher-called-elsewhere", "handed-to-a-reader", "rebound", "other-use", "stored-first"],
)
def test_an_uncovered_read_keeps_the_shim_with_its_reason(files, reason):
    result = _run(files)["train.py"]
    assert b"from apexcompat import amp" in result.new
    assert any(reason in message for message in _shim_reasons(result)), _shim_reasons(result)


def test_the_plan_tells_where_the_carrier_may_be_read():
    files = {
        "/r/train.py": _launcher(imports="from tools import show\nfrom shapes import *\n"),
        "/r/tools.py": "def show(o):\n    return o.amp\n",
        "/r/shapes.py": "def area(o):\n    return o.amp.state_dict()\n",
        "/r/other.py": "from train import *\n\nstep(1, 2, 3, 4)\n",
        "/r/own.py": "from train import *\n\n\ndef main():\n    pass\n\n\nmain()\n",
        "/r/more.py": "from train import step\nimport apex\n\n\ndef go(o):\n    step(o, 1, 2, 3)\n    apex.amp\n",
    }
    summaries = [summarise(path, path[3:], text.encode()) for path, text in files.items()]
    assert summaries[0].amp_stores == {"amp"} and "amp" not in summaries[4].loaded_attributes
    plan = build_plan([s for s in summaries if s is not None], ["/r"])
    facts = plan.files["/r/train.py"].carrier
    assert facts is not None
    assert set(facts.readers) == {("show", "tools.py"), ("area", "shapes.py")}
    assert set(facts.called_elsewhere) == {("step", "more.py"), ("step", "other.py")}  # own.py's main is its own
