"""Fast tree navigation for the rules: a node's children in source order and a pre-order
walk.

LibCST's ``CSTNode.children`` rebuilds the node through ``_visit_and_replace_children``
(a copy of every child, validated) just to list them, and ``ParentNodeProvider`` calls it
once per node: together about a quarter of a file's migration time.  Here listing children
is a read of the fields LibCST itself visits, in its order (``_child_fields``).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from functools import lru_cache
from itertools import repeat
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, TypeVar

import libcst as cst
from libcst import MaybeSentinel

from ._printing import printed
from ._child_fields import (
    BODY,
    NODE_OR_SEQUENCE,
    OPTIONAL,
    REQUIRED,
    SENTINEL,
    SEQUENCE,
    SEQUENCE_OR_NONE,
    child_fields,
)

if TYPE_CHECKING:
    from ..source_slices import StatementSlice

_T = TypeVar("_T")

#: node class -> a function listing its children (None: LibCST lists them)
_READERS: Dict[type, Optional[Callable[[Any], List[cst.CSTNode]]]] = {}

#: how a field visited the ``_child_fields`` way adds its value to the children: the lines of
#: a generated reader (``{f}`` the field); what LibCST's visit of that kind skips, it skips
_ADD_FIELD = {
    REQUIRED: ("found.append(node.{f})",),
    OPTIONAL: ("value = node.{f}", "if value is not None and value is not DEFAULT: found.append(value)"),
    SENTINEL: ("value = node.{f}", "if value is not None and value is not DEFAULT: found.append(value)"),
    SEQUENCE: ("found.extend(node.{f})",),
    BODY: ("found.extend(node.{f})",),
    SEQUENCE_OR_NONE: ("value = node.{f}", "if value is not None: found.extend(value)"),
    NODE_OR_SEQUENCE: (
        "value = node.{f}",
        "if isinstance(value, CSTNode): found.append(value)",
        "else: found.extend(value)",
    ),
}


def _reader(kind: type) -> Optional[Callable[[Any], List[cst.CSTNode]]]:
    """A function of one straight-line body per node class (a loop over the fields that
    tested each value's class cost more than the walks using it): each visited field's
    value, or its elements, in LibCST's order, in a new list."""
    fields = child_fields(kind)
    if fields is None:
        return None
    lines = ["def read(node):", "    found = []"]
    for name, how in fields:
        lines.extend("    " + line.format(f=name) for line in _ADD_FIELD[how])
    lines.append("    return found")
    namespace: Dict[str, Any] = {"DEFAULT": MaybeSentinel.DEFAULT, "CSTNode": cst.CSTNode}
    exec("\n".join(lines), namespace)  # noqa: S102 - the text is built from field names only
    return namespace["read"]  # type: ignore[no-any-return]


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """``node.children``: the same nodes in the same (source) order, in a list of its own,
    without copying the node."""
    kind = type(node)
    read = _READERS.get(kind, _UNKNOWN)
    if read is _UNKNOWN:
        read = _READERS[kind] = _reader(kind)
    if read is None:
        return list(node.children)
    return read(node)  # type: ignore[operator]


_UNKNOWN: Any = object()

_last_walks = threading.local()


class _ModuleWalk:
    """A module's nodes in source order, and (built on first use) where each node class
    occurs among them."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.nodes = _module_nodes(module)
        self._positions: Optional[Dict[type, List[int]]] = None
        self._names: Optional[Dict[str, List[cst.Name]]] = None

    def names(self, value: str) -> List[cst.Name]:
        """The ``Name`` nodes spelled ``value``, in source order."""
        by_value = self._names
        if by_value is None:
            by_value = self._names = {}
            for node in self.of(node_classes((cst.Name,))):
                by_value.setdefault(node.value, []).append(node)
        return by_value.get(value, [])

    def of(self, kinds: FrozenSet[type]) -> List[cst.CSTNode]:
        positions = self._positions
        if positions is None:
            positions = self._positions = {}
            for index, node in enumerate(self.nodes):
                positions.setdefault(type(node), []).append(index)
        found = [positions[kind] for kind in kinds if kind in positions]
        if not found:
            return []
        order = found[0] if len(found) == 1 else sorted(i for part in found for i in part)
        nodes = self.nodes
        return [nodes[i] for i in order]


def _module_nodes(module: cst.Module) -> Tuple[cst.CSTNode, ...]:
    """``tuple(_walk(module))``; during a file's run, from each statement's walk, kept."""
    facts = active_statement_texts()
    if facts is None:
        return tuple(_walk(module))
    nodes: List[cst.CSTNode] = [module]
    for line in module.header:
        nodes.extend(_walk(line))
    for statement in module.body:
        nodes.extend(facts.statement_walk(statement).nodes)
    for line in module.footer:
        nodes.extend(_walk(line))
    return tuple(nodes)


class _StatementWalk:
    """A top-level statement's nodes in source order (``_walk``), with where each node's
    subtree ends among them: a walk of any node inside is then a slice (``walk``)."""

    def __init__(self, statement: cst.CSTNode) -> None:
        nodes: List[cst.CSTNode] = []
        up: List[int] = []
        stack: List[Tuple[cst.CSTNode, int]] = [(statement, -1)]
        while stack:
            node, parent = stack.pop()
            here = len(nodes)
            nodes.append(node)
            up.append(parent)
            kids = children(node)  # a list of its own
            if kids:
                kids.reverse()
                stack.extend(zip(kids, repeat(here)))
        sizes = [1] * len(nodes)
        for index in range(len(nodes) - 1, 0, -1):
            sizes[up[index]] += sizes[index]
        self.nodes = tuple(nodes)
        self.sizes = sizes
        #: each node's parent's index among ``nodes`` (-1 for the statement)
        self.up = up


def statement_facts(module: cst.Module, kind: str, compute: Callable[[cst.CSTNode], _T]) -> Optional[List[_T]]:
    """``compute`` of each of ``module``'s statements, in order, kept per statement object
    during a file's run (``printing_by_statement``); None outside one."""
    facts = active_statement_texts()
    if facts is None:
        return None
    return [facts.fact(kind, statement, compute) for statement in module.body]


def _module_walk(module: cst.Module) -> _ModuleWalk:
    walks = getattr(_last_walks, "entries", None)
    if walks is None:
        walks = _last_walks.entries = []
    for entry in walks:
        if entry.module is module:
            return entry
    entry = _ModuleWalk(module)
    walks[:] = [entry] + walks[:1]
    return entry


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself included), in source order.  A whole module's nodes
    are remembered (per thread, for the last two modules), and so is each top-level
    statement's during a file's run (a walk of a node inside one is a slice of it): the
    rules walk the same tree dozens of times, and a walk costs far more than reading a list."""
    if not isinstance(node, cst.Module):
        return iter(_subtree(node))
    return iter(_module_walk(node).nodes)


def _subtree(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    facts = active_statement_texts()
    found = facts.subtree(node) if facts is not None else None
    return found if found is not None else _walk(node)


def walk_of(node: cst.CSTNode, *classes: type) -> Iterable[Any]:
    """The nodes of ``walk(node)`` that are instances of ``classes``, in source order; for a
    whole module read from an index of the remembered walk (a filter of every node through
    ``isinstance`` against LibCST's abstract classes cost more than the scans' own work)."""
    kinds = node_classes(classes)
    if not isinstance(node, cst.Module):
        return (n for n in _subtree(node) if type(n) in kinds)
    return _module_walk(node).of(kinds)


def names_spelled(module: cst.Module, value: str) -> List[cst.Name]:
    """``[n for n in walk_of(module, cst.Name) if n.value == value]``, from an index of the
    remembered walk (a scan per function of a file was a twentieth of an apex file's time)."""
    return _module_walk(module).names(value)


@lru_cache(maxsize=None)
def node_classes(classes: Tuple[type, ...]) -> FrozenSet[type]:
    """``classes`` and every class derived from them."""
    found: Set[type] = set()
    pending = list(classes)
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return frozenset(found)


def is_docstring(stmt: Any) -> bool:
    """Whether ``stmt`` is a string written as a statement of its own (a docstring's shape)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def holds_only(stmt: Any, expr: Any) -> bool:
    """Whether ``stmt`` is a line whose one statement is the expression ``expr`` alone
    (``amp.load_state_dict(x)`` written as a statement of its own)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and stmt.body[0].value is expr
    )


