"""The engine's faster analysis gives what LibCST gives: expression contexts, scopes and
qualified names through ``LeanMetadataWrapper``, the visitor dispatch of
``rules._dispatch``, the typed walks of ``rules._tree.walk_of``, and an unedited rule's
output is its input."""

from __future__ import annotations

import gc
import glob
import os
import weakref
from typing import List

import libcst as cst
import pytest
from libcst._metadata_dependent import LazyValue
from libcst.codemod import CodemodContext
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, QualifiedNameProvider, ScopeProvider

import migrate
from migrate.engine import LeanMetadataWrapper, _shared
from migrate.rules._dispatch import FastTransformerDispatch, FastVisitorDispatch
from migrate.rules._metadata import ParentProvider, _fast_scope_visitor, expression_contexts
from migrate.rules._tree import StatementTexts, printing_by_statement, walk, walk_of
from migrate.rules.base import Rule
from migrate.settings import Settings

HERE = os.path.dirname(__file__)
#: the engine and rule modules (real code with every statement form the tool itself uses)
#: and the e2e training scripts: enough to catch a difference, small enough for the suite
CORPUS = sorted(glob.glob(os.path.join(os.path.dirname(migrate.__file__), "rules", "_amp_*.py")))[:6] + sorted(
    glob.glob(os.path.join(HERE, "e2e", "repos", "r1*", "*.py"))
)

#: every binding form the scope analysis distinguishes, in one module
BINDINGS = '''
import os.path as osp, sys
from a.b import (c as d, e)
from . import rel
x: int = 1
y: "List[int]"
a = b = [p, *q] = r
(s, (t, u)), v[w], z.attr = obj
k += 1
del x, v[0], z.attr
for i, (j, *rest) in pairs:
    pass
else:
    pass
async def co(p1, /, p2: int = 3, *args: "T", kw=None, **kwargs) -> "R":
    global g
    nonlocal_free = [n for n in range(3) if (m := n) if m for o in n]
    async with open(p1) as (fh, fh2), other as single:
        async for item in fh:
            yield {key: val for key, val in item}, {e2 for e2 in item}, (g2 for g2 in item)
    try:
        pass
    except (OSError, ValueError) as err:
        raise
    lam = lambda la, *lb, lc=lambda: ld, **le: la + lb
    def inner():
        nonlocal lam
        lam = 1
    return lam
@decorator(arg)
class C(Base, metaclass=Meta):
    attr: int = field(default=0)
    def method(self, other: "C") -> "C":
        return [self.attr for self.attr in other]
match command:
    case [x0, *others] if x0:
        pass
    case {"k": v0, **kw0}:
        pass
    case Point(x=px, y=py) | Other(px, py):
        pass
    case str() as s0:
        pass
print(__file__, undefined_name, osp, d, e, rel)
'''


def _modules() -> List[cst.Module]:
    modules = [cst.parse_module(BINDINGS)]
    for path in CORPUS:
        with open(path, "rb") as fh:
            modules.append(cst.parse_module(fh.read()))
    return modules


MODULES = _modules()


def _names(value):
    return {q.name for q in (value() if isinstance(value, LazyValue) else value)}


def test_expression_contexts_are_libcsts() -> None:
    assert len(MODULES) > 10
    for module in MODULES:
        theirs = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ExpressionContextProvider))
        assert expression_contexts(module) == theirs


def test_scopes_and_qualified_names_through_the_lean_wrapper_are_libcsts() -> None:
    checked = 0
    for module in MODULES:
        theirs = MetadataWrapper(module, unsafe_skip_copy=True)
        ours = LeanMetadataWrapper(module, unsafe_skip_copy=True)
        their_scopes, our_scopes = theirs.resolve(ScopeProvider), ours.resolve(ScopeProvider)
        their_names, our_names = theirs.resolve(QualifiedNameProvider), ours.resolve(QualifiedNameProvider)
        for node in walk(module):
            mine, other = our_scopes.get(node), their_scopes.get(node)
            assert type(mine) is type(other), type(node).__name__
            if mine is None:
                continue
            assert getattr(mine, "node", None) is getattr(other, "node", None)
            assert {(a.name, type(a).__name__, len(a.references)) for a in mine.assignments} == {
                (a.name, type(a).__name__, len(a.references)) for a in other.assignments
            }
            assert _names(our_names.get(node, set())) == _names(their_names.get(node, set()))
            checked += 1
    assert checked > 20_000


