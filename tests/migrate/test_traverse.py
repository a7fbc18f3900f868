"""``rules._traverse.transform`` is LibCST's ``node.visit(transformer)``: the same hook calls
in the same order and the same resulting code, for edits, removals and sequences, on real
modules; untouched subtrees come back as the very same objects."""

from __future__ import annotations

import gc
import inspect
import weakref
from typing import Type, Union

import libcst as cst
import pytest

from test_fast_metadata import MODULES as FAST_METADATA_MODULES
from test_fast_metadata import _Recorder

from migrate.rules._dispatch import FastTransformerDispatch
from migrate.rules._traverse import child_fields, transform
from migrate.rules._tree import walk

SYNTAX = '''
from . import a
from .b import (c as d, e,)
from f import *
x: int = 1; pass
print(f"{x!r:>{width}} {y=}", *args, **kw)
async def g(p, /, q=1, *r, s, **t) -> None:
    global z
    async with h() as (i, j), k:
        pass
    try:
        del x
    except* ValueError as err:
        pass
    return [m for m in n if m] or {o: p for o in q} or (lambda: (yield))
match cmd:
    case [1, *rest] | {"k": _, **more} if rest:
        pass
    case Point(x=0) as pt:
        pass
@deco
class C(Base, metaclass=M):
    """doc"""
    def f(self) -> "C": return self
'''


#: real modules (rule modules, e2e training scripts) and one with the rarer syntax
MODULES = [cst.parse_module(SYNTAX), *FAST_METADATA_MODULES]


class _Recording(_Recorder):
    """Records its hook calls (``_Recorder``'s, a function's) and edits: names upper-cased,
    ``pass`` lines removed, expression statements doubled, keyword-argument commas dropped,
    ``return`` values removed."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.calls.append("visit_FunctionDef " + node.name.value)
        return node.name.value != "skipped"

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        self.calls.append("leave_Name " + original_node.value)
        return (
            updated_node.with_changes(value=updated_node.value.upper())
            if len(updated_node.value) == 1
            else updated_node
        )

    def leave_Pass(self, original_node: cst.Pass, updated_node: cst.Pass) -> Union[cst.Pass, cst.RemovalSentinel]:
        self.calls.append("leave_Pass")
        return cst.RemovalSentinel.REMOVE

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> Union[cst.Expr, cst.FlattenSentinel]:
        return cst.FlattenSentinel([updated_node, updated_node.deep_clone()])

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(comma=cst.MaybeSentinel.DEFAULT) if updated_node.keyword else updated_node

    def leave_Comma(self, original_node: cst.Comma, updated_node: cst.Comma) -> Union[cst.Comma, cst.RemovalSentinel]:
        return cst.RemovalSentinel.REMOVE  # every optional or sentinel comma goes

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        return updated_node.with_changes(value=None)


class _Libcst(_Recording, cst.CSTTransformer):
    pass


class _Fast(FastTransformerDispatch, _Libcst):
    pass


class _Reader(FastTransformerDispatch, cst.CSTTransformer):
    """Visits everything and changes nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen += 1
        return True


def test_every_libcst_node_class_has_known_child_fields() -> None:
    def subclasses(kind: Type[cst.CSTNode]):
        for sub in kind.__subclasses__():
            yield sub
            yield from subclasses(sub)

    concrete = {k for k in subclasses(cst.CSTNode) if not inspect.isabstract(k) and k.__module__.startswith("libcst.")}
    assert len(concrete) > 150
    assert [k.__name__ for k in concrete if child_fields(k) is None] == []
    assert child_fields(cst.Name) == (("lpar", 3), ("rpar", 3))


@pytest.mark.parametrize("index", range(len(MODULES)))
def test_transform_makes_libcsts_calls_and_code(index: int) -> None:
    module = MODULES[index]
    theirs, ours = _Libcst(), _Fast()
    try:
        expected = module.visit(theirs).code
    except TypeError as error:  # a removed comma where LibCST needs one: both must refuse
        with pytest.raises(TypeError):
            transform(module, ours)
        assert "removed" in str(error) or "RemovalSentinel" in str(error)
        return
    assert transform(module, ours).code == expected  # type: ignore[union-attr]
    assert ours.calls == theirs.calls
    assert len(ours.calls) > 20


def test_edits_reach_the_code_and_untouched_subtrees_keep_their_identity() -> None:
    module = cst.parse_module("def f():\n    a = 1\n    pass\n\ndef g():\n    return b\n")
    out = transform(module, _Fast())
    assert isinstance(out, cst.Module)
    assert out.code == module.visit(_Libcst()).code
    assert "pass" not in out.code and "return \n" in out.code
    reader = _Reader()
    assert transform(module, reader) is module
    assert reader.seen == sum(1 for _ in walk(module))


def test_the_walk_leaves_no_cycle_holding_the_visitor() -> None:
    """Once ``transform`` returns, dropping the visitor frees it and what it holds without a
    garbage collection (a cycle through the walk's functions kept them for the next one)."""
    visitor = _Reader()
    gone = weakref.ref(visitor)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        transform(MODULES[0], visitor)
        assert visitor.seen > 100
        del visitor
        assert gone() is None
    finally:
        if was_enabled:
            gc.enable()