def assignment_targets(node: Any) -> List[Any]:
    """The targets ``node`` itself binds: of an assignment (plain, annotated, augmented,
    ``:=``), a ``for`` loop or comprehension, a ``with ... as``."""
    kind = type(node)
    if kind not in _BINDING_KINDS:  # most nodes: one set lookup, not an abstract-class test each
        return []
    if kind is cst.Assign:
        return [t.target for t in node.targets]
    if kind is cst.WithItem:
        return [node.asname.name] if node.asname is not None else []
    return [node.target]


#: the definitions a walk of one scope's own nodes does not enter
DEFINITIONS = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})

#: the node classes ``assignment_targets`` reads (LibCST's concrete nodes are not subclassed)
_BINDING_KINDS = frozenset(
    {cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.CompFor, cst.WithItem}
)


def enclosing_function(parents: Any, node: Any) -> Any:
    """The innermost function definition holding ``node``, or None (``Any``: callers test it)."""
    cur = parents.get(node)
    while cur is not None and type(cur) is not cst.FunctionDef:
        cur = parents.get(cur)
    return cur


def loop_between(parents: Any, node: Any, outer: Any) -> bool:
    """Whether a ``for`` or ``while`` loop below ``outer`` (not ``outer`` itself) holds ``node``,
    in the parent links ``parents`` (any enclosing loop where ``outer`` is not an ancestor)."""
    cur = parents.get(node)
    while cur is not None and cur is not outer:
        if isinstance(cur, (cst.For, cst.While)):
            return True
        cur = parents.get(cur)
    return False


