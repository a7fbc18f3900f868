"""Migrate one source text: parse, run the enabled rules in order, check that the result
compiles, return the new bytes and the findings.  No file system access here (see ``walk``,
``pipeline`` and ``write``)."""

from __future__ import annotations

import importlib
import os
import re
import sys
import traceback
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from typing import Any, Callable, Collection, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Type

import libcst as cst
import libcst.helpers
from libcst import BatchableCSTVisitor
from libcst.codemod import Codemod, CodemodContext, SkipFile
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, ScopeProvider

from .added_imports import add_imports
from .collector import kept_for_the_file
from .codes import INTERNAL_ERROR, PARSE_ERROR, UNDECODABLE
from .emptied_ifs import merged_sites, tidy_emptied_ifs
from .file_facts import words_in_code
from . import shim_inputs, trusted_parse
from .findings import Finding
from .import_edits import imports_present, remove_imports_without_scopes
from .positions import to_original
from .reparse import next_tree
from .results import MigrationResult
from .repo_plan import FILE_STATE_KEY, REPO_PLAN_KEY, FilePlan
from .rules import ALL_RULES
from .rules._metadata import expression_contexts, resolve_scopes
from .rules._node_ranges import print_by_statement
from .rules._tree import StatementTexts, module_bytes, module_code, printing_by_statement, remember_code
from .rules._amp_rule import AmpRule, planned_work
from .rules.base import Rule
from .rules.torch_amp_spellings import TorchAmpSpellingsRule
from .rules.amp_initialize import InitializeRule
from .rules._namespace_gate import statements_naming
from .settings import Settings
from .spelling_splices import spliced
from .parse_hints import parse_hint
from .triggers import RULES_ENV, admitted
from . import tree_merge
from .rules import SAME_TEXT_GROUPS
from .write import compile_error

PARSE_ERROR_CODE = PARSE_ERROR  # kept for callers of the first version
_LIBCST_POSITION = re.compile(r"error at (\d+):(\d+)")


#: the registered rules: a file reaches them only when ``triggers.admitted`` (rules of a
#: test seam or a caller's own are judged by their TRIGGERS alone)
_REGISTERED = frozenset(ALL_RULES)


def default_rules() -> Sequence[Type[Rule]]:
    """``ALL_RULES``, or the rules named in ``$APEXCOMPAT_MIGRATE_RULES`` (``module:Class``
    entries, comma-separated): a seam for testing the driver with rules of its own."""
    spec = os.environ.get(RULES_ENV)
    if not spec:
        return ALL_RULES
    rules = []
    for entry in spec.split(","):
        module_name, _, class_name = entry.strip().partition(":")
        rules.append(getattr(importlib.import_module(module_name), class_name))
    return rules


def enabled_rules(settings: Settings, rules: Optional[Sequence[Type[Rule]]] = None) -> List[Type[Rule]]:
    """The rules (default: ``ALL_RULES``) with at least one code enabled by ``settings``."""
    return [r for r in (default_rules() if rules is None else rules) if r.applies_to(settings)]


def _has_work(rule_cls: Type[Rule], source: bytes, plan: Optional[FilePlan] = None) -> bool:
    """Whether ``source`` holds a trigger of ``rule_cls``; every apex.amp rule has work in a
    file whose parameter the plan reads as apex.amp (``amp_value_plan``: no apex name in it)."""
    if plan is not None and plan.amp_value_parameters and issubclass(rule_cls, AmpRule):
        return True
    if planned_work(rule_cls, plan):
        return True
    return rule_cls.has_work(source)


def _named_by_code(rules: Sequence[Type[Rule]], source: bytes, plan: Optional[FilePlan]) -> List[Type[Rule]]:
    """``rules`` less those whose ``CODE_WORDS`` the file's code does not name (decided on
    the text before any rule ran: rules remove apex names, they never add one)."""
    if plan is not None:
        return list(rules)
    words = frozenset(w for r in rules for w in r.CODE_WORDS)
    named = words_in_code(source, words) if words else None
    if named is None:
        return list(rules)
    return [r for r in rules if not r.CODE_WORDS or not named.isdisjoint(r.CODE_WORDS)]


