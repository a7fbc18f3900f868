"""The metadata providers the rules use instead of LibCST's own, with the same values.

Every rule resolves metadata again whenever the previous rule changed the text, so their
cost is paid up to a dozen times per file.  ``ParentProvider`` builds parent links from
the field reads of ``_tree`` (LibCST's copies every node twice to list children).
``QualifiedNameProvider`` reads the scope map LibCST already computed instead of visiting
the tree again; names are still worked out only when a rule asks for them.
"""

from __future__ import annotations

from functools import partial
from typing import Collection, List, Mapping, Optional, cast

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import BaseMetadataProvider, QualifiedName, Scope, ScopeProvider

from ._tree import children


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

    def _gen_impl(self, module: cst.Module) -> None:
        computed = self._computed
        scopes = cast(Mapping[cst.CSTNode, Optional[Scope]], self.metadata[ScopeProvider])
        for node, scope in scopes.items():
            if scope:
                computed[node] = LazyValue(partial(scope.get_qualified_names_for, node))
