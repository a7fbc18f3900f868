"""The base class of every rule family, and the example records rules carry.

A rule is a LibCST codemod command (see ``libcst.codemod``): it declares the metadata it
needs, returns new nodes from ``leave_*`` methods, and schedules import edits through
``AddImportsVisitor`` / ``RemoveImportsVisitor`` instead of editing imports by hand.  Each
rule module keeps its documentation examples in ``EXAMPLES`` / ``NOOP_EXAMPLES``; the test
suite runs them and the docs page of rule codes is generated from them, so they cannot rot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Dict, List, Optional, Sequence, Set, Tuple, cast

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.metadata import CodeRange, MetadataWrapper

from ..file_facts import OWN_TODO
from ..findings import Finding
from ..settings import Settings
from ._dispatch import FastTransformerDispatch
from ._metadata import QualifiedNameProvider
from ._namespace_gate import Gate, statements_naming
from ._node_ranges import PositionProvider
from ._traverse import transform
from ._tree import module_code

TODO_PREFIX = "# TODO(apexcompat): "


#: in a multi-file example, the line that starts each file (``# file: engine/trainer.py``)
FILE_MARKER = re.compile(r"^# file: (\S+)\n", re.M)


def example_files(text: str) -> List[Tuple[str, str]]:
    """The files of an example's text: ``[("example.py", text)]`` for one file, else one
    ``(name, source)`` per ``# file: NAME`` section (the marker line is not part of it)."""
    parts = FILE_MARKER.split(text)
    if len(parts) == 1:
        return [("example.py", text)]
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts), 2)]


@dataclass(frozen=True)
class Example:
    """A documented case: ``before`` becomes ``after`` (``after is None``: unchanged), under
    ``settings``; ``codes`` are the finding codes expected for it.  A repository example
    holds several files, each opened by a ``# file: NAME`` line (see ``example_files``)."""

    id: str
    before: str
    after: Optional[str] = None
    codes: Sequence[str] = ()
    settings: Settings = Settings()


class Rule(FastTransformerDispatch, CodemodCommand, cst.CSTTransformer):
    """Base class: holds the run's settings and the shared findings list.

    A plain ``CSTTransformer`` rather than LibCST's ``VisitorBasedCodemodCommand``: that one
    is a matcher-decoratable transformer, which pays for matcher bookkeeping on every node
    and inspects every method of the class at each instantiation; no rule uses matcher
    decorators, and the bookkeeping was about a fifth of a file's migration time."""

    #: rule code -> one-line description (every code this rule can report)
    CODES: ClassVar[Dict[str, str]] = {}
    EXAMPLES: ClassVar[List[Example]] = []
    NOOP_EXAMPLES: ClassVar[List[Example]] = []
    #: byte strings of which at least one must occur in a file for this rule to have work;
    #: the walker's prefilter parses only files containing a trigger of an enabled rule
    TRIGGERS: ClassVar[Tuple[bytes, ...]] = ()
    #: when set, the rule has work only in a file whose code (not its comments or
    #: docstrings) names one of these, or that the cross-file plan touches (``file_facts``)
    CODE_WORDS: ClassVar[Tuple[str, ...]] = ()
    #: when set, the dotted namespaces (``apex.amp``) every site of this rule lies in: a file
    #: none of whose statements may refer into them (and without a TODO of ours) gives the
    #: rule no work, decided before LibCST resolves anything (``_namespace_gate``)
    NAMESPACES: ClassVar[Tuple[str, ...]] = ()
    #: positions are not among them: see ``position``
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, context: CodemodContext, settings: Settings, findings: List[Finding]) -> None:
        CodemodCommand.__init__(self, context)
        self.settings = settings
        self.findings = findings

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        # LibCST's traversal would copy every node; an untouched tree comes back as itself
        return cast(cst.Module, transform(tree, self))

    @classmethod
    def has_work(cls, source: bytes) -> bool:
        """Whether the text ``source`` may give this rule work: it holds one of the rule's
        ``TRIGGERS`` (a rule may look closer, from the bytes, before LibCST parses them)."""
        return not cls.TRIGGERS or any(t in source for t in cls.TRIGGERS)

    @classmethod
    def applies_to(cls, settings: Settings) -> bool:
        """Whether any of this rule's codes is enabled under ``settings``."""
        return any(settings.code_enabled(code) for code in cls.CODES)

    #: the wrapper of the tree being transformed, when the metadata comes from a smaller
    #: module (``metadata_module``); positions are always those of the real text
    _positions_wrapper: Optional[MetadataWrapper] = None

    def namespace_gate(self, tree: cst.Module) -> Optional[Gate]:
        """Which top-level statements of ``tree`` may refer into ``NAMESPACES``; None when
        the rule declares none, a TODO comment of ours is in the file (a rule reports those
        again), or it cannot be told."""
        if not self.NAMESPACES:
            return None
        code = module_code(tree)
        if OWN_TODO.decode() in code:
            return None
        return statements_naming(code, tree, self.NAMESPACES)

    def metadata_module(self, module: cst.Module) -> cst.Module:
        """The module whose metadata (scopes, qualified names, parents) this rule reads for
        the nodes it visits: ``module`` itself, or a smaller one holding those very nodes."""
        return module

    def position(self, node: cst.CSTNode) -> CodeRange:
        """Where ``node`` is in the text this rule runs on.  Worked out on first use (once
        per text, shared by the rules; ``_node_ranges``): most rules on most files report
        nothing."""
        wrapper = self._positions_wrapper or self.context.wrapper
        return wrapper.resolve(PositionProvider)[node]  # type: ignore[union-attr]

    def qualified_names(self, node: cst.CSTNode) -> Set[str]:
        """The dotted names ``node`` may refer to, resolved through the file's imports
        (``from apex import amp as A`` makes ``A.initialize`` -> ``apex.amp.initialize``)."""
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def refers_to(self, node: cst.CSTNode, *names: str) -> bool:
        """True if ``node`` resolves to one of the fully qualified ``names``."""
        return not self.qualified_names(node).isdisjoint(names)

    def report(
        self,
        node: cst.CSTNode,
        code: str,
        message: str,
        *,
        fixed: bool = False,
        severity: str = "error",
        about: Tuple[str, ...] = (),
    ) -> None:
        """Record a finding at ``node``'s start position (1-based line, 1-based column);
        ``about``: data for the driver (``Finding.about``)."""
        if code not in self.CODES:
            raise KeyError(f"{type(self).__name__} reports undeclared code {code}")
        if not self.settings.code_enabled(code):
            return
        pos = self.position(node).start
        self.findings.append(
            Finding(
                path=self.context.filename or "<string>",
                line=pos.line,
                col=pos.column + 1,
                code=code,
                message=message,
                fixed=fixed,
                severity=severity,
                about=about,
            )
        )
