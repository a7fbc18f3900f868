"""Real-world shapes the apex DDP / SyncBN rules got wrong (reports realworld-A/-B).

The local rank written into ``device_ids=[...]`` must be bound whenever the rewritten call
runs: a name assigned only in a sibling branch or after the call made the output raise
``UnboundLocalError`` (realworld-B P2).  ``apex.parallel`` handed on as a module object
(``self._ddp = parallel``) was left in place without a finding (realworld-A
P-parallel-indirect)."""

from __future__ import annotations

from typing import List

import pytest

from migrate.engine import migrate_source
from migrate.rules.base import Example
from migrate.rules.ddp import NO_LOCAL_RANK_TODO, DistributedDataParallelRule
from migrate.settings import Settings

from neighbour_harness import check_example, example_ids

TODO = "# TODO(apexcompat): "
HEAD = "import torch\nfrom apex.parallel import DistributedDataParallel as DDP\n\n\n"
NATIVE_HEAD = "import torch\n\n\n"


def wrapped(indent: str, rank: str) -> str:
    """The rewritten ``model = DDP(model)`` with ``rank`` as the local rank."""
    inner = indent + "    "
    return (
        f"{indent}model = torch.nn.parallel.DistributedDataParallel(\n{inner}model,\n"
        f"{inner}device_ids=[{rank}],\n{inner}output_device={rank},\n{inner}broadcast_buffers=False,\n{indent})\n"
    )


def unplaced(indent: str) -> str:
    """The rewritten ``model = DDP(model)`` with the APX602 TODO above it."""
    return (
        f"{indent}{TODO}{NO_LOCAL_RANK_TODO}\n"
        f"{indent}model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)\n"
    )


UNBOUND: List[Example] = [
    Example(
        "local-rank-only-in-sibling-else-branch",
        HEAD + "def wrap(model, use_apex):\n    if use_apex:\n        model = DDP(model)\n    else:\n"
        "        local_rank = dist.get_rank()\n        model = torch.nn.parallel.DistributedDataParallel(model)\n"
        "    return model\n",
        NATIVE_HEAD + "def wrap(model, use_apex):\n    if use_apex:\n" + unplaced("        ") + "    else:\n"
        "        local_rank = dist.get_rank()\n        model = torch.nn.parallel.DistributedDataParallel(model)\n"
        "    return model\n",
        ("APX601", "APX602"),
    ),
    Example(
        "local-rank-assigned-after-the-call",
        HEAD + "def wrap(model):\n    model = DDP(model)\n    local_rank = dist.get_rank()\n    return model\n",
        NATIVE_HEAD + "def wrap(model):\n" + unplaced("    ") + "    local_rank = dist.get_rank()\n    return model\n",
        ("APX601", "APX602"),
    ),
    Example(
        "local-rank-only-in-an-earlier-if-without-else",
        HEAD + "def wrap(model, args):\n    if args.distributed:\n        local_rank = args.rank\n"
        "    model = DDP(model)\n",
        NATIVE_HEAD + "def wrap(model, args):\n    if args.distributed:\n        local_rank = args.rank\n"
        + unplaced("    "),
        ("APX601", "APX602"),
    ),
    Example(
        "local-rank-only-inside-an-earlier-loop",
        HEAD + "def wrap(model, ranks):\n    for r in ranks:\n        local_rank = r\n    model = DDP(model)\n",
        NATIVE_HEAD + "def wrap(model, ranks):\n    for r in ranks:\n        local_rank = r\n" + unplaced("    "),
        ("APX601", "APX602"),
    ),
    Example(
        "local-rank-assigned-later-in-the-same-loop-body",
        HEAD + "def wrap(models):\n    for model in models:\n        model = DDP(model)\n"
        "        local_rank = 0\n",
        NATIVE_HEAD + "def wrap(models):\n    for model in models:\n" + unplaced("        ")
        + "        local_rank = 0\n",
        ("APX601", "APX602"),
    ),
    Example(
        "module-level-call-before-the-assignment",
        HEAD + "model = DDP(model)\nlocal_rank = 0\n",
        NATIVE_HEAD + unplaced("") + "local_rank = 0\n",
        ("APX601", "APX602"),
    ),
    Example(
        "set-device-argument-bound-only-in-other-branch",
        HEAD + "def wrap(model, cfg):\n    if cfg.cpu:\n        model = DDP(model)\n    else:\n"
        "        gpu = cfg.gpu\n        torch.cuda.set_device(gpu)\n    return model\n",
        NATIVE_HEAD + "def wrap(model, cfg):\n    if cfg.cpu:\n" + unplaced("        ") + "    else:\n"
        "        gpu = cfg.gpu\n        torch.cuda.set_device(gpu)\n    return model\n",
        ("APX601", "APX602"),
    ),
    Example(
        "parsed-args-assigned-after-the-call",
        "import argparse\nfrom apex.parallel import DistributedDataParallel as DDP\n\n"
        'parser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int)\n\n\n'
        "def main(model):\n    model = DDP(model)\n    args = parser.parse_args()\n",
        "import argparse\nimport torch\n\n"
        'parser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int)\n\n\n'
        "def main(model):\n" + unplaced("    ") + "    args = parser.parse_args()\n",
        ("APX601", "APX602"),
    ),
]

