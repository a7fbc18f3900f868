"""What a file binds by its import statements and its top-level definitions, read from its
statements alone.

Following an imported name to its definition (``repo_plan._Definitions.find_at``) through a
file the index left out needs only these facts of that file, unless it star-imports
something: where the name is a top-level def or class of the file the search ends there,
where the file imports it by name the search goes on, else it ends.  Reading them takes one
walk of the statements, where a whole summary (``repo_index.summarise``) walks every
expression of the file several times; the facts are read by the summary's own import
visitors, so both agree.  Pure data from the stdlib ``ast``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from . import stdlib_trees
from .ast_table import STATEMENT_HOLDERS
from .repo_index import ModuleSummary, import_reader

#: the classes of the statements that open a definition's scope
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class ImportHead:
    """The file's ``imports`` and ``star_imports`` as its summary has them, and its
    top-level definitions (``functions`` and ``classes`` of the summary, together)."""

    imports: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    star_imports: Set[str] = field(default_factory=set)
    definitions: Set[str] = field(default_factory=set)


def import_head(path: str, source: bytes) -> Optional[ImportHead]:
    """The import head of the file ``path``, or None where the stdlib parser rejects it (its
    summary is None then too)."""
    tree = stdlib_trees.parse(source)
    if tree is None:
        return None
    summary = ModuleSummary(path, path)
    reader = import_reader(summary)
    definitions: Set[str] = set()
    # (statement, inside a definition): pre-order, in the order of the fields, as the
    # summary's walk meets them (a later import of a name replaces an earlier one)
    stack: List[Tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, ast.Import):
            reader.visit_Import(node)
            continue
        if isinstance(node, ast.ImportFrom):
            reader.visit_ImportFrom(node)
            continue
        if isinstance(node, _DEFINITIONS):
            if not nested:
                definitions.add(node.name)
            nested = True
        children = [
            (child, nested)
            for name in node._fields
            for child in _statements(getattr(node, name, None))
        ]
        stack.extend(reversed(children))
    return ImportHead(summary.imports, summary.star_imports, definitions)


def _statements(value: object) -> List[ast.AST]:
    """The statements (and the handlers and match cases holding statements) in a field's value."""
    if type(value) is not list:
        return []
    return [item for item in value if isinstance(item, STATEMENT_HOLDERS)]
