"""The launcher's no-op autocast variable (``amp_autocast = suppress``), bound to
torch.autocast on the apex branch only when every loss handed to the loss-scaler wrapper is
provably computed under it (``migrate/rules/_amp_context_var.py``).  Driven through the
installed-timm shape (``ApexScaler`` from ``timm.utils``), whose outcome is all or nothing:
native with the binding, or the shim with the reason."""

from __future__ import annotations

import textwrap

import pytest

from migrate.engine import migrate_source
from migrate.settings import Settings

HEAD = """\
from contextlib import nullcontext, suppress

import torch
from timm.utils import ApexScaler, NativeScaler
from apex import amp

"""

MAIN = """
def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress
    loss_scaler = None
    if args.amp == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp == "native":
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
    train(model, loader, optimizer, amp_autocast=amp_autocast, loss_scaler=loss_scaler)
"""

PROVEN = {
    "loss under the context": """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                with amp_autocast():
                    loss = (model(x) - y).pow(2).mean()
                loss_scaler(loss, optimizer)
    """,
    "loss derived from an output computed under it": """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                with amp_autocast():
                    out = model(x, y)
                loss = out["loss"]
                loss = loss / 2
                loss_scaler(loss, optimizer)
    """,
    "closures: _forward returns it, _backward calls the wrapper": """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                def _forward():
                    with amp_autocast():
                        _loss = (model(x) - y).pow(2).mean()
                    _loss /= 2
                    return _loss, x

                def _backward(_loss):
                    loss_scaler(_loss, optimizer, need_update=True)

                loss, _ = _forward()
                scaled = 2.0 * loss
                _backward(scaled)
    """,
    "the variable passed under another name, positionally": """
        def train(model, loader, optimizer, autocast_ctx=suppress, scaler_fn=None):
            for x, y in loader:
                with autocast_ctx():
                    loss = (model(x) - y).pow(2).mean()
                scaler_fn(loss, optimizer)
    """,
}

NOT_PROVEN = {
    "the loss computed outside the context": (
        """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                loss = (model(x) - y).pow(2).mean()
                with amp_autocast():
                    pass
                loss_scaler(loss, optimizer)
        """,
        "the losses handed to ApexScaler() are not all computed under `with amp_autocast():`",
    ),
    "one of two bindings of the loss outside it": (
        """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                with amp_autocast():
                    loss = (model(x) - y).pow(2).mean()
                if x.numel() > 4:
                    loss = (model(x) - y).abs().mean()
                loss_scaler(loss, optimizer)
        """,
        "are not all computed under",
    ),
    "the wrapper passed on without the context": (
        """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                with amp_autocast():
                    loss = (model(x) - y).pow(2).mean()
                loss_scaler(loss, optimizer)


        def run(model, loader, optimizer, loss_scaler):
            train(model, loader, optimizer, loss_scaler=loss_scaler)
        """,
        "",
    ),
    "the loss under the context, the forward pass before it": (
        """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                output = model(x)
                with amp_autocast():
                    loss = (output - y).pow(2).mean()
                loss_scaler(loss, optimizer)
        """,
        "the forward pass `output = model(x)` runs outside `with amp_autocast():`",
    ),
    "a closure parameter fed from outside the context": (
        """
        def train(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
            for x, y in loader:
                def _backward(_loss):
                    loss_scaler(_loss, optimizer)

                with amp_autocast():
                    loss = (model(x) - y).pow(2).mean()
                _backward(loss)
                _backward((model(x) - y).abs().mean())
        """,
        "are not all computed under",
    ),
}


def _migrate(train: str, main: str = MAIN):
    source = HEAD + textwrap.dedent(train) + "\n" + main
    return migrate_source(source.encode(), "train.py", Settings())


@pytest.mark.parametrize("train", PROVEN.values(), ids=list(PROVEN))
def test_proven_losses_bind_the_variable_on_the_apex_branch(train):
    main = MAIN
    if "autocast_ctx" in train:
        main = MAIN.replace("amp_autocast=amp_autocast, loss_scaler=loss_scaler", "amp_autocast, loss_scaler")
    result = _migrate(train, main)
    new = result.new.decode()
    assert "import amp" not in new and "amp.initialize" not in new
    apex_branch = new.split('if args.amp == "apex":')[1].split("elif")[0]
    assert 'amp_autocast = functools.partial(torch.autocast, device_type="cuda", dtype=torch.float16)' in apex_branch
    assert "loss_scaler = NativeScaler()" in apex_branch
    assert "from timm.utils import NativeScaler\n" in new
    assert {f.code for f in result.findings if not f.fixed} == {"APX904"}  # torch.cuda.amp.autocast kept
    compile(result.new, "train.py", "exec")


@pytest.mark.parametrize("train,why", NOT_PROVEN.values(), ids=list(NOT_PROVEN))
def test_unproven_losses_keep_the_shim_and_say_why(train, why):
    if not why:  # run() hands the wrapper to train() without the context
        main = MAIN.replace("train(model, loader, optimizer, amp_autocast", "run(model, loader, optimizer, loss_scaler)\n"
                            "    train(model, loader, optimizer, amp_autocast")
        result = _migrate(train, main)
    else:
        result = _migrate(train)
    new = result.new.decode()
    assert "from apexcompat import amp" in new and "functools.partial" not in new and "ApexScaler()" in new
    (finding,) = [f for f in result.findings if f.code == "APX220"]
    assert finding.message.startswith("no amp.scale_loss in this file: ApexScaler scales the losses, but ")
    assert why in finding.message


def test_a_variable_the_apex_branch_rebinds_is_not_bound_again():
    main = MAIN.replace("        loss_scaler = ApexScaler()\n", "        loss_scaler = ApexScaler()\n        amp_autocast = nullcontext\n")
    result = _migrate(PROVEN["loss under the context"], main)
    assert "from apexcompat import amp" in result.new.decode()
    (finding,) = [f for f in result.findings if f.code == "APX220"]
    assert "no variable bound to a no-op context" in finding.message