BOUND: List[Example] = [
    Example(
        "local-rank-bound-in-both-branches-before",
        HEAD + "def wrap(model, args):\n    if args.env:\n        local_rank = int(os.environ['LOCAL_RANK'])\n"
        "    else:\n        local_rank = args.rank\n    model = DDP(model)\n",
        NATIVE_HEAD + "def wrap(model, args):\n    if args.env:\n        local_rank = int(os.environ['LOCAL_RANK'])\n"
        "    else:\n        local_rank = args.rank\n" + wrapped("    ", "local_rank"),
        ("APX601",),
    ),
    Example(
        "local-rank-bound-in-try-and-every-handler",
        HEAD + "def wrap(model):\n    try:\n        local_rank = int(os.environ['LOCAL_RANK'])\n"
        "    except KeyError:\n        local_rank = 0\n    model = DDP(model)\n",
        NATIVE_HEAD + "def wrap(model):\n    try:\n        local_rank = int(os.environ['LOCAL_RANK'])\n"
        "    except KeyError:\n        local_rank = 0\n" + wrapped("    ", "local_rank"),
        ("APX601",),
    ),
    Example(
        "local-rank-assigned-in-the-enclosing-block",
        HEAD + "def wrap(model, distributed):\n    local_rank = dist.get_rank()\n    if distributed:\n"
        "        model = DDP(model)\n    return model\n",
        NATIVE_HEAD + "def wrap(model, distributed):\n    local_rank = dist.get_rank()\n    if distributed:\n"
        + wrapped("        ", "local_rank") + "    return model\n",
        ("APX601",),
    ),
    Example(
        "global-local-rank-read-from-a-function",
        HEAD + "def wrap(model):\n    model = DDP(model)\n    return model\n\n\n"
        "local_rank = int(os.environ['LOCAL_RANK'])\n",
        NATIVE_HEAD + "def wrap(model):\n" + wrapped("    ", "local_rank") + "    return model\n\n\n"
        "local_rank = int(os.environ['LOCAL_RANK'])\n",
        ("APX601",),
    ),
    Example(
        "parameter-of-the-enclosing-function-in-a-closure",
        HEAD + "def build(local_rank):\n    def wrap(model):\n        model = DDP(model)\n        return model\n"
        "    return wrap\n",
        NATIVE_HEAD + "def build(local_rank):\n    def wrap(model):\n" + wrapped("        ", "local_rank")
        + "        return model\n    return wrap\n",
        ("APX601",),
    ),
    Example(
        "set-device-attribute-of-a-parameter-later-in-the-function",
        HEAD + "def wrap(model, args):\n    model = DDP(model)\n    torch.cuda.set_device(args.gpu)\n",
        NATIVE_HEAD + "def wrap(model, args):\n" + wrapped("    ", "args.gpu")
        + "    torch.cuda.set_device(args.gpu)\n",
        ("APX601",),
    ),
]

CASES = UNBOUND + BOUND


@pytest.mark.parametrize("example", CASES, ids=example_ids(CASES))
def test_local_rank_must_be_bound_at_the_call(example: Example) -> None:
    check_example(DistributedDataParallelRule, example)


@pytest.mark.parametrize("example", CASES, ids=example_ids(CASES))
@pytest.mark.parametrize("target", ["native", "shim"])
def test_whole_pipeline_output_runs_name_bound(example: Example, target: str) -> None:
    """Through every rule, both targets: the same rewrite, and it compiles."""
    result = migrate_source(example.before.encode(), "t.py", Settings(target=target))
    assert result.new.decode() == example.after
    compile(result.new, "t.py", "exec")
