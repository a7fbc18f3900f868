"""Import guards and star imports seen in real apex code (realworld-A/-B reports: P5, P6/P-star,
P7, P8, P10).  Each case runs through the whole pipeline; the output must compile, a second
run must change nothing and report the same manual work."""

from __future__ import annotations

from typing import List, Tuple

import pytest

from migrate.engine import migrate_source
from migrate.rules.base import TODO_PREFIX
from migrate.settings import Settings


NATIVE = Settings()


def run(text: str, settings: Settings = NATIVE) -> Tuple[str, List[Tuple[str, str, bool]]]:
    result = migrate_source(text.encode(), "example.py", settings)
    assert result.parse_error is None
    assert result.internal_error is None, result.internal_error
    out = result.new.decode()
    compile(out, "example.py", "exec")
    again = migrate_source(result.new, "example.py", settings)
    assert again.new == result.new, "second run changes nothing"
    manual = sorted(f.code for f in result.findings if f.severity == "error")
    assert sorted(f.code for f in again.findings if f.severity == "error") == manual, "same manual work"
    return out, [(f.code, f.severity, f.fixed) for f in result.findings]


# --- P5: the except branch only says apex is missing, whatever the log level -----------------


@pytest.mark.parametrize(
    "handler",
    [
        'logger.exception("Please install apex to use mixed precision.")',
        'logger.error("Please install apex")',
        'logging.error("apex is not installed")',
        'LOG.critical("no apex")',
        'self_logger.warn("no apex")',
        'warnings.warn("apex missing, amp disabled")',
    ],
)
@pytest.mark.parametrize("catch", ["except:", "except ImportError:", "except (ImportError, ModuleNotFoundError):"])
def test_install_hint_in_except_goes_with_the_guard(handler: str, catch: str) -> None:
    text = (
        "import logging\nimport warnings\n\nlogger = logging.getLogger(__name__)\n\n"
        f"try:\n    from apex import amp\n{catch}\n    {handler}\n\n\n"
        "def step(model, optimizer, loss):\n"
        '    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n'
        "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n        scaled_loss.backward()\n"
        "    optimizer.step()\n"
    )
    out, codes = run(text)
    assert handler not in out
    assert "apex" not in out.replace(TODO_PREFIX, "")
    assert ("APX103", "info", True) in codes


def test_other_statements_of_the_handler_stay() -> None:
    text = (
        "try:\n    from apex import amp\nexcept ImportError:\n"
        '    logger.error("no apex")\n    from torch.nn import LayerNorm\n'
    )
    out, _ = run(text)
    assert out == "from torch.nn import LayerNorm\n"


# --- P6 / P-star: from apex.fp16_utils import * -------------------------------------------------

IMAGENET_STYLE = """\
import torch

try:
    from apex.fp16_utils import *
    from apex import amp
except ImportError:
    raise ImportError("Please install apex")

model = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
loss = model(torch.randn(2, 4)).sum()
with amp.scale_loss(loss, optimizer) as scaled_loss:
    scaled_loss.backward()
optimizer.step()
print(to_python_float(loss.data))
"""


@pytest.mark.parametrize("target", ["native", "shim"])
def test_star_import_resolved_and_dropped(target: str) -> None:
    out, codes = run(IMAGENET_STYLE, Settings(target=target))
    assert "fp16_utils" not in out
    assert "print(loss.data.item())" in out
    assert ("APX707", "info", True) in codes
    assert not [c for c in codes if c[1] == "error"]
    if target == "native":
        assert "apex" not in out


def test_star_import_still_used_gets_a_todo_naming_the_names() -> None:
    text = IMAGENET_STYLE.replace(
        "print(to_python_float(loss.data))", "model = network_to_half(model)\nBN_convert_float(model)"
    )
    out, codes = run(text)
    assert "from apex.fp16_utils import *" in out
    star_todo = [line for line in out.splitlines() if "from apex.fp16_utils import *` kept" in line]
    assert star_todo and star_todo[0].lstrip().startswith(TODO_PREFIX)
    joined = " ".join(out.split())
    assert "BN_convert_float, network_to_half" in joined
    assert ("APX104", "error", False) in codes


def test_star_import_of_unknown_apex_module_gets_a_todo() -> None:
    out, codes = run("from apex.contrib.foo import *\n\nx = bar()\n")
    assert out.startswith(TODO_PREFIX)
    assert ("APX104", "error", False) in codes


# --- P7: a removed module behind a None fallback ------------------------------------------------


@pytest.mark.parametrize(
    "module, name, use",
    [
        ("apex.parallel", "DistributedDataParallel as ApexDDP", "isinstance(model, ApexDDP)"),
        ("apex.fp16_utils", "FP16_Optimizer", "isinstance(opt, FP16_Optimizer)"),
    ],
)
def test_removed_module_with_none_fallback_is_manual_work(module: str, name: str, use: str) -> None:
    binding = name.split(" as ")[-1]
    text = (
        f"try:\n    from {module} import {name}\nexcept ImportError:\n    {binding} = None\n\n\n"
        f"def check(model, opt):\n    return {binding} is not None and {use}\n"
    )
    out, codes = run(text)
    assert ("APX104", "error", False) in codes
    assert f"{binding} = None (the except branch)" in " ".join(out.replace(TODO_PREFIX, "").split())


# --- P8: import apex as the availability check of a function's amp switch ----------------------

REPTILE_STYLE = """\
import torch


def check_gpu():
    try:
        import apex

        apex.amp.register_float_function(torch, "sigmoid")
        use_amp = True
    except ImportError:
        use_amp = False
    return use_amp
"""


def test_function_guard_keeps_the_flag_available() -> None:
    out, codes = run(REPTILE_STYLE)
    assert "import apex" not in out
    assert "use_amp = False" not in out
    assert "    use_amp = True\n    return use_amp\n" in out
    assert "def check_gpu():\n    # TODO" in out, "no blank line opens the function body"
    assert ("APX106", "info", False) not in codes


def test_function_guard_on_the_shim_keeps_the_renamed_import() -> None:
    out, _ = run(REPTILE_STYLE, Settings(target="shim"))
    assert "import apexcompat.amp" in out
    assert "apexcompat.amp.register_float_function" in out
    assert "import apex\n" not in out


def test_availability_probe_with_return_still_reported() -> None:
    text = "def has_apex():\n    try:\n        import apex\n        return True\n    except ImportError:\n        return False\n"
    out, codes = run(text)
    assert out == text
    assert ("APX105", "warning", False) in codes


# --- P10: lines above a removed import --------------------------------------------------------


def test_comments_above_removed_imports() -> None:
    text = (
        "import torch\n"
        "#from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from apex.parallel import Reducer\n"
        "# apex for mixed precision\n"
        "from apex import amp\n"
        "import os\n"
    )
    out, _ = run(text)
    assert out == "import torch\n#from torch.nn.parallel import DistributedDataParallel as DDP\nimport os\n"


def test_blank_line_between_import_groups_stays() -> None:
    out, _ = run("import numpy as np\n\nimport apex\nimport torch\n\nx = torch.zeros(1)\n")
    assert out == "import numpy as np\n\nimport torch\n\nx = torch.zeros(1)\n"
