"""An apex class imported in one branch of an ``if``, its torch twin in another.

``if fp16: from apex.parallel import DistributedDataParallel; model = DistributedDataParallel(model)``
``else: from torch.nn.parallel import DistributedDataParallel; model = DistributedDataParallel(model, ...)``
(Hugging Face's distillation ``Distiller``).  Once the DDP rule has rewritten the call on
apex's branch, the name is read only in the other branch, after that branch's own import of
torch's class: apex's binding reaches none of those reads, so its import can go.  Scope
analysis cannot tell, as it gives every read of a function's name to every binding of it.
Proven only when every read of the name left in the module is in a sibling branch of the same
``if`` chain, in the same function, after a statement of that branch importing the twin.
"""

from __future__ import annotations

from typing import Callable, List, Optional

import libcst as cst
from libcst.helpers import get_full_name_for_node

from ._apex_path import TORCH_TWINS
from ._tree import walk, walk_of

Parent = Callable[[cst.CSTNode], Optional[cst.CSTNode]]
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def only_reads_behind_twin_import(module: cst.Module, parent: Parent, binding: str, target: str) -> bool:
    """Every read of ``binding`` (bound by one ``from ... import`` of apex's ``target``) runs
    in a sibling branch of the ``if`` whose branch holds that import, after the branch's own
    import of torch's twin: the apex import binds nothing any read sees."""
    twin = TORCH_TWINS.get(target)
    imports = [node for node in walk_of(module, cst.ImportFrom) if _binds(node, binding)]
    apex = [node for node in imports if _binds(node, binding) == target]
    if twin is None or len(apex) != 1:
        return False
    branches = _if_chain_branches(parent, apex[0])
    if branches is None:
        return False
    own, chain, scope = branches
    skip = {id(n) for imp in imports for n in walk(imp)}
    for node in walk(module):  # ``x.binding`` and ``f(binding=...)`` read no such name
        if isinstance(node, cst.Attribute):
            skip.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skip.add(id(node.keyword))
    reads = [n for n in walk(module) if isinstance(n, cst.Name) and n.value == binding and id(n) not in skip]
    for read in reads:
        found = _branch_statement(parent, read, chain)
        if found is None or found[0] is own or _scope_of(parent, read) is not scope:
            return False
        block, index = found
        if not any(_binds(imp, binding) == twin for stmt in block.body[:index] for imp in _imports_of(stmt)):
            return False
    return True


def _binds(node: cst.ImportFrom, binding: str) -> Optional[str]:
    """The dotted name ``node`` binds to ``binding`` (``from a.b import C as binding``)."""
    if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
        return None
    base = get_full_name_for_node(node.module)
    for alias in node.names:
        name = get_full_name_for_node(alias.name) or ""
        bound = get_full_name_for_node(alias.asname.name) if alias.asname else name
        if bound == binding:
            return f"{base}.{name}"
    return None


def _imports_of(stmt: cst.CSTNode) -> List[cst.ImportFrom]:
    return [small for small in getattr(stmt, "body", ()) if isinstance(small, cst.ImportFrom)]


def _if_chain_branches(parent: Parent, imp: cst.ImportFrom):  # type: ignore[no-untyped-def]
    """(the import's branch block, every branch block of its ``if``/``elif``/``else`` chain,
    the enclosing scope) when the import is a statement of one such branch; else None."""
    stmt = parent(imp)
    block = parent(stmt) if isinstance(stmt, cst.SimpleStatementLine) else None
    owner = parent(block) if isinstance(block, cst.IndentedBlock) else None
    if isinstance(owner, cst.Else):
        owner = parent(owner)
    if not isinstance(owner, cst.If):
        return None
    top = owner
    while isinstance(parent(top), cst.If) and parent(top).orelse is top:  # type: ignore[union-attr]
        top = parent(top)  # type: ignore[assignment]
    chain: List[cst.IndentedBlock] = []
    current: Optional[cst.CSTNode] = top
    while isinstance(current, cst.If):
        if not isinstance(current.body, cst.IndentedBlock):
            return None
        chain.append(current.body)
        current = current.orelse
    if isinstance(current, cst.Else):
        if not isinstance(current.body, cst.IndentedBlock):
            return None
        chain.append(current.body)
    return block, chain, _scope_of(parent, top)


def _branch_statement(parent: Parent, node: cst.CSTNode, chain: List[cst.IndentedBlock]):  # type: ignore[no-untyped-def]
    """(the branch block of ``chain`` holding ``node``, the index of its statement there)."""
    child, current = node, parent(node)
    while current is not None:
        if isinstance(current, cst.IndentedBlock) and any(current is block for block in chain):
            return current, next(i for i, stmt in enumerate(current.body) if stmt is child)
        child, current = current, parent(current)
    return None


def _scope_of(parent: Parent, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    current = parent(node)
    while current is not None and not isinstance(current, _SCOPES):
        current = parent(current)
    return current