def _error_finding(path: str, code: str, message: str, exc: Optional[SyntaxError]) -> Finding:
    line = (exc.lineno or 1) if exc is not None else 1
    col = (exc.offset or 1) if exc is not None else 1
    return Finding(path=path, line=line, col=max(col, 1), code=code, message=message)


def _left_unchanged(path: str, source: bytes, findings: List[Finding], what: str) -> MigrationResult:
    """The result when a rule failed: the file keeps its bytes, the open sites found so far
    are still reported, and an internal-error finding says which rule did what."""
    return MigrationResult(
        path,
        source,
        source,
        [f for f in findings if not f.fixed],
        internal_error=_error_finding(
            path, INTERNAL_ERROR, f"internal error, file left unchanged: {what}", None
        ),
    )


def _parse_failure(source: bytes, path: str, exc: Exception) -> Finding:
    """A finding that points at the real error: CPython's parser gives the exact position
    and a better message than LibCST's native parser (which reports 1:1)."""
    if isinstance(exc, cst.ParserSyntaxError):
        py_error = compile_error(source, path)
        if py_error is not None and py_error.lineno:
            hint = parse_hint(source, py_error.lineno)
            return _error_finding(
                path,
                PARSE_ERROR,
                f"could not parse, file left unchanged: {py_error.msg}" + (f"; {hint}" if hint else ""),
                py_error,
            )
        match = _LIBCST_POSITION.search(str(exc))
        line, col = (int(match[1]), int(match[2])) if match else (exc.editor_line, exc.editor_column)
        first_line = exc.message.splitlines()[0] if exc.message else "syntax error"
        return Finding(path, line, max(col, 1), PARSE_ERROR, f"could not parse, file left unchanged: {first_line}")
    # LibCST raises a plain SyntaxError for encoding problems (bad cookie, invalid bytes)
    return Finding(path, 1, 1, UNDECODABLE, f"could not decode, file left unchanged: {exc}")


def _not_reproduced(path: str, source: bytes) -> MigrationResult:
    return MigrationResult(
        path,
        source,
        source,
        internal_error=Finding(
            path,
            1,
            1,
            INTERNAL_ERROR,
            "internal error, file left unchanged: LibCST does not reproduce this "
            "file's bytes exactly, so no rewrite could keep them",
        ),
    )


class RuleCrashed(Exception):
    """A rule raised; carries the rule so the finding can name its codes."""

    def __init__(self, rule: Type[Rule], error: BaseException) -> None:
        super().__init__(str(error))
        self.rule = rule
        self.error = error


_HOOKS_OF_CLASS: Dict[type, frozenset] = {}


def _visitor_hooks(visitor: BatchableCSTVisitor) -> frozenset:
    """The names LibCST's ``get_visitors`` gives for ``visitor``, learnt once per class
    (LibCST inspects every attribute of the instance on each call: 4 ms, twice per rule).
    An instance holding a callable of its own is asked directly."""
    if any(callable(value) for value in vars(visitor).values()):
        return frozenset(visitor.get_visitors())
    cls = type(visitor)
    hooks = _HOOKS_OF_CLASS.get(cls)
    if hooks is None:
        hooks = _HOOKS_OF_CLASS[cls] = frozenset(visitor.get_visitors())
    return hooks