#: the calls whose string arguments the scope analysis reads as type hints, spelled the ways
#: it resolves them, one it cannot resolve (a star import) and a module calling none of them
#: (one name spelled alike): each with how many uses of ``Model`` the analysis counts
TYPING_CALLS = [
    ('import typing\nfrom m import Model\nx = typing.cast("Model", y)\nT = typing.TypeVar("T", bound="Model")\n', 2),
    (
        'from typing import cast as c, NewType\nfrom m import Model\nUserId = NewType("UserId", "Model")\n'
        'c("Model", 1)\n',
        2,
    ),
    ('from typing import *\nfrom m import Model\n\ndef f(y):\n    return cast("Model", y)\n', 0),
    ('from m import Model\nimport torch\n\ndef f(y):\n    return torch.autocast("Model")\n', 0),
]


def _accesses(module: cst.Module, wrapper_class: type) -> List[tuple]:
    scopes = wrapper_class(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    found = set()
    for scope in set(scopes.values()):
        if scope is None:
            continue
        for assignment in scope.assignments:
            hints = tuple(sorted(a.is_type_hint for a in assignment.references))
            found.add((assignment.name, len(assignment.references), hints))
    return sorted(found)


@pytest.mark.parametrize("source, model_uses", TYPING_CALLS)
def test_typing_calls_are_read_as_libcst_reads_them_within_a_run(source: str, model_uses: int) -> None:
    """Within a file's run the analysis asks a call's qualified names only where a statement
    names a typing helper; the string arguments of those calls count as uses all the same."""
    module = cst.parse_module(source)
    theirs = _accesses(module, MetadataWrapper)
    with printing_by_statement(StatementTexts()):
        assert _accesses(module, LeanMetadataWrapper) == theirs
    assert [uses for name, uses, _hints in theirs if name == "Model"] == [model_uses]


def test_walk_of_is_walk_filtered_in_source_order() -> None:
    for module in MODULES[:20]:
        for classes in ((cst.Name,), (cst.Name, cst.Attribute), (cst.BaseCompoundStatement,), (cst.Assign, cst.Call)):
            expected = [n for n in walk(module) if isinstance(n, classes)]
            assert list(walk_of(module, *classes)) == expected
            function = next((n for n in walk(module) if isinstance(n, cst.FunctionDef)), None)
            if function is not None:
                assert list(walk_of(function, *classes)) == [n for n in walk(function) if isinstance(n, classes)]


class _Recorder:
    """Records the hooks LibCST calls, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: List[str] = []

    def visit_Call(self, node: cst.Call) -> bool:
        self.calls.append("visit_Call")
        return not isinstance(node.func, cst.Attribute)  # children of method calls skipped

    def visit_Call_args(self, node: cst.Call) -> None:
        self.calls.append("visit_Call_args")

    def leave_Call_func(self, node: cst.Call) -> None:
        self.calls.append("leave_Call_func")

    def visit_Name(self, node: cst.Name) -> None:
        self.calls.append("visit_Name " + node.value)


class _LibcstTransformer(_Recorder, cst.CSTTransformer):
    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        self.calls.append("leave_Name " + original_node.value)
        return updated_node.with_changes(value=updated_node.value.upper())


class _FastTransformer(FastTransformerDispatch, _LibcstTransformer):
    pass


class _LibcstVisitor(_Recorder, cst.CSTVisitor):
    def leave_Name(self, original_node: cst.Name) -> None:
        self.calls.append("leave_Name " + original_node.value)


class _FastVisitor(FastVisitorDispatch, _LibcstVisitor):
    pass


@pytest.mark.parametrize("libcst_class, fast_class", [(_LibcstTransformer, _FastTransformer), (_LibcstVisitor, _FastVisitor)])
def test_fast_dispatch_makes_libcsts_calls(libcst_class, fast_class) -> None:
    module = cst.parse_module("f(a, g.h(b))\nx = y(z)\n")
    theirs, ours = libcst_class(), fast_class()
    their_tree, our_tree = module.visit(theirs), module.visit(ours)
    assert ours.calls == theirs.calls
    assert "visit_Call_args" in ours.calls and "leave_Call_func" in ours.calls
    assert our_tree.code == their_tree.code


class _Renamer(Rule):
    """Renames ``old`` to ``new`` (a rule that edits only where the name occurs)."""

    CODES = {"APX999": "test"}

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value="new") if updated_node.value == "old" else updated_node


@pytest.mark.parametrize("text, edited", [("x = keep(1)\n", False), ("x = old(1)\n", True)])
def test_an_unedited_rule_hands_its_input_back(text: str, edited: bool) -> None:
    module = cst.parse_module(text)
    rule = _shared(_Renamer)(CodemodContext(), Settings(), [])
    rule._shared_wrapper = LeanMetadataWrapper(module, unsafe_skip_copy=True)
    out = rule.transform_module(module)
    assert (out is not module) is edited
    assert out.code == text.replace("old", "new")


def _shares_statements(module: cst.Module) -> cst.Module:
    """``module`` with a new statement in front and its second statement held twice: a tree
    sharing statement objects with the one before it, as a rule's output does."""
    body = list(module.body)
    extra = cst.parse_statement("added = [x for x in range(3)]\n")
    return module.with_changes(body=[extra, *body, *body[1:2]])


@pytest.mark.parametrize("index", [0, 1, 5, 9])
def test_statementwise_walk_parents_and_contexts_are_the_whole_ones(index: int) -> None:
    """During a file's run the walk, parents and expression contexts come from facts kept
    per statement; they equal the whole module's, on the first tree and on one sharing its
    statements (held twice: the whole walk's order decides which parent a node gets)."""
    first = MODULES[index]
    second = _shares_statements(first)
    expected = []
    for module in (first, second):
        walk_before = list(walk(module))
        parents = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentProvider))
        expected.append((walk_before, parents, expression_contexts(module)))
    facts = StatementTexts()
    with printing_by_statement(facts):
        for module, (walked, parents, contexts) in zip((first, second), expected):
            _forget_walks()
            assert list(walk(module)) == walked
            ours = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentProvider))
            assert ours == parents
            assert all(ours[node] is parents[node] for node in parents)
            assert expression_contexts(module) == contexts
    assert len(facts._facts) >= 3 * len(first.body)  # the second tree reused the first's
    assert len(facts._facts) <= 3 * (len(first.body) + 1)


