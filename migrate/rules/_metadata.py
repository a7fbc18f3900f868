"""The metadata providers the rules use instead of LibCST's own, with the same values.

Every rule resolves metadata again whenever the previous rule changed the text, so their
cost is paid up to a dozen times per file.  ``ParentProvider`` builds parent links from
the field reads of ``_tree`` (LibCST's copies every node twice to list children).
``QualifiedNameProvider`` reads the scope map LibCST already computed instead of visiting
the tree again, and works a node's names out only when a rule asks for them.
``expression_contexts`` is LibCST's expression-context metadata (which the scope analysis
depends on) computed in one walk, and ``resolve_scopes`` runs LibCST's scope analysis with
a cheaper dispatch.
"""

from __future__ import annotations

from functools import lru_cache
from typing import (
    TYPE_CHECKING,
    Any,
    Collection,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Mapping,
    Optional,
    Tuple,
    cast,
)

import libcst as cst
from libcst import MaybeSentinel
from libcst.metadata import BaseMetadataProvider, ExpressionContext, QualifiedName, Scope, ScopeProvider

from ._dispatch import FastVisitorDispatch
from ._child_fields import BODY, NODE_OR_SEQUENCE, SEQUENCE, SEQUENCE_OR_NONE
from ._traverse import plans_of
from ._tree import active_statement_texts, children, node_classes, statement_facts

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper


class ParentProvider(BaseMetadataProvider[cst.CSTNode]):
    """Each node's parent (what ``libcst.metadata.ParentNodeProvider`` gives, faster)."""

    def _gen_impl(self, module: cst.Module) -> None:
        computed = self._computed
        per_statement = statement_facts(module, "parents", _statement_parents)
        if per_statement is None:
            computed.update(_parents_under(module))
            return
        # in the whole walk's order (footer, statements last to first, header), so that a
        # node held twice gets the parent that walk gives it
        for child in children(module):
            computed[child] = module
        for line in reversed(module.footer):
            computed.update(_parents_under(line))
        for parents in reversed(per_statement):
            computed.update(parents)
        for line in reversed(module.header):
            computed.update(_parents_under(line))


def _statement_parents(statement: cst.CSTNode) -> Dict[cst.CSTNode, cst.CSTNode]:
    """``_parents_under(statement)`` read off the statement's walk, which the rules take
    anyway (``_tree.walk_of``), instead of a second walk of its own.  A node held at two
    places of the statement gets its parent from ``_parents_under``: which place wins
    there depends on that walk's order."""
    texts = active_statement_texts()
    if texts is None:
        return _parents_under(statement)
    walk = texts.statement_walk(statement)
    nodes, up = walk.nodes, walk.up
    parents = {nodes[index]: nodes[up[index]] for index in range(1, len(nodes))}
    if len(parents) != len(nodes) - 1:
        return _parents_under(statement)
    return parents