class LeanMetadataWrapper(MetadataWrapper):
    """LibCST's wrapper less its wasted walks: after computing a provider that is not
    batchable (positions, parents, the qualified names), LibCST's resolver still walks the
    whole tree with an empty batch of visitors; and the scope and expression-context
    providers do all their work in ``visit_Module`` (each runs a visitor of its own), after
    which the batched walk goes on over every node with nothing to call.  Both are skipped,
    and both come from cheaper walks of ours (``rules._metadata``).  Those two are resolved
    on first read (``_Deferred``)."""

    _resolving_deferred = False

    def visit_batched(
        self,
        visitors: Iterable[BatchableCSTVisitor],
        before_visit: Optional[Callable[[cst.CSTNode], None]] = None,
        after_leave: Optional[Callable[[cst.CSTNode], None]] = None,
    ) -> cst.CSTNode:
        visitors = list(visitors)
        if before_visit is None and after_leave is None:
            if not visitors:
                return self.module
            if all(_visitor_hooks(v) == {"visit_Module"} for v in visitors):
                with ExitStack() as stack:
                    for visitor in visitors:
                        stack.enter_context(visitor.resolve(self))
                    for visitor in visitors:
                        if type(visitor) is ExpressionContextProvider:
                            visitor._computed.update(expression_contexts(self.module))
                        elif type(visitor) is ScopeProvider:
                            resolve_scopes(visitor, self.module)
                        else:
                            visitor.visit_Module(self.module)  # type: ignore[attr-defined]
                return self.module
        return super().visit_batched(visitors, before_visit, after_leave)

    def resolve_many(self, providers: Collection[Any]) -> Mapping[Any, Mapping[cst.CSTNode, object]]:
        if not self._resolving_deferred:
            metadata = self._metadata
            for provider in _DEFERRED:
                if provider not in metadata:
                    metadata[provider] = _Deferred(self, provider)
        return super().resolve_many(providers)

    def release(self) -> None:
        """Drop the metadata computed for this tree (the engine is done with it): the maps of
        its nodes are freed at once, not when the collector finds the reference cycles that
        still hold the wrapper (a rule instance keeps it, a deferred map points back to it)."""
        self._metadata.clear()

    def resolve_deferred(self, provider: type) -> Mapping[cst.CSTNode, Any]:
        """Resolve ``provider`` (one of ``_DEFERRED``) for real, and what it depends on."""
        metadata = self._metadata
        if not isinstance(metadata.get(provider), _Deferred):
            return metadata[provider]
        for deferred in _DEFERRED:
            if isinstance(metadata.get(deferred), _Deferred):
                del metadata[deferred]
        self._resolving_deferred = True
        try:
            return super().resolve_many([provider])[provider]
        finally:
            self._resolving_deferred = False


class _Deferred(Mapping[cst.CSTNode, Any]):
    """A provider's metadata that ``LeanMetadataWrapper`` resolves on the first read."""

    def __init__(self, wrapper: "LeanMetadataWrapper", provider: type) -> None:
        self._wrapper = wrapper
        self._provider = provider
        self._real: Optional[Mapping[cst.CSTNode, Any]] = None

    def _resolved(self) -> Mapping[cst.CSTNode, Any]:
        real = self._real
        if real is None:
            real = self._real = self._wrapper.resolve_deferred(self._provider)
        return real

    def __getitem__(self, node: cst.CSTNode) -> Any:
        return self._resolved()[node]

    def get(self, node: cst.CSTNode, default: Any = None) -> Any:
        return self._resolved().get(node, default)

    def __contains__(self, node: object) -> bool:
        return node in self._resolved()

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())


#: resolved only when a rule first reads them: a rule that has nothing to ask on a text
#: (its plan found no site) does not pay for a scope analysis of the whole file
_DEFERRED = (ScopeProvider, ExpressionContextProvider)


class _SharedMetadata:
    """Mixed into each rule class: when the rule asks for the metadata of the engine's
    current tree, it gets the engine's shared wrapper, so scopes and qualified names are
    resolved once per distinct text instead of once per rule (LibCST's default deep-clones
    the module and resolves everything again for every rule: the dominant cost).  Any other
    tree (a rule's second pass) takes LibCST's normal path.  Rules keep their own
    ``transform_module``; only where the metadata comes from changes."""

    _shared_wrapper: Optional[MetadataWrapper] = None
    #: whether a later rule of the group will resolve the scopes of the shared tree
    _full_scopes_ahead = False

    def _instantiate_and_run(self, transform: Type[Codemod], tree: cst.Module) -> cst.Module:
        # LibCST runs AddImportsVisitor (two full passes over the tree) whenever a rule asked
        # for an import, even when the file already has it (most rules ask for ``torch``);
        # when it has not, the same edits are made on the top-level statements alone
        context = self.context  # type: ignore[attr-defined]
        if transform is AddImportsVisitor:
            if imports_present(context, tree):
                return tree
            added = add_imports(context, tree)
            if added is not None:
                return added
        if transform is RemoveImportsVisitor:
            removed = remove_imports_without_scopes(context, tree)
            if removed is not None:
                return removed
        return super()._instantiate_and_run(transform, tree)  # type: ignore[misc]

    @contextmanager
    def _handle_metadata_reference(self, module: cst.Module) -> Iterator[cst.Module]:
        shared = self._shared_wrapper
        # any other tree gets a copy and a wrapper of its own, as LibCST does by default
        wrapper = shared if shared is not None and module is shared.module else LeanMetadataWrapper(module)
        rule: Any = self  # a Codemod at run time (the mixin sits in front of the rule class)
        old = rule.context.wrapper
        # a rule that would resolve its own scopes on a smaller module takes the shared ones
        # where a later rule resolves those anyway (``_full_scopes_ahead``)
        source = wrapper.module if self._full_scopes_ahead else rule.metadata_module(wrapper.module)
        metadata = wrapper if source is wrapper.module else LeanMetadataWrapper(source, unsafe_skip_copy=True)
        with rule.resolve(metadata):
            rule.context = replace(rule.context, wrapper=metadata)
            rule._positions_wrapper = wrapper if metadata is not wrapper else None
            try:
                yield wrapper.module
            finally:
                rule.context = replace(rule.context, wrapper=old)
                rule._positions_wrapper = None
                for own in (wrapper, metadata):
                    if own is not shared:  # the rule's own (the engine releases the shared one)
                        own.release()


