"""The output contract (spec §12 "Where output goes"): every line apex printed goes through
the ``apexcompat`` logger, appears on stdout verbatim by default, is silenced by
``verbosity=0`` where apex silenced it, and can be re-routed with ordinary logging config.
Nothing in ``apexcompat/`` writes to stdout any other way."""

from __future__ import annotations

import ast
import contextlib
import io
import logging
from pathlib import Path

import pytest
import torch

import apexcompat
from apexcompat import amp
from apexcompat._logging import apexcompat_stdout_handler
from _golden_replay import LoopNet

PACKAGE_DIR = Path(apexcompat.__file__).resolve().parent
OVERFLOW = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0"


@contextlib.contextmanager
def rerouted_to_root():
    """What a user does to take over amp's output: drop the stdout handler, propagate."""
    logger = logging.getLogger("apexcompat")
    handler = apexcompat_stdout_handler()
    logger.removeHandler(handler)
    logger.propagate = True
    try:
        yield logger
    finally:
        logger.propagate = False
        logger.addHandler(handler)


def _overflowing_step(opt_level="O1", verbosity=1):
    torch.manual_seed(0)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = amp.initialize(model, opt, opt_level=opt_level, verbosity=verbosity)
    loss = model(torch.randn(4, 4)).float().sum()
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
        model.fc1.weight.grad.view(-1)[0] = float("inf")
    opt.step()


def test_default_output_is_verbatim_on_current_stdout():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _overflowing_step()
    lines = buf.getvalue().split("\n")
    assert lines[0] == (
        "Selected optimization level O1:  Insert automatic casts around Pytorch functions and "
        "Tensor methods."
    )
    assert lines[1] == ""  # the brief's trailing newline, kept
    assert lines[-2:] == [OVERFLOW, ""]
    assert len(lines) == 21


def test_rerouted_output_reaches_root_handlers_and_leaves_stdout(caplog):
    buf = io.StringIO()
    with rerouted_to_root(), caplog.at_level(logging.INFO), contextlib.redirect_stdout(buf):
        _overflowing_step()
    assert buf.getvalue() == ""
    # De-duplicated by identity: pytest >= 9.2 also hooks its capture handler onto the
    # non-propagating "apexcompat" logger, so one record can reach caplog twice.
    unique = {id(r): r for r in caplog.records if r.name.startswith("apexcompat")}
    records = sorted(unique.values(), key=lambda r: r.relativeCreated)
    assert len(records) == 19  # one record per apex print(); the first holds its own "\n"
    assert records[-1].getMessage() == OVERFLOW
    assert records[0].getMessage().startswith("Selected optimization level O1:")
    assert records[0].getMessage().endswith("methods.\n")


def test_user_formatter_and_level_filter_apply():
    """Ordinary logging config works: a formatter of the user's, and a level that keeps
    only warnings (the hard-override / load_state_dict lines apex printed unconditionally)."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("[%(name)s %(levelname)s] %(message)s"))
    handler.setLevel(logging.WARNING)
    logger = logging.getLogger("apexcompat")
    logger.addHandler(handler)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            _overflowing_step()
            amp.load_state_dict({})
    finally:
        logger.removeHandler(handler)
    assert out.getvalue() == (
        "[apexcompat WARNING] Warning: state_dict contains 0 entries, while 1 loss_scalers are used\n"
    )


def test_verbosity_zero_emits_no_record(caplog):
    with rerouted_to_root(), caplog.at_level(logging.DEBUG):
        _overflowing_step(verbosity=0)
    assert [r for r in caplog.records if r.name.startswith("apexcompat")] == []


def _print_calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "print":
                yield node.lineno, "print()"
            if (isinstance(func, ast.Attribute) and func.attr in ("write", "writelines")
                    and isinstance(func.value, ast.Attribute) and func.value.attr in ("stdout", "stderr")):
                yield node.lineno, f"sys.{func.value.attr}.{func.attr}()"


@pytest.mark.parametrize("path", sorted(PACKAGE_DIR.rglob("*.py")), ids=lambda p: p.name)
def test_no_bare_print_in_the_package(path):
    assert list(_print_calls(path)) == [], f"{path.relative_to(PACKAGE_DIR)} writes to stdout directly"