def inside(parents: Any, node: Any, outer: Any) -> bool:
    """Whether ``outer`` is an ancestor of ``node`` (not ``node`` itself) in the parent
    links ``parents``."""
    cur = parents.get(node)
    while cur is not None:
        if cur is outer:
            return True
        cur = parents.get(cur)
    return False


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(children(cur)))


class StatementTexts:
    """What is known of each top-level statement object during one file's run: its printed
    text, its nodes' offsets (``_node_ranges``) and other facts (``fact``: its walk, parent
    links, expression contexts...).  The nodes are kept, so that their ids stay theirs.  A
    tree a rule returns shares most of its statements with the tree it was given, and
    working any of these out again for the whole tree cost as much as a walk or more."""

    def __init__(self) -> None:
        self._texts: Dict[Tuple[int, str, str], Tuple[cst.CSTNode, str]] = {}
        self._facts: Dict[Tuple[str, int], Tuple[cst.CSTNode, Any]] = {}
        #: id of a node walked as part of a statement -> that statement's walk, its index
        self._walked: Dict[int, Tuple[_StatementWalk, int]] = {}
        #: id of a statement of the tree as parsed -> it, as the file has it (``read_source``)
        self._read: Dict[int, Tuple[cst.CSTNode, "StatementSlice"]] = {}
        #: ids of those statements some printed tree no longer holds (``note_printed``)
        self._replaced: Set[int] = set()
        #: ids of those statements printed all the same -> whether the printing gave their text
        self._reprinted: Dict[int, bool] = {}

    def statement_walk(self, statement: cst.CSTNode) -> "_StatementWalk":
        """The walk of a top-level ``statement``, worked out once; a later ``subtree`` of any
        node inside it is a slice of it."""
        key = ("walk", id(statement))
        known = self._facts.get(key)
        if known is None:
            found = _StatementWalk(statement)
            known = self._facts[key] = (statement, found)
            # a node shared with an earlier tree's statement is looked up in the latest walk
            # holding it (the tree being worked on)
            walked = self._walked
            for index, node in enumerate(found.nodes):
                walked[id(node)] = (found, index)
        return known[1]  # type: ignore[no-any-return]

    def subtree(self, node: cst.CSTNode) -> Optional[Sequence[cst.CSTNode]]:
        """``node`` and every node below it in source order, when a statement walk holds
        ``node``; else None."""
        known = self._walk_holding(node)
        if known is None:
            return None
        found, index = known
        return found.nodes[index : index + found.sizes[index]]

    def _walk_holding(self, node: cst.CSTNode) -> Optional[Tuple["_StatementWalk", int]]:
        """The latest statement walk holding ``node`` and its index there; None where none does."""
        known = self._walked.get(id(node))
        return known if known is not None and known[0].nodes[known[1]] is node else None

    def fact(self, kind: str, statement: cst.CSTNode, compute: Callable[[cst.CSTNode], _T]) -> _T:
        """``compute(statement)``, worked out once per statement object and ``kind``
        (a statement object is the same subtree wherever it occurs: nodes do not change)."""
        key = (kind, id(statement))
        known = self._facts.get(key)
        if known is None:
            known = self._facts[key] = (statement, compute(statement))
        return known[1]  # type: ignore[no-any-return]

    def knows(self, kind: str, statement: cst.CSTNode) -> bool:
        """Whether ``fact(kind, statement, ...)`` is worked out already."""
        return (kind, id(statement)) in self._facts

    def read_source(self, module: cst.Module, text: str) -> bool:
        """Take each statement's text of ``module`` (fresh from the parser) from ``text``, the
        text it was parsed from (``source_slices``); whether that could be done."""
        from ..source_slices import statement_slices

        slices = statement_slices(module, text)
        if slices is None:
            return False
        verify = os.environ.get(VERIFY_ENV)
        for statement, part in zip(module.body, slices):
            if verify and printed(module, statement) != part.text:
                raise AssertionError(f"a statement's text cut from the file differs from its printing: {part!r}")
            self.learn(module, statement, part.text)
            self._read[id(statement)] = (statement, part)
        return True

    def as_read(self, statement: cst.CSTNode) -> Optional["StatementSlice"]:
        """The file's text of a top-level ``statement`` read from it (``read_source``), its
        line and its first stdlib statement; None for any other."""
        known = self._read.get(id(statement))
        return known[1] if known is not None and known[0] is statement else None

    def chain_to(self, node: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
        """The nodes from the top-level statement holding ``node`` down to ``node``, as a
        statement walk holds them; None where none does."""
        known = self._walk_holding(node)
        if known is None:
            return None
        walked, index = known
        chain = []
        while index >= 0:
            chain.append(walked.nodes[index])
            index = walked.up[index]
        chain.reverse()
        return chain

    def note_printed(self, tree: cst.Module) -> None:
        """``tree`` is printed as a text of the file: the statements read from the file that it
        no longer holds are checked by ``reprints_replaced``."""
        if self._read:
            held = {id(statement) for statement in tree.body}
            self._replaced.update(key for key in self._read if key not in held)

    def reprints_replaced(self, module: cst.Module) -> bool:
        """Whether LibCST prints each statement read from the file that a printed tree replaced
        as the file has it (the rest of such a text was copied from the file, not printed)."""
        for key in self._replaced:
            same = self._reprinted.get(key)
            if same is None:
                statement, part = self._read[key]
                same = printed(module, statement) == part.text
            if not same:
                return False
        return True

    def top_statement(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The top-level statement whose walk holds ``node``; None where no walk holds it."""
        known = self._walk_holding(node)
        return known[0].nodes[0] if known is not None else None

    def learn(self, module: cst.Module, statement: cst.CSTNode, text: str) -> None:
        """Remember ``statement``'s text, printed by someone else (of a statement read from
        the file, whether the printing gave the file's text)."""
        self._texts.setdefault((id(statement), module.default_indent, module.default_newline), (statement, text))
        read = self._read.get(id(statement))
        if read is not None and read[0] is statement:
            self._reprinted[id(statement)] = read[1].text == text

    def known_text(self, module: cst.Module, statement: cst.CSTNode) -> Optional[str]:
        """``statement``'s text where it was printed (or read) already; None where not."""
        known = self._texts.get((id(statement), module.default_indent, module.default_newline))
        return known[1] if known is not None and known[0] is statement else None

    def text(self, module: cst.Module, statement: cst.CSTNode) -> str:
        """``module.code_for_node(statement)``, printed once (``printed``)."""
        key = (id(statement), module.default_indent, module.default_newline)
        known = self._texts.get(key)
        if known is None:
            known = self._texts[key] = (statement, printed(module, statement))
        return known[1]

    def code(self, module: cst.Module) -> Optional[str]:
        """``module.code`` from the statements' texts; None for a module without statements
        or without a final newline (LibCST's printing treats those ends apart)."""
        if not module.body or not module.has_trailing_newline:
            return None
        parts = [printed(module, line) for line in module.header]
        parts.extend(self.text(module, statement) for statement in module.body)
        parts.extend(printed(module, line) for line in module.footer)
        return "".join(parts)


#: set to check every statement-wise parse and position against the whole text (tests)
VERIFY_ENV = "APEXCOMPAT_MIGRATE_VERIFY_REPARSE"

_last_code = threading.local()


@contextmanager
def printing_by_statement(texts: StatementTexts) -> Iterator[None]:
    """While active (on this thread), ``module_code`` prints a tree from ``texts``."""
    _last_code.texts = texts
    try:
        yield
    finally:
        _last_code.texts = None


def active_statement_texts() -> Optional[StatementTexts]:
    """The ``StatementTexts`` of ``printing_by_statement`` on this thread, if any."""
    return getattr(_last_code, "texts", None)


def remember_code(tree: cst.Module, text: bytes) -> None:
    """Tell ``module_code`` the text ``tree`` was just parsed from, so it need not print it
    (not for text holding a carriage return: LibCST may not give a lone one back)."""
    if b"\r" not in text:
        _last_code.tree = tree
        _last_code.code = text.decode(tree.encoding)


def module_bytes(tree: cst.Module) -> bytes:
    """``tree.bytes``, printed through ``module_code`` (so a text already printed is not
    printed again)."""
    return module_code(tree).encode(tree.encoding)


def module_code(tree: cst.Module) -> str:
    """``tree.code``, remembered (per thread) for the last tree: the rules that skip a file
    pass the same object on, and printing a big module costs as much as a walk over it."""
    if getattr(_last_code, "tree", None) is not tree:
        texts = active_statement_texts()
        code = texts.code(tree) if texts is not None else None
        _last_code.tree = tree
        _last_code.code = printed(tree, tree) if code is None else code
    return _last_code.code