_SHARED_CLASSES: Dict[Type[Rule], Type[Rule]] = {}


def _shared(rule_cls: Type[Rule]) -> Type[Rule]:
    cls = _SHARED_CLASSES.get(rule_cls)
    if cls is None:
        cls = type(rule_cls.__name__, (_SharedMetadata, rule_cls), {"__doc__": rule_cls.__doc__})
        cls.__module__ = rule_cls.__module__
        _SHARED_CLASSES[rule_cls] = cls
    return cls


def _run_rules(
    module: cst.Module,
    source: bytes,
    path: str,
    settings: Settings,
    rules: Sequence[Type[Rule]],
    findings: List[Finding],
    plan: Optional[FilePlan] = None,
    read: Optional[bytes] = None,
    statement_texts: Optional[StatementTexts] = None,
) -> Tuple[bytes, List[Type[Rule]]]:
    """Apply ``rules`` in order, skipping those whose triggers the current text lacks;
    returns the new text and the rules that changed it.  ``findings`` gets what the rules
    reported, positioned in ``read`` (the file as read, when ``source`` is a normalised
    text of it) or ``source`` (each rule saw the text the previous ones left).
    ``statement_texts``: what is known already of ``module``'s statements' printing.

    The rules of one of ``SAME_TEXT_GROUPS`` run on the same text, their outputs merged
    (``tree_merge``): one text and one metadata resolution for all of them.  Where a rule
    changed a part of the file that another one of them changed already, what it did is
    undone (its findings, the file state) and it runs again on the text the others left."""
    changed_by: List[Type[Rule]] = []
    texts = [source] if read is None else [read, source]
    #: the index in ``texts`` of the text each finding was reported on
    versions: List[int] = []
    wrapper = LeanMetadataWrapper(module, unsafe_skip_copy=True)  # fresh from the parser
    remember_code(module, source)
    state: dict = {}  # shared by the rules of this file (FILE_STATE_KEY)
    if statement_texts is None:
        statement_texts = StatementTexts()
    #: the rules' merged output of ``wrapper.module`` not yet made the file's text, its
    #: text once printed, its group and the rules that made it
    pending: Optional[cst.Module] = None
    pending_text: Optional[bytes] = None
    pending_group: Optional[int] = None
    pending_rules: List[Type[Rule]] = []

    def current_text() -> bytes:
        """The text the next rule outside the pending group would see."""
        nonlocal pending_text
        if pending is None:
            return texts[-1]
        if pending_text is None:
            pending_text = module_bytes(pending)
        return pending_text

    def settle(later: Sequence[Type[Rule]]) -> None:
        """Make the pending output the file's next text (and tree, where a later rule reads it)."""
        nonlocal wrapper, pending, pending_text, pending_group, pending_rules
        if pending is None:
            return
        out, new, ran = pending, current_text(), pending_rules
        pending, pending_text, pending_group, pending_rules = None, None, None, []
        if new == texts[-1]:
            return
        if not _last_with_work(later, new, plan):
            # parsing again is cheaper than deep-cloning and proves the text parses (after
            # the file's last change only the text is read)
            new, tree = next_tree(wrapper.module, texts[-1], out, statement_texts)
            if tree is not wrapper.module:
                wrapper.release()
                wrapper = LeanMetadataWrapper(tree, unsafe_skip_copy=True)
            remember_code(wrapper.module, new)
        statement_texts.note_printed(out)
        texts.append(new)
        changed_by.extend(ran)

    def full_scopes_ahead(rule_cls: Type[Rule]) -> bool:
        """Whether the initialize rule, later in ``rule_cls``'s group, will resolve the
        scopes of the current tree (it has work, and the file names apex.amp)."""
        group = _same_text_group(rule_cls)
        if group is None or rule_cls is InitializeRule or InitializeRule not in SAME_TEXT_GROUPS[group]:
            return False
        if InitializeRule not in rules or not _has_work(InitializeRule, texts[-1], plan):
            return False
        gate = statements_naming(module_code(wrapper.module), wrapper.module, InitializeRule.NAMESPACES)
        return gate is None or bool(gate.kept)

    def run(rule_cls: Type[Rule]) -> Optional[cst.Module]:
        """The rule's output of the current tree; None where it skipped the file."""
        scratch: dict = {FILE_STATE_KEY: state}
        if plan is not None:
            scratch[REPO_PLAN_KEY] = plan
        rule = _shared(rule_cls)(CodemodContext(filename=path, scratch=scratch), settings, findings)
        rule._shared_wrapper = wrapper  # type: ignore[attr-defined]
        rule._full_scopes_ahead = full_scopes_ahead(rule_cls)  # type: ignore[attr-defined]
        try:
            return rule.transform_module(wrapper.module)
        except SkipFile:
            return None
        except Exception as exc:
            raise RuleCrashed(rule_cls, exc) from exc
        finally:
            versions.extend([len(texts) - 1] * (len(findings) - len(versions)))

    try:
        with printing_by_statement(statement_texts):
            for index, rule_cls in enumerate(rules):
                group = _same_text_group(rule_cls)
                joins = pending is not None and group is not None and group == pending_group
                if not _has_work(rule_cls, texts[-1] if joins else current_text(), plan):
                    continue  # (a rule without work leaves a group's text pending)
                if not joins:
                    settle(rules[index:])
                undo = (len(findings), _copied_containers(state)) if joins else None
                read_before = set(state.get(tree_merge.WHOLE_NODE_READS, ()))
                out = run(rule_cls)
                if out is None or out is wrapper.module:
                    continue
                if pending is not None:
                    # a node an earlier rule of the group read whole may not change; one this
                    # rule read whole is finished on what the earlier rules left of it
                    read_whole = {
                        node: None if node in read_before else finish
                        for node, finish in state.get(tree_merge.WHOLE_NODE_READS, {}).items()
                    }
                    merged = tree_merge.merge(wrapper.module, pending, out, read_whole)
                    if merged is None:
                        assert undo is not None  # (a pending text is only joined: ``undo`` is set)
                        del findings[undo[0] :], versions[undo[0] :]
                        state.clear()
                        state.update(undo[1])
                        settle(rules[index:])
                        if not _has_work(rule_cls, texts[-1], plan):
                            continue
                        out = run(rule_cls)
                        if out is None or out is wrapper.module:
                            continue
                    else:
                        out = merged
                pending, pending_text, pending_group = out, None, group
                pending_rules.append(rule_cls)
                if group is None:
                    settle(rules[index + 1 :])
            settle(())
    finally:
        wrapper.release()
        findings[:] = to_original(findings, versions, texts)
    return texts[-1], changed_by


