"""The splice route for the deprecated torch.cuda.amp spellings (``spelling_splices``): the
same bytes and findings as the LibCST route, every other byte kept, and a refusal (the
LibCST route) for every shape it does not take."""

from __future__ import annotations

import pytest

import migrate.engine as engine
from migrate.engine import _migrate_parsed, enabled_rules, migrate_source
from migrate.rules.torch_amp_spellings import TorchAmpSpellingsRule
from migrate.settings import Settings
from migrate.spelling_splices import spliced

SETTINGS = Settings(target="native")

TAKEN = {
    "context-and-scaler": (
        "import torch\n\nwith torch.cuda.amp.autocast(enabled=args.amp):\n    y = model(x)\n"
        "scaler = torch.cuda.amp.GradScaler(init_scale=2.**16, enabled=True)\n"
    ),
    "scaler-over-lines": (
        "import torch\nimport torch.nn.parallel\n\n\ndef f(args):\n    scaler = torch.cuda.amp.GradScaler(\n"
        "        init_scale=args.s,\n        growth_factor=2,\n    )\n    return scaler\n"
    ),
    "decorators": (
        "import torch\n\n\nclass Fn(torch.autograd.Function):\n    @staticmethod\n"
        "    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n    def forward(ctx, x):\n        return x\n\n"
        "    @staticmethod\n    @torch.cuda.amp.custom_bwd  # the gradient\n    def backward(ctx, g):\n        return g\n"
    ),
    "crlf": "import torch\r\n\r\n# autocast\r\nwith torch.cuda.amp.autocast(enabled=a,\r\n                             dtype=b):\r\n"
    "    y = 1\r\ns = torch.cuda.amp.GradScaler(enabled=a, growth_interval=10)\r\n",
    "tabs": "import torch\nif True:\n\twith torch.cuda.amp.autocast():\n\t\ts = torch.cuda.amp.GradScaler()  # x\n",
    "non-ascii-before-the-site": (
        "# -*- coding: utf-8 -*-\nimport torch\nscalers = {'é': torch.cuda.amp.GradScaler(enabled=True)}  # ü\n"
    ),
    "cpu-and-positional-scaler": (
        "import torch\nwith torch.cpu.amp.autocast(dtype=torch.bfloat16):\n    s = torch.cuda.amp.GradScaler(1024.0, enabled=on)\n"
    ),
    "spaced-separator": "import torch\nwith torch.cuda.amp.autocast(enabled=a , dtype=b , cache_enabled=c):\n    pass\n",
    "no-final-newline": "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=True)",
    "star-imports-of-other-modules": (
        "from helpers import *\nimport torch\nfrom .losses import *\nwith torch.cuda.amp.autocast():\n    pass\n"
    ),
    "custom-without-arguments": "import torch\n\n\n@torch.cuda.amp.custom_fwd()\ndef f(x):\n    return x\n",
}

REFUSED = {
    "from-import": "from torch.cuda.amp import autocast\n\nwith autocast():\n    pass\n",
    "torch-rebound": "import torch\n\n\ndef f(torch):\n    return torch.cuda.amp.GradScaler()\n",
    "autocast-positional": "import torch\nwith torch.cuda.amp.autocast(True):\n    pass\n",
    "line-the-rule-splits": "import torch\nscaler = torch.cuda.amp.GradScaler(init_scale=args.initial_loss_scale, "
    "growth_interval=args.growth_interval_steps)\n",
    "comment-in-separator": "import torch\nscaler = torch.cuda.amp.GradScaler(\n    init_scale=1,  # c\n    enabled=True)\n",
    "bom": "\ufeffimport torch\nscaler = torch.cuda.amp.GradScaler(enabled=True)\n",
    "annotation": "import torch\nscaler: torch.cuda.amp.GradScaler = None\n",
    "parenthesised-callee": "import torch\nwith (torch.cuda.amp.autocast)():\n    pass\n",
    "uneven-autocast-separators": "import torch\nwith torch.cuda.amp.autocast(enabled=a, dtype=b,  cache_enabled=c):\n    pass\n",
    "star-import-from-torch": "from torch.nn import *\nimport torch\nwith torch.cuda.amp.autocast():\n    pass\n",
    "star-import-from-apex": "import torch\nfrom apex.parallel import *\nwith torch.cuda.amp.autocast():\n    pass\n",
    "mixed-line-ends": "import torch\r\nwith torch.cuda.amp.autocast():\n    pass\n",
    "lone-carriage-return": "import torch\rwith torch.cuda.amp.autocast():\r    pass\r",
}


