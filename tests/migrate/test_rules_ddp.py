"""APX60x-62x fixtures: apex DDP, SyncBatchNorm, LARC (the rules' own examples plus edge cases)."""

from __future__ import annotations

import pytest

from migrate.rules.base import Example
from migrate.rules.ddp import NO_LOCAL_RANK_TODO, DistributedDataParallelRule
from migrate.rules.larc import LARC_TODO, LarcRule
from migrate.rules.syncbn import CHANNEL_LAST_TODO, SyncBatchNormRule

from neighbour_harness import check_example, example_ids

TODO = "# TODO(apexcompat): "

DDP_EXTRA = [
    Example(
        "argparse-local-rank-flag",
        "import argparse\nfrom apex.parallel import DistributedDataParallel as DDP\n\n"
        'parser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=0)\n\n\n'
        "def main():\n    args = parser.parse_args()\n    model = DDP(build(args))\n",
        "import argparse\nimport torch\n\n"
        'parser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=0)\n\n\n'
        "def main():\n    args = parser.parse_args()\n    model = torch.nn.parallel.DistributedDataParallel(\n"
        "        build(args),\n        device_ids=[args.local_rank],\n        output_device=args.local_rank,\n"
        "        broadcast_buffers=False,\n    )\n",
        ("APX601",),
    ),
    Example(
        "trainer-method-uses-self-local-rank",
        "from apex.parallel import DistributedDataParallel\n\n\nclass Trainer:\n    def __init__(self, cfg):\n"
        "        self.local_rank = cfg.local_rank\n\n    def wrap(self):\n"
        "        self.model = DistributedDataParallel(self.model, message_size=250000000)\n",
        "import torch\n\n\nclass Trainer:\n    def __init__(self, cfg):\n        self.local_rank = cfg.local_rank\n\n"
        "    def wrap(self):\n        self.model = torch.nn.parallel.DistributedDataParallel(\n"
        "            self.model,\n"
        "            device_ids=[self.local_rank],\n            output_device=self.local_rank,\n"
        "            broadcast_buffers=False,\n        )\n",
        ("APX601",),
    ),
    Example(
        "set-device-argument-is-the-local-gpu",
        "import torch\nimport apex\n\n\ndef worker(gpu, args):\n    torch.cuda.set_device(gpu)\n"
        "    net = apex.parallel.DistributedDataParallel(net)\n",
        "import torch\n\n\ndef worker(gpu, args):\n    torch.cuda.set_device(gpu)\n"
        "    net = torch.nn.parallel.DistributedDataParallel(\n        net,\n        device_ids=[gpu],\n"
        "        output_device=gpu,\n"
        "        broadcast_buffers=False,\n    )\n",
        ("APX601",),
    ),
    Example(
        "star-import",
        "from apex.parallel import *\n\n\ndef wrap(model, local_rank):\n    return DistributedDataParallel(model)\n",
        "import torch\n\n\ndef wrap(model, local_rank):\n"
        "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[local_rank],\n"
        "        output_device=local_rank,\n        broadcast_buffers=False,\n    )\n",
        ("APX601",),
    ),
    Example(
        "gloo-cpu-run-gets-no-device-ids",
        "import torch.distributed as dist\nfrom apex.parallel import DistributedDataParallel as DDP\n\n\n"
        'def main(local_rank):\n    dist.init_process_group("gloo")\n    model = DDP(Net())\n',
        "import torch.distributed as dist\nimport torch\n\n\n"
        'def main(local_rank):\n    dist.init_process_group("gloo")\n'
        "    model = torch.nn.parallel.DistributedDataParallel(Net(), broadcast_buffers=False)\n",
        ("APX601",),
    ),
    Example(
        "module-keyword-and-multiline-call",
        "from apex.parallel import DistributedDataParallel as DDP\n\n\ndef wrap(model, local_rank):\n"
        "    return DDP(\n        module=model,\n        delay_allreduce=True,  # overlap breaks with our hooks\n"
        "    )\n",
        "import torch\n\n\ndef wrap(model, local_rank):\n"
        "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[local_rank],\n"
        "        output_device=local_rank,\n        broadcast_buffers=False,  # overlap breaks with our hooks\n    )\n",
        ("APX601",),
    ),
    Example(
        "one-line-if-body",
        "from apex.parallel import DistributedDataParallel\n\n\ndef wrap(model, distributed):\n"
        "    if distributed: model = DistributedDataParallel(model)\n    return model\n",
        "import torch\n\n\ndef wrap(model, distributed):\n"
        "    " + TODO + NO_LOCAL_RANK_TODO + "\n"
        "    if distributed: model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)\n"
        "    return model\n",
        ("APX601", "APX602"),
    ),
    Example(
        "apex-ddp-tuple-with-other-class",
        "from apex.parallel import DistributedDataParallel as ApexDDP\n\nWRAPPERS = (ApexDDP, DataParallel)\n",
        "import torch\n\nWRAPPERS = (torch.nn.parallel.DistributedDataParallel, DataParallel)\n",
        ("APX601",),
    ),
]