def _same_text_group(rule_cls: Type[Rule]) -> Optional[int]:
    for number, group in enumerate(SAME_TEXT_GROUPS):
        if rule_cls in group:
            return number
    return None


def _copied_containers(value: Any) -> Any:
    """``value`` with its dicts, lists and sets copied at every depth, anything else shared:
    the file state as it was, to put back (its leaves are names, numbers and tree nodes)."""
    if isinstance(value, dict):
        return {key: _copied_containers(item) for key, item in value.items()}
    if isinstance(value, (list, set)):
        return type(value)(_copied_containers(item) for item in value)
    return value


def _last_with_work(later: Sequence[Type[Rule]], text: bytes, plan: Optional[FilePlan]) -> bool:
    """Whether none of the ``later`` rules has work in ``text``: the rule that printed it
    made the file's last change, and the engine compiles the final text anyway."""
    return not any(_has_work(rule_cls, text, plan) for rule_cls in later)


def _codes_of(rules: Sequence[Type[Rule]]) -> str:
    return ", ".join(sorted({c for r in rules for c in r.CODES})) or "none"


def _find_breaking_rule(
    source: bytes,
    path: str,
    settings: Settings,
    rules: Sequence[Type[Rule]],
    changed_by: Sequence[Type[Rule]],
    plan: Optional[FilePlan],
) -> Optional[Type[Rule]]:
    """Re-run growing prefixes of ``rules`` to name the first whose output does not compile
    (only on this failure path, so the normal path compiles once per file)."""
    for index, rule_cls in enumerate(rules):
        if rule_cls not in changed_by:
            continue
        text, _ = _run_rules(trusted_parse.parse_module(source), source, path, settings, rules[: index + 1], [], plan)
        if compile_error(text, path) is not None:
            return rule_cls
    return None


