"""The metadata providers the rules use instead of LibCST's own, with the same values.

Every rule resolves metadata again whenever the previous rule changed the text, so their
cost is paid up to a dozen times per file.  ``ParentProvider`` builds parent links from
the field reads of ``_tree`` (LibCST's copies every node twice to list children).
``QualifiedNameProvider`` reads the scope map LibCST already computed instead of visiting
the tree again, and works a node's names out only when a rule asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Dict, Iterator, List, Mapping, Optional, cast

import libcst as cst
from libcst.metadata import BaseMetadataProvider, QualifiedName, Scope, ScopeProvider

from ._tree import children

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper


class ParentProvider(BaseMetadataProvider[cst.CSTNode]):
    """Each node's parent (what ``libcst.metadata.ParentNodeProvider`` gives, faster)."""

    def _gen_impl(self, module: cst.Module) -> None:
        computed = self._computed
        stack: List[cst.CSTNode] = [module]
        while stack:
            parent = stack.pop()
            kids = children(parent)
            for child in kids:
                computed[child] = parent
            stack.extend(kids)


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
