"""APX90x fixtures: deprecated torch.cuda.amp / torch.cpu.amp spellings."""

from __future__ import annotations

import pytest

from migrate.rules.base import Example
from migrate.rules.torch_amp_spellings import TorchAmpSpellingsRule
from migrate.settings import Settings

from neighbour_harness import check_example, example_ids

EXTRA = [
    Example(
        "module-alias",
        "import torch.cuda.amp as cuda_amp\n\nscaler = cuda_amp.GradScaler(2.0**16, 2.0, 0.5, 2000)\n",
        'import torch\n\nscaler = torch.amp.GradScaler("cuda", 2.0**16, 2.0, 0.5, 2000)\n',
        ("APX902",),
    ),
    Example(
        "autocast-as-decorator",
        "import torch\n\n\nclass Net(torch.nn.Module):\n    @torch.cuda.amp.autocast()\n    def forward(self, x):\n"
        "        return self.fc(x)\n",
        'import torch\n\n\nclass Net(torch.nn.Module):\n    @torch.autocast("cuda")\n    def forward(self, x):\n'
        '        return self.fc(x)\n',
        ("APX901",),
    ),
    Example(
        "autocast-passed-as-value-kept",
        "from contextlib import nullcontext\n\nfrom torch.cuda.amp import autocast\n\n"
        "ctx = autocast if use_amp else nullcontext\n",
        None,
        ("APX904",),
    ),
    Example(
        "autocast-star-kwargs-kept",
        "import torch\n\nwith torch.cuda.amp.autocast(**amp_kwargs):\n    y = model(x)\n",
        None,
        ("APX904",),
    ),
    Example(
        "grad-scaler-module-path",
        "from torch.cuda.amp.grad_scaler import GradScaler\n\nscaler = GradScaler()\n",
        'import torch\n\nscaler = torch.amp.GradScaler("cuda")\n',
        ("APX902",),
    ),
    Example(
        "autocast-rewritten-grad-scaler-kept-for-torch-2-2",
        "from torch.cuda.amp import GradScaler, autocast\n\nscaler = GradScaler()\nwith autocast():\n"
        "    y = model(x)\n",
        'from torch.cuda.amp import GradScaler\nimport torch\n\nscaler = GradScaler()\nwith torch.autocast("cuda"):\n'
        '    y = model(x)\n',
        ("APX901",),
        Settings(target_torch=(2, 2)),
    ),
    Example(
        "uses-existing-from-torch-import-autocast",
        "from torch import autocast\nimport torch.cuda.amp\n\nwith torch.cuda.amp.autocast(enabled=False):\n"
        "    y = f(x)\n",
        'from torch import autocast\n\nwith autocast("cuda", enabled=False):\n    y = f(x)\n',
        ("APX901",),
    ),
    Example(
        "local-function-named-autocast",
        "def autocast(enabled=True):\n    return nullcontext()\n\n\nwith autocast():\n    y = f(x)\n",
        None,
        (),
    ),
    Example(
        "string-and-comment",
        '# torch.cuda.amp.autocast() is deprecated\nmsg = "use torch.cuda.amp.GradScaler"\n',
        None,
        (),
    ),
]

EXTRA += [
    Example(
        "version-compat-fallback-left-alone",
        "try:\n    from torch.amp import GradScaler\nexcept ImportError:\n    from torch.cuda.amp import GradScaler\n\n"
        "scaler = GradScaler()\n",
    ),
]

CASES = TorchAmpSpellingsRule.EXAMPLES + TorchAmpSpellingsRule.NOOP_EXAMPLES + EXTRA


@pytest.mark.parametrize("example", CASES, ids=example_ids(CASES))
def test_torch_amp_spellings_rule(example: Example) -> None:
    check_example(TorchAmpSpellingsRule, example)