def migrate_source(
    source: bytes,
    path: str,
    settings: Settings,
    rules: Optional[Sequence[Type[Rule]]] = None,
    plan: Optional[FilePlan] = None,
) -> MigrationResult:
    """Run ``rules`` (default: every registered rule enabled by ``settings``) over ``source``;
    ``plan`` is the file's part of the cross-file plan (``repo_plan``), if it has one.

    ``source`` is the file's raw bytes; LibCST detects the encoding (cookie, BOM) and the
    newline style and gives them back unchanged in ``module.bytes``.  A file that does not
    parse comes back unchanged with a ``parse_error`` finding.  The new text is only
    returned when it compiles under the running Python; otherwise the file comes back
    unchanged with an ``internal_error`` finding that names the rule codes involved.
    """
    active = enabled_rules(settings, rules)
    # decided on the bytes, before parsing: most files never need LibCST
    if not any(_has_work(rule_cls, source, plan) for rule_cls in active):
        return MigrationResult(path, source, source)
    given_amp = plan is not None and bool(plan.amp_value_parameters)  # read as apex.amp by the plan
    if not admitted(source) and not given_amp and all(r in _REGISTERED for r in active):
        return MigrationResult(path, source, source)
    read = None
    if settings.target == "native":
        as_apex = shim_inputs.as_apex(source)
        if as_apex is not None:  # a file already on apexcompat.amp: migrated as apex.amp
            read, source = source, as_apex
    named = _named_by_code(active, source, plan)
    if not any(_has_work(rule_cls, source, plan) for rule_cls in named):
        # a trigger only in a comment or a string (a docstring naming apex): nothing to parse
        kept = source if read is None else read
        return MigrationResult(path, kept, kept)
    if read is None and rules is None:
        early = _spelled_first(source, path, settings, named, plan)
        if early is not None:
            return early
    result = _migrate_parsed(source, path, settings, named, plan, read)
    if read is None:
        return result
    result.old = read
    if result.new == source:
        result.new = read
    # the file was on the shim already: that it (still) imports apexcompat.amp is no news
    result.findings = [f for f in result.findings if f.code not in SHIM_RESTORED_CODES]
    return result


def _spelled_first(
    source: bytes, path: str, settings: Settings, named: Sequence[Type[Rule]], plan: Optional[FilePlan]
) -> Optional[MigrationResult]:
    """The result of a file where the deprecated-spellings rule has work, its spellings
    replaced by splices at ``ast`` positions before LibCST would parse the file
    (``spelling_splices``), then the other rules run on the spliced text where any has work
    there (most files of the deprecated API alone need no LibCST tree at all); None where the
    splices do not take the file."""
    if TorchAmpSpellingsRule not in named or os.environ.get(RULES_ENV) or not _has_work(TorchAmpSpellingsRule, source):
        return None
    made = spliced(source, path, settings)
    if made is None:
        return None
    spelled, spelling_findings = made
    others = [r for r in named if r is not TorchAmpSpellingsRule]
    if not any(_has_work(rule_cls, spelled, plan) for rule_cls in others):
        return MigrationResult(path, source, spelled, sorted(set(spelling_findings)))
    result = _migrate_parsed(spelled, path, settings, others, plan, source)
    result.old = source
    if result.internal_error is not None or result.parse_error is not None:
        result.new = source
    else:
        result.findings = sorted(set(result.findings) | set(spelling_findings))
    return result


