"""Which files the registered rules parse at all: only those that mention apex (or its
fp16 helpers, or torch's deprecated amp spellings); the rules' broad triggers
(``state_dict``, ``Fused``, ``RNN``...) never admit a file on their own."""

from __future__ import annotations

import pytest

import migrate.engine as engine
from migrate.settings import Settings
from migrate.triggers import ADMISSION, admitted, enabled_triggers
from migrate.walk import prefilter

PLAIN_TORCH = b"""import torch
from torch.nn.utils.rnn import pack_padded_sequence

def save(model, optimizer, path):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)

def load(model, optimizer, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    opt = torch.optim.AdamW(model.parameters(), fused=True)  # Fused, RNN, contrib, _function
    return torch.nn.RNN(4, 4), opt
"""

APEX_CHECKPOINT = b"""import torch
from apex import amp

def save(model, optimizer, path):
    torch.save({"model": model.state_dict(), "amp": amp.state_dict()}, path)
"""


def test_plain_torch_checkpointing_is_not_admitted():
    assert not admitted(PLAIN_TORCH)
    assert not prefilter(PLAIN_TORCH, enabled_triggers(Settings().code_enabled))


def test_plain_torch_checkpointing_is_not_parsed(monkeypatch):
    def no_parse(source):
        raise AssertionError("parsed a file without apex")

    monkeypatch.setattr(engine.cst, "parse_module", no_parse)
    result = engine.migrate_source(PLAIN_TORCH, "train.py", Settings())
    assert not result.changed and result.all_findings() == []


def test_apex_checkpointing_is_still_migrated():
    assert prefilter(APEX_CHECKPOINT, enabled_triggers(Settings().code_enabled))
    result = engine.migrate_source(APEX_CHECKPOINT, "train.py", Settings())
    assert result.changed and b"from apex import" not in result.new


@pytest.mark.parametrize("token", [b"state_dict", b"_function", b"RNN", b"contrib", b"Fused", b"multi_tensor"])
def test_broad_rule_triggers_do_not_admit(token):
    assert not any(token in t or t in token for t in ADMISSION)


def test_nothing_enabled_admits_nothing():
    assert enabled_triggers(lambda code: False) == ()
