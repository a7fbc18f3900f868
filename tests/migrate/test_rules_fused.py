"""APX8xx fixtures: apex's still-shipped fused kernels (the rule's own examples plus edge cases)."""

from __future__ import annotations

import pytest

from migrate.rules.base import Example
from migrate.rules.fused import FusedKernelsRule
from migrate.settings import Settings

from neighbour_harness import check_example, example_ids

EXTRA = [
    Example(
        "fused-adam-positional-bias-correction-moves-betas-to-keyword",
        "from apex.optimizers import FusedAdam\n\nopt = FusedAdam(params, 1e-3, True, (0.9, 0.99))\n",
        "import torch\n\nopt = torch.optim.AdamW(params, 1e-3, betas=(0.9, 0.99), weight_decay=0.0)\n",
        ("APX801",),
    ),
    Example(
        "fused-adam-amsgrad-kept",
        "from apex.optimizers import FusedAdam\nopt = FusedAdam(params, amsgrad=True)\n",
        None,
        ("APX808",),
    ),
    Example(
        "fused-adam-dynamic-adam-w-mode-kept",
        "from apex.optimizers import FusedAdam\nopt = FusedAdam(params, adam_w_mode=args.adamw)\n",
        None,
        ("APX808",),
    ),
    Example(
        "fused-adam-star-kwargs-kept",
        "from apex.optimizers import FusedAdam\nopt = FusedAdam(params, **cfg)\n",
        None,
        ("APX808",),
    ),
    Example(
        "fused-adam-submodule-import",
        "from apex.optimizers.fused_adam import FusedAdam\n\n"
        "opt = FusedAdam(params, lr=1e-3, weight_decay=0.1, adam_w_mode=True)\n",
        "import torch\n\nopt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1)\n",
        ("APX801",),
    ),
    Example(
        "fused-adam-import-kept-while-lamb-used",
        "from apex.optimizers import FusedAdam, FusedLAMB\n\n"
        "opt = FusedAdam(params) if args.adam else FusedLAMB(params)\n",
        "from apex.optimizers import FusedLAMB\nimport torch\n\n"
        "opt = torch.optim.AdamW(params, weight_decay=0.0) if args.adam else FusedLAMB(params)\n",
        ("APX801", "APX809"),
    ),
    Example(
        "fused-sgd-wd-after-momentum-kept",
        "from apex.optimizers import FusedSGD\nopt = FusedSGD(params, 0.1, wd_after_momentum=True)\n",
        None,
        ("APX808",),
    ),
    Example(
        "fused-layer-norm-positional-memory-efficient-dropped",
        "import torch\nfrom apex.normalization import FusedLayerNorm\nln = FusedLayerNorm(512, 1e-5, True, True)\n",
        "import torch\nln = torch.nn.LayerNorm(512, 1e-5, True)\n",
        ("APX804",),
    ),
    Example(
        "fused-layer-norm-isinstance",
        "from torch import nn\nfrom apex.normalization import FusedLayerNorm\n"
        "if isinstance(m, (nn.LayerNorm, FusedLayerNorm)):\n    pass\n",
        "from torch import nn\nif isinstance(m, nn.LayerNorm):\n    pass\n",
        ("APX804",),
    ),
    Example(
        "fused-rms-norm-positional-eps-not-doubled",
        "from apex.normalization import FusedRMSNorm\n\nnorm = FusedRMSNorm(dim, 1e-6)\n",
        "import torch\n\nnorm = torch.nn.RMSNorm(dim, 1e-6)\n",
        ("APX805",),
    ),
    Example(
        "fused-layer-norm-affine-default-eps",
        "from apex.normalization.fused_layer_norm import fused_layer_norm_affine\n\n"
        "y = fused_layer_norm_affine(x, w, b, (512,))\n",
        "import torch\n\ny = torch.nn.functional.layer_norm(x, (512,), w, b, 1e-6)\n",
        ("APX806",),
    ),
    Example(
        "long-line-split-one-argument-per-line",
        "from apex.optimizers import FusedAdam\n\n\ndef build(model, args):\n"
        "    return FusedAdam(model.parameters(), lr=args.learning_rate, betas=(args.beta1, args.beta2), "
        "eps=args.adam_epsilon)\n",
        "import torch\n\n\ndef build(model, args):\n    return torch.optim.AdamW(\n        model.parameters(),\n"
        "        lr=args.learning_rate,\n        betas=(args.beta1, args.beta2),\n        eps=args.adam_epsilon,\n"
        "        weight_decay=0.0,\n    )\n",
        ("APX801",),
    ),
    Example(
        "select-other-family-leaves-fused-alone",
        "from apex.optimizers import FusedAdam\nopt = FusedAdam(params)\n",
        None,
        (),
        Settings(select=frozenset({"APX6"})),
    ),
]

EXTRA += [
    Example(
        "fallback-import-of-torch-class-keeps-the-name",
        "try:\n    from apex.normalization import FusedLayerNorm as LayerNorm\nexcept ImportError:\n"
        "    from torch.nn import LayerNorm\n\nnorm = LayerNorm(768)\n",
    ),
]

CASES = FusedKernelsRule.EXAMPLES + FusedKernelsRule.NOOP_EXAMPLES + EXTRA


@pytest.mark.parametrize("example", CASES, ids=example_ids(CASES))
def test_fused_rule(example: Example) -> None:
    check_example(FusedKernelsRule, example)