#: the imports rule's findings for moving apex.amp to apexcompat.amp (``shim_inputs``)
SHIM_RESTORED_CODES = frozenset({"APX102"})


def _migrate_parsed(
    source: bytes,
    path: str,
    settings: Settings,
    active: Sequence[Type[Rule]],
    plan: Optional[FilePlan],
    read: Optional[bytes],
) -> MigrationResult:
    try:
        module = kept_for_the_file(lambda: trusted_parse.parse_module(source))
    except (cst.ParserSyntaxError, SyntaxError, UnicodeError, LookupError) as exc:
        return MigrationResult(path, source, source, parse_error=_parse_failure(source, path, exc))
    # LibCST drops the final newline of a file whose lines end in a lone "\r" (old Mac
    # style); put back a lost suffix, and refuse any other round-trip difference.  Printed
    # before the rules where a "\r" is in the file, else only once a rule changed the file
    # (a file left as read keeps its bytes whatever the printing would give)
    statement_texts = StatementTexts()
    roundtrip: Optional[bytes] = None
    if b"\r" in source:
        roundtrip = print_by_statement(module, statement_texts).encode(module.encoding)
        if not source.startswith(roundtrip):
            return _not_reproduced(path, source)
    else:
        # the statements the rules leave as read keep the file's text, not printed
        statement_texts.read_source(module, source.decode(module.encoding))
    findings: List[Finding] = []
    try:
        new, ran = _run_rules(module, source, path, settings, active, findings, plan, read, statement_texts)
    except RuleCrashed as crash:  # a bug in a rule must not stop the whole run
        failure = crash.error
        frame = traceback.extract_tb(failure.__traceback__)[-1]
        return _left_unchanged(
            path,
            source,
            findings,
            f"rule {crash.rule.__name__} raised {type(failure).__name__}: {failure} "
            f"(at {os.path.basename(frame.filename)}:{frame.lineno}; "
            f"codes involved: {_codes_of([crash.rule])})",
        )
    new, merged = tidy_emptied_ifs(module, source, new)
    findings = merged_sites(findings, merged)
    if roundtrip is None:
        if new == source:
            return MigrationResult(path, source, new, sorted(set(findings)))
        if not statement_texts.reprints_replaced(module):
            return _not_reproduced(path, source)
        roundtrip = (statement_texts.code(module) or module.code).encode(module.encoding)
        if not source.startswith(roundtrip):
            return _not_reproduced(path, source)
    lost_suffix = source[len(roundtrip) :]
    if lost_suffix and new != roundtrip and not new.endswith(lost_suffix):
        new += lost_suffix
    elif new == roundtrip:
        new = source
    if new != source:
        error = compile_error(new, path)
        if error is not None:
            original_error = compile_error(source, path)
            if original_error is not None:
                return MigrationResult(
                    path,
                    source,
                    source,
                    parse_error=_error_finding(
                        path,
                        PARSE_ERROR,
                        "does not compile under Python "
                        f"{sys.version_info[0]}.{sys.version_info[1]}, file left unchanged: "
                        f"{original_error.msg}",
                        original_error,
                    ),
                )
            culprit = _find_breaking_rule(source, path, settings, active, ran, plan)
            involved = _codes_of([culprit]) if culprit is not None else _codes_of(ran)
            name = f"rule {culprit.__name__} " if culprit is not None else "the rules "
            return _left_unchanged(
                path,
                source,
                findings,
                f"{name}produced code that does not compile "
                f"({error.msg} at line {error.lineno}; codes involved: {involved})",
            )
    return MigrationResult(path, source, new, sorted(set(findings)))