def _libcst_route(source: bytes, path: str = "t.py"):
    return _migrate_parsed(source, path, SETTINGS, [TorchAmpSpellingsRule], None, None)


def _encoded(text: str, encoding: str = "utf-8") -> bytes:
    return text.encode(encoding)


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_taken_shapes_give_the_libcst_routes_bytes_and_findings(name: str) -> None:
    source = _encoded(TAKEN[name])
    made = spliced(source, "t.py", SETTINGS)
    assert made is not None, name
    expected = _libcst_route(source)
    assert expected.internal_error is None and expected.parse_error is None
    assert made[0] != source
    assert made[0] == expected.new
    assert sorted(set(made[1])) == expected.all_findings()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_other_shapes_are_refused(name: str) -> None:
    assert spliced(_encoded(REFUSED[name]), "t.py", SETTINGS) is None


def test_every_rule_example_taken_matches_its_expected_output() -> None:
    taken = 0
    for example in TorchAmpSpellingsRule.EXAMPLES + TorchAmpSpellingsRule.NOOP_EXAMPLES:
        settings = example.settings
        made = spliced(example.before.encode(), "t.py", settings)
        if made is None:
            continue
        taken += 1
        assert made[0].decode() == (example.after if example.after is not None else example.before), example.id
        assert sorted(f.code for f in made[1]) == sorted(example.codes), example.id
    assert taken >= 3


def test_bytes_outside_the_sites_are_kept() -> None:
    source = _encoded(TAKEN["crlf"])
    new, _ = spliced(source, "t.py", SETTINGS)
    assert new == (
        b'import torch\r\n\r\n# autocast\r\nwith torch.autocast("cuda",\r\n                             enabled=a,\r\n'
        b'                             dtype=b):\r\n'
        b'    y = 1\r\ns = torch.amp.GradScaler("cuda", enabled=a, growth_interval=10)\r\n'
    )


def test_finding_columns_count_characters() -> None:
    source = _encoded(TAKEN["non-ascii-before-the-site"])
    new, findings = spliced(source, "t.py", SETTINGS)
    assert new.decode().splitlines()[2] == "scalers = {'é': torch.amp.GradScaler(\"cuda\", enabled=True)}  # ü"
    assert [(f.line, f.col, f.code) for f in findings] == [(3, 17, "APX902")]


def test_another_declared_encoding_is_refused_and_kept_by_the_libcst_route() -> None:
    source = "# -*- coding: latin-1 -*-\nimport torch\ns = {'é': torch.cuda.amp.GradScaler()}\n".encode("latin-1")
    assert spliced(source, "t.py", SETTINGS) is None
    result = migrate_source(source, "t.py", SETTINGS)
    assert result.new == _libcst_route(source).new


def test_settings_that_change_the_rule_are_refused() -> None:
    source = _encoded(TAKEN["context-and-scaler"])
    assert spliced(source, "t.py", Settings(target="native", target_torch=(2, 3))) is None
    assert spliced(source, "t.py", Settings(target="native", ignore=("APX902",))) is None