def _parents_under(node: cst.CSTNode) -> Dict[cst.CSTNode, cst.CSTNode]:
    computed: Dict[cst.CSTNode, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [node]
    while stack:
        parent = stack.pop()
        kids = children(parent)
        for child in kids:
            computed[child] = parent
        stack.extend(kids)
    return computed


class QualifiedNameProvider(BaseMetadataProvider[Collection[QualifiedName]]):
    """The qualified names a node may refer to, for every node that has a scope (what
    ``libcst.metadata.QualifiedNameProvider`` gives those nodes; read with a default)."""

    METADATA_DEPENDENCIES = (ScopeProvider,)

    def _gen(self, wrapper: "MetadataWrapper") -> Mapping[cst.CSTNode, Collection[QualifiedName]]:
        # LibCST's _gen copies every entry into a new mapping; this one is read-only already
        with self.resolve(wrapper):
            scopes = cast(Mapping[cst.CSTNode, Optional[Scope]], self.metadata[ScopeProvider])
        return _QualifiedNames(scopes)

    def _gen_impl(self, module: cst.Module) -> None:  # pragma: no cover - _gen does the work
        raise NotImplementedError


class _QualifiedNames(Mapping[cst.CSTNode, Collection[QualifiedName]]):
    """Node -> its qualified names, worked out on first read (most nodes are never asked)."""

    def __init__(self, scopes: Mapping[cst.CSTNode, Optional[Scope]]) -> None:
        self._scopes = scopes
        self._known: Dict[cst.CSTNode, Collection[QualifiedName]] = {}

    def __getitem__(self, node: cst.CSTNode) -> Collection[QualifiedName]:
        known = self._known.get(node)
        if known is None:
            scope = self._scopes[node]
            if not scope:
                raise KeyError(node)
            known = self._known[node] = scope.get_qualified_names_for(node)
        return known

    def __contains__(self, node: object) -> bool:
        return bool(self._scopes.get(node))  # type: ignore[call-overload]

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (node for node, scope in self._scopes.items() if scope)

    def __len__(self) -> int:
        return sum(1 for _ in self)


_LOAD, _STORE, _DEL = ExpressionContext.LOAD, ExpressionContext.STORE, ExpressionContext.DEL
#: the nodes that get a context of their own: the one they are reached with
_HAS_CONTEXT = frozenset({cst.Name, cst.Attribute, cst.Subscript, cst.Tuple, cst.List, cst.StarredElement})
#: node class -> the fields the walk goes on with, and the context each gets (None: the
#: node's own); every field not named is not visited (an attribute's name, a definition's
#: type parameters); a class not listed passes its context to all its children
_FIELDS: Dict[type, Tuple[Tuple[str, Optional[ExpressionContext]], ...]] = {
    cst.Name: (),
    cst.Attribute: (("value", _LOAD),),
    cst.Subscript: (("value", _LOAD), ("slice", _LOAD)),
    cst.Assign: (("targets", _STORE), ("value", None)),
    cst.AnnAssign: (("target", _STORE), ("annotation", None), ("value", None)),
    cst.AugAssign: (("target", _STORE), ("value", None)),
    cst.NamedExpr: (("target", _STORE), ("value", None)),
    cst.AsName: (("name", _STORE),),
    cst.CompFor: (("target", _STORE), ("iter", None), ("ifs", None), ("inner_for_in", None)),
    cst.For: (("target", _STORE), ("iter", None), ("body", None), ("orelse", None)),
    cst.Del: (("target", _DEL),),
    cst.ClassDef: (("name", _STORE), ("body", None), ("bases", None), ("keywords", None), ("decorators", None)),
    cst.FunctionDef: (("name", _STORE), ("params", None), ("body", None), ("decorators", None), ("returns", None)),
    cst.Param: (("name", _STORE), ("annotation", None), ("default", None)),
}


def expression_contexts(module: cst.Module) -> Dict[cst.CSTNode, ExpressionContext]:
    """What ``libcst.metadata.ExpressionContextProvider`` computes for ``module`` (the same
    nodes get the same contexts; the scope analysis reads it), in one walk without a
    visitor per target: that provider was about a tenth of a file's migration time.  During
    a file's run each statement's contexts are kept (a statement starts in a load context)."""
    per_statement = statement_facts(module, "contexts", _contexts_under)
    if per_statement is None:
        return _contexts_under(module)
    found: Dict[cst.CSTNode, ExpressionContext] = {}
    for line in reversed(module.footer):  # the whole walk's order, as for parents
        found.update(_contexts_under(line))
    for contexts in reversed(per_statement):
        found.update(contexts)
    for line in reversed(module.header):
        found.update(_contexts_under(line))
    return found


def _contexts_under(top: cst.CSTNode) -> Dict[cst.CSTNode, ExpressionContext]:
    found: Dict[cst.CSTNode, ExpressionContext] = {}
    stack: List[Tuple[Any, ExpressionContext]] = [(top, _LOAD)]
    while stack:
        node, context = stack.pop()
        kind = type(node)
        if kind in _HAS_CONTEXT:
            found[node] = context
        fields = _FIELDS.get(kind)
        if fields is None:
            stack.extend((child, context) for child in children(node))
            continue
        for name, given in fields:
            value = getattr(node, name)
            inner = context if given is None else given
            if isinstance(value, (tuple, list)):
                stack.extend((item, inner) for item in value)
            elif value is not None:
                stack.append((value, inner))
    return found


@lru_cache(maxsize=None)
def _fast_scope_visitor() -> Optional[type]:
    """LibCST's scope visitor with the fast dispatch, and its per-node test for
    assignment-like nodes made a lookup of the node's type (an ``isinstance`` against
    eighteen abstract classes for every node was a twentieth of a file's time); it asks a
    call's qualified names only in a tree that may call a typing helper (``typing_calls``).
    None with a LibCST whose internals differ (its own visitor is used then)."""
    try:
        from libcst.metadata.scope_provider import _ASSIGNMENT_LIKE_NODES, ScopeVisitor
    except ImportError:  # pragma: no cover - depends on the LibCST release
        return None
    assignment_like = node_classes(tuple(_ASSIGNMENT_LIKE_NODES))

    class FastScopeVisitor(FastVisitorDispatch, ScopeVisitor):  # type: ignore[misc,valid-type]
        def on_visit(self, node: cst.CSTNode) -> bool:
            # LibCST's traversal enters here (at the module, and at each part a scope hook
            # visits by itself): the table-driven walk takes the whole subtree, so LibCST
            # copies nothing and calls no more than the ``on_leave`` below
            _record_scopes(node, self, assignment_like)
            return False

        def on_leave(self, original_node: cst.CSTNode) -> None:
            pass  # done by the walk, for every node

        #: whether a call of the tree may be ``typing.cast``, ``NewType`` or ``TypeVar``
        #: (set per tree by ``resolve_scopes``)
        typing_calls = True

        def visit_Call(self, node: cst.Call) -> Optional[bool]:
            if self.typing_calls:
                return ScopeVisitor.visit_Call(self, node)  # type: ignore[no-any-return]
            # what LibCST's hook does for every other call, without resolving the call's
            # qualified names to find out (a tenth of the analysis)
            self._ScopeVisitor__top_level_attribute_stack.append(None)
            self._ScopeVisitor__in_type_hint_stack.append(False)
            return True

    return FastScopeVisitor


#: the names a call is spelled with, or imported under, where the scope analysis takes it for
#: ``typing.cast``, ``typing.NewType`` or ``typing.TypeVar`` (and reads its string arguments
#: as type hints): a tree that holds none of them as a ``Name`` calls none of those
_TYPING_CALL_NAMES = frozenset({"cast", "NewType", "TypeVar"})


def _may_call_typing_helpers(module: cst.Module) -> bool:
    """Whether some ``Name`` of ``module`` is spelled as one of ``_TYPING_CALL_NAMES``
    (known per statement during a file's run; True outside one)."""
    texts = active_statement_texts()
    if texts is None:
        return True
    return any(statement_facts(module, "typing call names", _names_typing_helper) or ())


def _names_typing_helper(statement: cst.CSTNode) -> bool:
    texts = active_statement_texts()
    assert texts is not None  # (asked during a file's run only)
    names = _TYPING_CALL_NAMES
    return any(type(node) is cst.Name and node.value in names for node in texts.statement_walk(statement).nodes)


_SEQUENCES = frozenset({SEQUENCE, BODY, SEQUENCE_OR_NONE})
#: visitor class -> node class -> whether its nodes have no children and no hooks (a
#: whitespace, a comma): recorded in the loop over their parent's fields, without a call
_LEAVES: Dict[type, Dict[type, bool]] = {}


def _record_scopes(top: cst.CSTNode, visitor: Any, assignment_like: FrozenSet[type]) -> None:
    """``top.visit(visitor)`` for LibCST's scope visitor, as its own traversal would make
    it: the ``visit_``/field hooks from the dispatch tables, then on leaving each node what
    its ``on_leave`` does (the node's scope recorded, an assignment-like node counted, the
    ``leave_`` hook)."""
    owner = type(visitor)
    plans = plans_of(owner)
    leaves = _LEAVES.get(owner)
    if leaves is None:
        leaves = _LEAVES[owner] = {}
    computed = visitor.provider._computed

    def is_leaf(kind: type) -> bool:
        known = leaves.get(kind)
        if known is None:
            enter, leave, fields = plans[kind]
            known = leaves[kind] = enter is None and leave is None and fields == () and kind not in assignment_like
        return known

    def one(node: cst.CSTNode) -> None:
        kind = type(node)
        enter, leave, fields = plans[kind]
        if enter is None or enter(visitor, node) is not False:
            if fields is None:
                node._visit_and_replace_children(visitor)
            else:
                for name, how, enter_field, leave_field in fields:
                    value = getattr(node, name)
                    if how == SEQUENCE_OR_NONE and value is None:
                        continue
                    if enter_field is not None:
                        enter_field(visitor, node)
                    if how in _SEQUENCES or (how == NODE_OR_SEQUENCE and not isinstance(value, cst.CSTNode)):
                        for child in value:
                            if is_leaf(type(child)):
                                computed[child] = visitor.scope
                            else:
                                one(child)
                    elif value is not None and value is not MaybeSentinel.DEFAULT:
                        if is_leaf(type(value)):
                            computed[value] = visitor.scope
                        else:
                            one(value)
                    if leave_field is not None:
                        leave_field(visitor, node)
        scope = visitor.scope
        computed[node] = scope
        if kind in assignment_like:
            scope._assignment_count += 1
        if leave is not None:
            leave(visitor, node)

    try:
        one(top)
    finally:
        # ``one`` calls itself through its cell: a cycle that would keep the visitor (the
        # scope map of the whole tree, the tree) alive until the next garbage collection
        del one


def resolve_scopes(provider: ScopeProvider, module: cst.Module) -> None:
    """What ``ScopeProvider.visit_Module`` does, through the fast visitor when it exists."""
    visitor_class = _fast_scope_visitor()
    if visitor_class is None:
        provider.visit_Module(module)
        return
    visitor = visitor_class(provider)
    if hasattr(visitor, "_ScopeVisitor__top_level_attribute_stack") and hasattr(
        visitor, "_ScopeVisitor__in_type_hint_stack"
    ):  # (else another LibCST release: its own hook for every call)
        visitor.typing_calls = _may_call_typing_helpers(module)
    module.visit(visitor)
    visitor.infer_accesses()