def _forget_walks() -> None:
    from migrate.rules import _tree

    _tree._last_walks.entries = []


def test_a_scope_analysis_leaves_no_cycle_holding_its_visitor() -> None:
    """The scope visitor (which holds every node's scope) is freed when the analysis ends,
    without a garbage collection: the walk's recursive function, a cycle through its own
    cell, kept it (and the tree) until the next one."""
    visitor_class = _fast_scope_visitor()
    assert visitor_class is not None
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        scopes = LeanMetadataWrapper(MODULES[0], unsafe_skip_copy=True).resolve(ScopeProvider)
        assert len(scopes) > 100
        assert not [o for o in gc.get_objects() if type(o) is visitor_class]
    finally:
        if was_enabled:
            gc.enable()


def test_a_node_held_twice_in_one_statement_gets_the_whole_walks_parent() -> None:
    """Parents read off a statement's walk are LibCST-free links of that walk; a node held
    at two places of one statement (a rule's output may reuse a node) gets the parent the
    whole module's walk gives it, not the walk's last place."""
    shared = cst.Name("x")
    statement = cst.SimpleStatementLine([cst.Expr(cst.Tuple([cst.Element(shared), cst.Element(shared)]))])
    module = cst.Module(body=[statement])
    expected = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentProvider))
    with printing_by_statement(StatementTexts()):
        _forget_walks()
        ours = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentProvider))
    assert ours[shared] is expected[shared]
    assert ours == expected and all(ours[node] is expected[node] for node in expected)
