"""The shortcuts around LibCST work no rule reads: a file whose only rule triggers sit in
comments or strings is not parsed; the tree after a file's last change is not parsed again
(only its text is read); the planning process of a run with workers never loads LibCST.
Same results as the long way, less work."""

from __future__ import annotations

import libcst as cst
import pytest

import migrate.engine as engine
from migrate.engine import _migrate_parsed, enabled_rules, migrate_source
from migrate.settings import Settings

SETTINGS = Settings(target="native")

#: apex only in a docstring and a comment: admitted by the bytes, no rule has work in the code
DOCSTRING_ONLY = (
    '"""A BART model (the fused layer norm of apex is not needed here)."""\n'
    "import torch\n\n\n"
    "def norm(x):  # was apex.normalization.FusedLayerNorm\n"
    "    return torch.nn.functional.layer_norm(x, x.shape[-1:])\n"
)

#: one apex.amp script: several rules change it, the imports rule last
AMP_SCRIPT = (
    "import torch\nfrom apex import amp\n\n\n"
    "def train(model, optimizer, data):\n"
    "    model, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n"
    "    for x, y in data:\n"
    "        loss = torch.nn.functional.mse_loss(model(x), y)\n"
    "        optimizer.zero_grad()\n"
    "        with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
    "            scaled_loss.backward()\n"
    "        optimizer.step()\n"
)


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list:
    calls: list = []
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_file_naming_apex_only_in_comments_and_strings_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    source = DOCSTRING_ONLY.encode()
    assert b"apex" in source
    parses = _counting(monkeypatch, engine.cst, "parse_module")
    result = migrate_source(source, "model.py", SETTINGS)
    assert not parses
    assert (result.old, result.new, result.all_findings()) == (source, source, [])


def test_a_file_with_a_syntax_error_is_still_parsed_and_reported() -> None:
    source = b"from apex import amp  # the old path\ndef f(:\n    pass\n"
    result = migrate_source(source, "broken.py", SETTINGS)
    assert result.new == source and result.parse_error is not None


def test_the_last_change_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    source = AMP_SCRIPT.encode()
    expected = migrate_source(source, "train.py", SETTINGS)
    assert expected.changed and b"apex" not in expected.new
    reparses = _counting(monkeypatch, engine, "next_tree")
    changes: list = []
    real = engine._run_rules

    def recording(*args, **kwargs):
        new, changed_by = real(*args, **kwargs)
        changes.extend(changed_by)
        return new, changed_by

    monkeypatch.setattr(engine, "_run_rules", recording)
    grouped = migrate_source(source, "train.py", SETTINGS)
    grouped_reparses = len(reparses)
    reparses.clear(), changes.clear()
    monkeypatch.setattr(engine, "SAME_TEXT_GROUPS", ())  # each rule on the text the one before left
    result = migrate_source(source, "train.py", SETTINGS)
    assert len(changes) >= 3 and changes[-1].__name__ == "ImportsRule"
    assert len(reparses) == len(changes) - 1  # every change but the last gives the next rule a tree
    # the rules of a same-text group share one text: fewer trees, the same result
    assert grouped_reparses < len(reparses)
    assert (grouped.new, grouped.all_findings()) == (result.new, result.all_findings())
    assert (result.new, result.all_findings()) == (expected.new, expected.all_findings())
    assert result.new == _migrate_parsed(source, "train.py", SETTINGS, enabled_rules(SETTINGS), None, None).new


def test_a_last_change_that_does_not_compile_leaves_the_file_as_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from migrate.rules.imports import ImportsRule

    real = ImportsRule.transform_module

    def broken(self, tree):
        out = real(self, tree)
        # a statement LibCST prints but Python rejects: ``return`` at the top level
        rejected = cst.SimpleStatementLine(body=[cst.Return(cst.Integer("1"))])
        return out.with_changes(body=[*out.body, rejected])

    monkeypatch.setattr(ImportsRule, "transform_module", broken)
    source = AMP_SCRIPT.encode()
    result = migrate_source(source, "train.py", SETTINGS)
    assert result.new == source and not result.changed
    assert result.internal_error is not None and "ImportsRule" in result.internal_error.message


