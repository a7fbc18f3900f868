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
from migrate.rules.ddp import MODULE_VALUE_TODO, NO_LOCAL_RANK_TODO, DistributedDataParallelRule
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


# --- apex.parallel handed on as a module object (realworld-A P-parallel-indirect) ----------------

ARCHAI = (
    "class ApexUtils:\n    def __init__(self, distributed):\n        self._ddp = None\n        if distributed:\n"
    "            from apex import parallel\n            self._ddp = parallel\n\n    def wrap(self, model):\n"
    "        if self._ddp:\n            model = self._ddp.convert_syncbn_model(model)\n"
    "            model = self._ddp.DistributedDataParallel(model, delay_allreduce=True)\n        return model\n"
)
MODULE_TODO = TODO + MODULE_VALUE_TODO

MODULE_VALUES: List[Example] = [
    Example(
        "parallel-module-stored-on-self",
        ARCHAI,
        ARCHAI.replace("            self._ddp = parallel\n", f"            {MODULE_TODO}\n            self._ddp = parallel\n"),
        ("APX605",),
    ),
    Example(
        "parallel-module-imported-as-alias-and-returned",
        "import apex.parallel as apar\n\n\ndef backend():\n    return apar\n",
        f"import apex.parallel as apar\n\n\ndef backend():\n    {MODULE_TODO}\n    return apar\n",
        ("APX605",),
    ),
    Example(
        "parallel-module-and-submodule-passed-as-arguments",
        "import apex\n\nregister(apex.parallel, sub=apex.parallel.distributed)\n",
        f"import apex\n\n{MODULE_TODO}\nregister(apex.parallel, sub=apex.parallel.distributed)\n",
        ("APX605", "APX605"),
    ),
    Example(
        "parallel-module-in-a-tuple-next-to-a-rewritten-call",
        "from apex import parallel\n\n\ndef wrap(model, local_rank):\n"
        "    return parallel.DistributedDataParallel(model), parallel\n",
        f"from apex import parallel\nimport torch\n\n\ndef wrap(model, local_rank):\n    {MODULE_TODO}\n"
        "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[local_rank],\n"
        "        output_device=local_rank,\n        broadcast_buffers=False,\n    ), parallel\n",
        ("APX601", "APX605"),
    ),
]

MODULE_NOT_HANDED_ON: List[Example] = [
    Example(
        "parallel-module-members-only",
        "from apex import parallel\n\n\ndef wrap(model, local_rank):\n"
        "    return parallel.DistributedDataParallel(model, delay_allreduce=True)\n",
        "import torch\n\n\ndef wrap(model, local_rank):\n"
        "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[local_rank],\n"
        "        output_device=local_rank,\n        broadcast_buffers=False,\n    )\n",
        ("APX601",),
    ),
    Example(
        "local-variable-named-parallel",
        "import apex\n\nparallel = make_backend()\nself._ddp = parallel\n",
    ),
    Example(
        "torch-nn-parallel-module",
        "import apex\nfrom torch.nn import parallel\n\nself._ddp = parallel\n",
    ),
]

MODULE_CASES = MODULE_VALUES + MODULE_NOT_HANDED_ON


@pytest.mark.parametrize("example", MODULE_CASES, ids=example_ids(MODULE_CASES))
def test_parallel_module_passed_on_is_manual_work(example: Example) -> None:
    check_example(DistributedDataParallelRule, example)


@pytest.mark.parametrize("example", MODULE_VALUES, ids=example_ids(MODULE_VALUES))
@pytest.mark.parametrize("target", ["native", "shim"])
def test_parallel_module_passed_on_both_targets(example: Example, target: str) -> None:
    """apex.parallel is removed from apex in both targets (spec 0.5/0.6): an error finding, the TODO in
    the file, and a second run reports the same site again."""
    result = migrate_source(example.before.encode(), "t.py", Settings(target=target))
    assert result.new.decode() == example.after
    manual = [f for f in result.all_findings() if f.code == "APX605"]
    assert manual and all(f.severity == "error" and not f.fixed for f in manual)
    again = migrate_source(result.new, "t.py", Settings(target=target))
    assert again.new == result.new
    assert sorted((f.code, f.message) for f in again.all_findings() if not f.fixed) == sorted(
        (f.code, f.message) for f in result.all_findings() if not f.fixed
    )
