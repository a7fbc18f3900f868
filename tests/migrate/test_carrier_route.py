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
            "step() is also called from other.py, which stores no apex.amp as .amp on what it hands it as opts, "
            "so no GradScaler would be there",
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


# --- a carrier handed to a step function of another launcher's file --------------------------

SIBLING = """\
import torch
{imports}

def run(o):
    net = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    from apex import amp
    net, opt = amp.initialize(net, opt)
    o.amp = amp
{loop}"""


def _sibling(imports: str = "from train import step\n", loop: str = "    step(o, net, opt, torch.randn(2, 4))\n") -> str:
    return SIBLING.format(imports=imports, loop=loop)


def test_launchers_sharing_a_step_function_all_come_out_native():
    results = _run({"train.py": _launcher(), "tune.py": _sibling(), "star.py": _sibling(imports="from train import *\n")})
    for name in ("tune.py", "star.py"):
        new = results[name].new.decode()
        assert "o.scaler = scaler" in new and "o.amp" not in new and "apex" not in new, new
        assert new.index("o.scaler = scaler") < new.index("step(o,")
    shared = results["train.py"].new.decode()
    assert "opts.scaler.scale(loss).backward()" in shared and "opts.scaler.step(opt)" in shared
    assert "apex" not in shared


def test_one_attribute_name_for_every_file_sharing_the_step():
    # tune.py reads an attribute named scaler: every file of the component takes grad_scaler
    tune = _sibling(loop="    print(o.scaler)\n    step(o, net, opt, torch.randn(2, 4))\n")
    results = _run({"train.py": _launcher(), "tune.py": tune})
    assert "opts.grad_scaler.scale(loss)" in results["train.py"].new.decode()
    assert "o.grad_scaler = scaler" in results["tune.py"].new.decode()


@pytest.mark.parametrize(
    "sibling, reason",
    [
        # the sibling hands the step something else in the carrier's slot
        (_sibling(loop="    step(dict(), net, opt, torch.randn(2, 4))\n"),
         "step() of train.py is not handed o as opts"),
        # ... or calls it before apex.amp is on its carrier
        (_sibling(loop="    step(o, net, opt, torch.randn(2, 4))\n").replace(
            "    net, opt = amp.initialize", "    step(o, net, opt, None)\n    net, opt = amp.initialize"),
         "step() of train.py is called where o holds no apex.amp"),
        # ... or passes it on as a value
        (_sibling(loop="    print(step)\n    step(o, net, opt, torch.randn(2, 4))\n"),
         "step of train.py is used here other than by a call"),
    ],
    ids=["other-object", "before-the-store", "as-a-value"],
)
def test_a_sibling_that_is_not_proven_keeps_the_whole_component_on_the_shim(sibling, reason):
    results = _run({"train.py": _launcher(), "tune.py": sibling})
    for name in ("train.py", "tune.py"):
        assert b"from apexcompat import amp" in results[name].new, name
    assert any(reason in m for m in _shim_reasons(results["tune.py"])), _shim_reasons(results["tune.py"])
    assert any("dropped" in m and reason in m for m in _shim_reasons(results["train.py"])), \
        _shim_reasons(results["train.py"])


@pytest.mark.parametrize(
    "other, reason",
    [
        # called through the module's attribute
        ("import torch\nimport train\n\n\ndef run(o):\n    from apex import amp\n    o.amp = amp\n"
         "    train.step(o, None, None, None)\n",
         "step() is called as train.step in other.py, which this route does not follow"),
    ],
    ids=["module-attribute"],
)
def test_a_use_of_the_step_that_cannot_be_followed_is_named(other, reason):
    results = _run({"train.py": _launcher(), "other.py": other})
    assert b"from apexcompat import amp" in results["train.py"].new
    assert any(reason in m for m in _shim_reasons(results["train.py"])), _shim_reasons(results["train.py"])


def test_a_step_function_in_a_file_that_stores_no_apex_amp_is_not_shared():
    # steps.py names no apex (no launcher of its own, not migrated): its read of o.amp stays,
    # so the launcher that hands it its options keeps apex.amp
    steps = "def step(o, net, opt, x):\n    with o.amp.scale_loss(net(x).sum(), opt) as s:\n        s.backward()\n"
    results = _run({"tune.py": _sibling(imports="from steps import step\n"), "steps.py": steps})
    assert b"from apexcompat import amp" in results["tune.py"].new
    assert any("o is handed to step() of steps.py, which reads .amp" in m for m in _shim_reasons(results["tune.py"]))


def test_the_plan_joins_the_launchers_sharing_a_step():
    files = {"/r/train.py": _launcher(), "/r/tune.py": _sibling(), "/r/star.py": _sibling(imports="from train import *\n")}
    summaries = [summarise(path, path[3:], text.encode()) for path, text in files.items()]
    plan = build_plan([s for s in summaries if s is not None], ["/r"])
    train, tune, star = (plan.files[p] for p in files)
    assert train.component is not None and train.component == tune.component == star.component
    assert train.carrier.shared == ("step",) and train.carrier.attribute == "scaler"
    assert tune.carrier.borrowed == (("step", "train.py", 0, "opts"),) == star.carrier.borrowed
    dropped = train.dropped("why").carrier
    assert dropped.shared == () and dropped.attribute == "" and dropped.readers == train.carrier.readers