def test_the_engine_takes_the_route_without_libcst(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parse(*args, **kwargs):
        raise AssertionError("LibCST parsed the file")

    source = _encoded(TAKEN["context-and-scaler"])
    expected = _libcst_route(source)
    monkeypatch.setattr(engine.cst, "parse_module", no_parse)
    result = migrate_source(source, "t.py", SETTINGS)
    assert result.new == expected.new and result.all_findings() == expected.all_findings()


def test_a_file_with_other_work_takes_the_libcst_route(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _encoded("from apex import amp\n" + TAKEN["context-and-scaler"])
    parsed = []
    real = engine.cst.parse_module

    def counting(*args, **kwargs):
        parsed.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine.cst, "parse_module", counting)
    migrate_source(source, "t.py", SETTINGS)
    assert parsed
    assert [r for r in enabled_rules(SETTINGS) if r is TorchAmpSpellingsRule]


@pytest.mark.parametrize("length", [99, 100])
def test_the_rules_line_limit(length: int) -> None:
    head = "scaler = torch.amp.GradScaler(\"cuda\", init_scale=s, growth_interval="
    value = "g" * (length - len(head) - 1)
    source = f"import torch\nscaler = torch.cuda.amp.GradScaler(init_scale=s, growth_interval={value})\n".encode()
    made = spliced(source, "t.py", SETTINGS)
    expected = _libcst_route(source)
    if length <= 99:
        assert made is not None and made[0] == expected.new
        assert len(made[0].decode().splitlines()[1]) == length
    else:
        assert made is None  # the rule puts each argument on a line of its own there
        assert len(expected.new.decode().splitlines()) > 2


#: files where the deprecated spellings sit beside apex: the splices go first, LibCST runs the rest
WITH_OTHER_WORK = {
    "amp-and-inference-autocast": (
        "import torch\nfrom apex import amp\n\n\ndef train(model, optimizer, data):\n"
        "    model, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n"
        "    for x, y in data:\n        loss = model(x).sum()\n"
        "        with amp.scale_loss(loss, optimizer) as scaled_loss:\n            scaled_loss.backward()\n"
        "        optimizer.step()\n\n\ndef evaluate(model, x):\n"
        "    with torch.cuda.amp.autocast(enabled=True):\n        return model(x)\n"
    ),
    "ddp-and-scaler": (
        "import torch\nfrom apex.parallel import DistributedDataParallel as DDP\n\n"
        "model = DDP(model)\nscaler = torch.cuda.amp.GradScaler(enabled=True)\n"
    ),
    "fused-optimizer-and-decorator": (
        "import torch\nfrom apex.optimizers import FusedAdam\n\n\nclass Fn(torch.autograd.Function):\n"
        "    @staticmethod\n    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n    def forward(ctx, x):\n"
        "        return x\n\n\noptimizer = FusedAdam(params, lr=1e-3)\n"
    ),
}


def _all_by_libcst(source: bytes):
    return _migrate_parsed(source, "t.py", SETTINGS, enabled_rules(SETTINGS), None, None)


@pytest.mark.parametrize("name", sorted(WITH_OTHER_WORK))
def test_spellings_beside_other_work_are_spliced_first_with_the_same_result(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _encoded(WITH_OTHER_WORK[name])
    expected = _all_by_libcst(source)
    assert expected.changed and {"APX901", "APX902", "APX903"} & {f.code for f in expected.findings}
    ran = []
    real = TorchAmpSpellingsRule.transform_module

    def recording(self, tree):
        ran.append(1)
        return real(self, tree)

    monkeypatch.setattr(TorchAmpSpellingsRule, "transform_module", recording)
    result = migrate_source(source, "t.py", SETTINGS)
    assert not ran  # the splices made the spellings' edits
    assert (result.old, result.new) == (source, expected.new)
    assert result.all_findings() == expected.all_findings()


def test_a_rule_crashing_after_the_splices_leaves_the_file_as_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from migrate.rules.amp_initialize import InitializeRule

    def crash(self, tree):
        raise RuntimeError("boom")

    monkeypatch.setattr(InitializeRule, "transform_module", crash)
    source = _encoded(WITH_OTHER_WORK["amp-and-inference-autocast"])
    result = migrate_source(source, "t.py", SETTINGS)
    assert result.old == source and result.new == source and not result.changed
    assert result.internal_error is not None and "InitializeRule" in result.internal_error.message