def test_the_planning_process_leaves_libcst_to_the_workers(tmp_path) -> None:
    """With worker processes, the process that walks, plans and reports never loads LibCST
    (each worker loads it as it starts, while the plan is built)."""
    import subprocess
    import sys

    for k in range(8):
        (tmp_path / f"train{k}.py").write_text(AMP_SCRIPT)
    probe = (
        "import sys\nfrom migrate import cli\n"
        "try:\n    code = cli.main(['--check', '-q', '-j', '2', '.'])\nexcept SystemExit as stop:\n    code = stop.code\n"
        "print(code, 'libcst' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.stdout.split()[-2:] == ["1", "False"], done.stdout + done.stderr


@pytest.mark.parametrize("apex_files, started_at", [(8, 8), (7, None)])
def test_the_workers_start_while_the_tree_is_read(tmp_path, apex_files: int, started_at) -> None:
    """The worker processes start as soon as enough files are admitted to pay for both
    (they load LibCST while the rest of the tree is read), not after the last file; with
    fewer admitted files there are none, and the answer is the same."""
    import subprocess
    import sys

    for k in range(apex_files):
        (tmp_path / f"a_train{k}.py").write_text(AMP_SCRIPT)
    for k in range(12):
        (tmp_path / f"z_util{k}.py").write_text(f"def helper{k}(x):\n    return x + {k}\n")
    probe = (
        "import sys\nfrom migrate import cli, early_pool\n"
        "read, started = [], []\n"
        "note = cli.Run._note_suppressions\n"
        "cli.Run._note_suppressions = lambda self, *a: (read.append(1), note(self, *a))[1]\n"
        "start = early_pool.start_workers\n"
        "early_pool.start_workers = lambda *a: (started.append(len(read)), start(*a))[1]\n"
        "try:\n    code = cli.main(['--check', '-q', '-j', '2', '.'])\nexcept SystemExit as stop:\n    code = stop.code\n"
        "print(code, started)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    expected = f"[{started_at}]" if started_at else "[]"
    assert done.stdout.strip().splitlines()[-1] == f"1 {expected}", done.stdout + done.stderr


#: a native loop that clips without a scaled backward (its GradScaler is off-path): the
#: native-clip rule's trigger is there, its work is not
CLIP_WITHOUT_SCALED_BACKWARD = (
    "import torch\n\n\ndef train(model, optimizer, data, max_norm):\n"
    "    for x, y in data:\n        loss = model(x, y)\n        loss.backward()\n"
    "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n        optimizer.step()\n"
)


@pytest.mark.parametrize(
    "text, work",
    [
        (CLIP_WITHOUT_SCALED_BACKWARD, False),
        (CLIP_WITHOUT_SCALED_BACKWARD.replace("loss.backward()", "scaler.scale(loss).backward()"), True),
        (CLIP_WITHOUT_SCALED_BACKWARD.replace("loss.backward()", "(scaler.scale(loss)).backward()"), True),
        (CLIP_WITHOUT_SCALED_BACKWARD.replace("max_norm)\n", "max_norm)  # é\n"), True),  # not ASCII: LibCST decides
        (CLIP_WITHOUT_SCALED_BACKWARD + "# TODO(apexcompat): clip(...) clips the gradients that x\n", True),
        (CLIP_WITHOUT_SCALED_BACKWARD.replace("max_norm)\n", "max_norm\n"), True),  # does not parse
        (CLIP_WITHOUT_SCALED_BACKWARD.replace("clip_grad_norm_", "clip_norm_"), False),  # no trigger
    ],
    ids=["no-scaled-backward", "scaled-backward", "parenthesised", "non-ascii", "our-todo", "unparsable", "no-clip"],
)
def test_the_native_clip_rule_has_work_only_beside_a_scaled_backward(text: str, work: bool) -> None:
    from migrate.rules.native_clip import NativeClipRule

    assert NativeClipRule.has_work(text.encode()) is work


def test_a_native_loop_without_a_scaled_backward_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    source = CLIP_WITHOUT_SCALED_BACKWARD.encode()
    parses = _counting(monkeypatch, engine.cst, "parse_module")
    result = migrate_source(source, "train.py", SETTINGS)
    assert not parses and not result.changed and result.all_findings() == []


#: native already but for the apex import it no longer reads: ``amp`` is left only as the
#: member of ``torch.amp``
LEFTOVER_IMPORT = (
    "import torch\nfrom apex import amp\n\n\n"
    "def train(model, optimizer, data):\n"
    "    scaler = torch.amp.GradScaler('cuda')\n"
    "    for x, y in data:\n"
    "        with torch.amp.autocast('cuda'):\n"
    "            loss = model(x, y)\n"
    "        scaler.scale(loss).backward()\n"
    "        scaler.step(optimizer)\n"
    "        scaler.update()\n"
)


def test_an_attribute_member_costs_the_imports_rule_no_scope_analysis(monkeypatch) -> None:
    """The imports rule asks what each name spelled like an apex binding refers to; the
    ``amp`` of ``torch.amp`` names nothing (the scope analysis never visits a member), so it
    is not asked, and a file whose only such names are members is cleaned up without
    resolving its scopes.  The import goes as before."""
    from migrate.rules.imports import ImportsRule

    resolved = []
    real = engine.resolve_scopes
    monkeypatch.setattr(engine, "resolve_scopes", lambda *a: (resolved.append(1), real(*a))[1])
    result = migrate_source(LEFTOVER_IMPORT.encode(), "train.py", SETTINGS, rules=[ImportsRule])
    assert result.new == LEFTOVER_IMPORT.replace("from apex import amp\n", "").encode()
    assert resolved == []
    # the probe sees an analysis where the rule does need one: a name that reads the binding
    migrate_source((LEFTOVER_IMPORT + "    print(amp)\n").encode(), "train.py", SETTINGS, rules=[ImportsRule])
    assert resolved


def test_the_round_trip_is_printed_only_for_a_changed_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the rules leave as read keeps its bytes without a printing of its tree; one
    they change is refused when LibCST's printing of the tree as read is not its bytes
    (simulated: a printing that differs)."""
    from migrate.rules._tree import StatementTexts

    untouched = b"from apex.optimizers import FusedAdam\nopt = FusedAdam(params, bias_correction=False)\n"
    printings = _counting(monkeypatch, StatementTexts, "code")
    kept = migrate_source(untouched, "kept.py", SETTINGS)
    assert kept.new == untouched and kept.internal_error is None and not printings
    assert [f.code for f in kept.findings] == ["APX808"]  # kept: no torch equivalent

    monkeypatch.setattr(StatementTexts, "code", lambda self, module: "# not the file\n")
    refused = migrate_source(AMP_SCRIPT.encode(), "train.py", SETTINGS)
    assert refused.new == AMP_SCRIPT.encode()
    assert refused.internal_error is not None and "does not reproduce" in refused.internal_error.message


#: a function naming FusedAdam on one line of many: the fused-kernels rule keeps the function
FUSED_IN_A_LONG_FUNCTION = (
    "import torch\nfrom apex.optimizers import FusedAdam\n\n\n"
    "def main(args):\n"
    "    unrelated_model = torch.nn.Linear(4, 4)\n"
    "    for unrelated_step in range(args.steps):\n"
    "        unrelated_value = unrelated_model(torch.ones(4)).sum()\n"
    "    optimizer = FusedAdam(unrelated_model.parameters(), lr=1e-3)\n"
    "    return optimizer\n"
)


def test_a_pruning_rule_enters_only_the_statement_lines_naming_its_names(monkeypatch) -> None:
    """A rule that descends only into the top-level statements naming its namespaces
    (``PRUNE_STATEMENTS``) enters, inside those, only the statement lines that name one of
    the names bound into them (and the heads of compound statements): the other lines hold
    nothing it rewrites.  Same output."""
    from migrate.rules.fused import FusedKernelsRule

    seen: list = []
    real = FusedKernelsRule._reference  # what its leave_Name asks (the hooks are looked up once per run)

    def reference(self, original, updated):  # type: ignore[no-untyped-def]
        seen.append(getattr(original, "value", None))
        return real(self, original, updated)

    monkeypatch.setattr(FusedKernelsRule, "_reference", reference)
    result = migrate_source(FUSED_IN_A_LONG_FUNCTION.encode(), "train.py", SETTINGS, rules=[FusedKernelsRule])
    assert b"torch.optim.Adam(" in result.new or b"torch.optim.AdamW(" in result.new
    only_elsewhere = {"Linear", "ones", "unrelated_value"}  # names of the lines not naming FusedAdam
    assert "FusedAdam" in seen and not only_elsewhere & set(seen)
    # outside a file's run (no statement walks) every line is entered, with the same result
    from migrate.rules import _namespace_gate

    monkeypatch.setattr(_namespace_gate, "active_statement_texts", lambda: None)
    seen.clear()
    again = migrate_source(FUSED_IN_A_LONG_FUNCTION.encode(), "train.py", SETTINGS, rules=[FusedKernelsRule])
    assert again.new == result.new and only_elsewhere <= set(seen)