DDP_EXTRA += [
    Example(
        "import-inside-try-is-left-to-the-import-rule",
        "try:\n    from apex.parallel import DistributedDataParallel as DDP\nexcept ImportError:\n"
        "    raise ImportError(\"Please install apex\")\n\n\ndef wrap(model, local_rank):\n    return DDP(model)\n",
        "import torch\n\ntry:\n    from apex.parallel import DistributedDataParallel as DDP\nexcept ImportError:\n"
        "    raise ImportError(\"Please install apex\")\n\n\ndef wrap(model, local_rank):\n"
        "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[local_rank],\n"
        "        output_device=local_rank,\n        broadcast_buffers=False,\n    )\n",
        ("APX601",),
    ),
]

DDP_EXTRA += [
    Example(
        "star-import-kept-while-larc-still-used",
        "from apex.parallel import *\n\n\ndef wrap(model, opt, local_rank):\n"
        "    return DistributedDataParallel(model), LARC(opt)\n",
        "from apex.parallel import *\nimport torch\n\n\ndef wrap(model, opt, local_rank):\n"
        "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[local_rank],\n"
        "        output_device=local_rank,\n        broadcast_buffers=False,\n    ), LARC(opt)\n",
        ("APX601",),
    ),
]

DDP_EXTRA += [
    Example(
        "model-moved-with-cuda-gpu",
        "from apex.parallel import DistributedDataParallel as DDP\n\n\ndef main_worker(gpu, model):\n"
        "    model.cuda(gpu)\n    return DDP(model)\n",
        "import torch\n\n\ndef main_worker(gpu, model):\n    model.cuda(gpu)\n"
        "    return torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[gpu],\n"
        "        output_device=gpu,\n        broadcast_buffers=False,\n    )\n",
        ("APX601",),
    ),
]

SYNCBN_EXTRA = [
    Example(
        "convert-channel-last",
        "from apex.parallel import convert_syncbn_model\n\nmodel = convert_syncbn_model(model, channel_last=True)\n",
        "import torch\n\n"
        + TODO
        + CHANNEL_LAST_TODO
        + "\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n",
        ("APX611", "APX613"),
    ),
    Example(
        "sync-bn-positional-arguments",
        "import apex\n\nbn = apex.parallel.SyncBatchNorm(64, 1e-5, 0.1, True, True, group)\n",
        "import torch\n\nbn = torch.nn.SyncBatchNorm(64, 1e-5, 0.1, True, True, group)\n",
        ("APX612",),
    ),
    Example(
        "isinstance-both-classes",
        "import torch.nn as nn\nfrom apex.parallel import SyncBatchNorm as ApexSyncBN\n\n"
        "is_bn = isinstance(m, (nn.SyncBatchNorm, ApexSyncBN))\n",
        "import torch.nn as nn\n\nis_bn = isinstance(m, nn.SyncBatchNorm)\n",
        ("APX612",),
    ),
]

LARC_EXTRA = [
    Example(
        "larc-isinstance-and-construction",
        "from apex.parallel.LARC import LARC\n\n\ndef build(opt, args):\n    if args.larc:\n"
        "        opt = LARC(opt, trust_coefficient=args.trust)\n    return opt\n",
        "from apex.parallel.LARC import LARC\n\n\ndef build(opt, args):\n    if args.larc:\n"
        "        " + TODO + LARC_TODO + "\n        opt = LARC(opt, trust_coefficient=args.trust)\n    return opt\n",
        ("APX621",),
    ),
]


def _ids(cases):
    return example_ids(cases)


DDP_CASES = DistributedDataParallelRule.EXAMPLES + DistributedDataParallelRule.NOOP_EXAMPLES + DDP_EXTRA
SYNCBN_CASES = SyncBatchNormRule.EXAMPLES + SyncBatchNormRule.NOOP_EXAMPLES + SYNCBN_EXTRA
LARC_CASES = LarcRule.EXAMPLES + LarcRule.NOOP_EXAMPLES + LARC_EXTRA


@pytest.mark.parametrize("example", DDP_CASES, ids=_ids(DDP_CASES))
def test_ddp_rule(example: Example) -> None:
    check_example(DistributedDataParallelRule, example)


@pytest.mark.parametrize("example", SYNCBN_CASES, ids=_ids(SYNCBN_CASES))
def test_syncbn_rule(example: Example) -> None:
    check_example(SyncBatchNormRule, example)


@pytest.mark.parametrize("example", LARC_CASES, ids=_ids(LARC_CASES))
def test_larc_rule(example: Example) -> None:
    check_example(LarcRule, example)
