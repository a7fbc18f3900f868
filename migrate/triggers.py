"""The prefilter's byte triggers, known without importing LibCST.

Importing the rules means importing LibCST (about 0.4 s); most runs on a big tree find only
a few files (often none) that mention apex, so the command line reads the rule modules'
``CODES`` and ``TRIGGERS`` literals with ``ast`` instead, and imports the rules only when a
file passes the prefilter.  Whenever the literals cannot be read statically, it falls back
to importing the rules, so the prefilter is never narrower than the rules themselves.
"""

from __future__ import annotations

import ast
import functools
import os
from collections import deque
from typing import Callable, Deque, Iterator, List, Optional, Sequence, Tuple

from .ast_table import STATEMENT_HOLDERS

#: test seam: ``module:Class,...`` replaces the registered rules (see ``engine.default_rules``)
RULES_ENV = "APEXCOMPAT_MIGRATE_RULES"
RULES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")

#: a file is parsed at all only when it mentions one of these (apex, its compiled modules,
#: the apex-derived fp16 helpers copied into many repositories, or torch's deprecated
#: ``torch.cuda.amp`` / ``torch.cpu.amp`` spellings).  The registered rules' own TRIGGERS
#: are broader (``state_dict``, ``RNN``, ``Fused``...): they only choose which rules run on
#: an admitted file, never admit one, so an ordinary torch script is not parsed.
ADMISSION: Tuple[bytes, ...] = (
    b"apex",
    b"amp_C",
    b"cuda.amp",
    b"cpu.amp",
    b"cuda import amp",
    b"cpu import amp",
    b"custom_fwd",
    b"custom_bwd",
    b"fp16util",
    b"fp16_utils",
    b"FP16_Optimizer",
    b"FP16Model",
    b"network_to_half",
    b"LARC",
)


def admitted(source: bytes) -> bool:
    """Whether the registered rules may have work in ``source`` at all."""
    return any(t in source for t in ADMISSION)


#: (codes, triggers) per rule class; empty triggers mean "every file"
RuleTriggers = Tuple[Tuple[str, ...], Tuple[bytes, ...]]


def _class_literals(node: ast.ClassDef) -> Optional[RuleTriggers]:
    codes = triggers = None
    for stmt in node.body:
        targets: List[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        for target in targets:
            if isinstance(target, ast.Name) and target.id in ("CODES", "TRIGGERS"):
                literal = ast.literal_eval(value)  # ValueError when not a literal
                if target.id == "CODES":
                    codes = tuple(literal)
                else:
                    triggers = tuple(literal)
    if codes is None:
        return None  # not a rule (or one inheriting its codes: handled by the caller)
    if triggers is not None and not all(isinstance(t, bytes) for t in triggers):
        raise ValueError("TRIGGERS must be bytes")
    return codes, triggers or ()


def static_rule_triggers(rules_dir: str = RULES_DIR) -> Optional[List[RuleTriggers]]:
    """``(codes, triggers)`` of every class in the rule modules that declares ``CODES``,
    read from the source; ``None`` when some module cannot be read that way."""
    found = _installed_rule_triggers() if rules_dir == RULES_DIR else _read_rule_triggers(rules_dir)
    return None if found is None else list(found)


@functools.lru_cache(maxsize=None)
def _installed_rule_triggers() -> Optional[Tuple[RuleTriggers, ...]]:
    """Those of the installed rules, read once per process (``--select`` asks for the codes,
    then for the triggers)."""
    return _read_rule_triggers(RULES_DIR)


def _read_rule_triggers(rules_dir: str) -> Optional[Tuple[RuleTriggers, ...]]:
    found: List[RuleTriggers] = []
    try:
        names = sorted(
            os.path.join(folder, n) for folder, _, files in os.walk(rules_dir) for n in files if n.endswith(".py")
        )
        for name in names:
            with open(name, "rb") as fh:
                source = fh.read()
            if b"CODES" not in source and b"TRIGGERS" not in source:
                continue  # declares neither: nothing to read (most helper modules)
            for node in _classes(ast.parse(source, name)):
                entry = _class_literals(node)
                if entry is not None:
                    found.append(entry)
                elif _assigns(node, "TRIGGERS"):
                    return None  # triggers without codes: cannot attribute them
    except (OSError, SyntaxError, ValueError):
        return None
    return tuple(found)


def _classes(tree: ast.Module) -> Iterator[ast.ClassDef]:
    """Every class statement of ``tree``, in ``ast.walk``'s order, found by walking the
    statements alone (a class is always one; expressions are most of a module's nodes)."""
    statements: Deque[ast.AST] = deque([tree])
    while statements:
        node = statements.popleft()
        if isinstance(node, ast.ClassDef):
            yield node
        for _field, value in ast.iter_fields(node):
            if isinstance(value, list):
                statements.extend(item for item in value if isinstance(item, STATEMENT_HOLDERS))


def _assigns(node: ast.ClassDef, name: str) -> bool:
    return any(
        isinstance(stmt, (ast.Assign, ast.AnnAssign))
        and any(
            isinstance(t, ast.Name) and t.id == name for t in getattr(stmt, "targets", [getattr(stmt, "target", None)])
        )
        for stmt in node.body
    )


def imported_rule_triggers() -> List[RuleTriggers]:
    """The same, from the imported rules (imports LibCST)."""
    from .engine import default_rules

    return [(tuple(rule.CODES), tuple(rule.TRIGGERS)) for rule in default_rules()]


def enabled_triggers(
    code_enabled: Callable[[str], bool], rule_triggers: Optional[Sequence[RuleTriggers]] = None
) -> Optional[Tuple[bytes, ...]]:
    """The union of triggers over rules with an enabled code; ``None`` means every file
    qualifies (some enabled rule declares no trigger).  For the registered rules (no
    ``rule_triggers`` given, no test seam) it is ``ADMISSION`` instead whenever some rule
    is enabled: the engine then checks the rules' own triggers before parsing."""
    registered = rule_triggers is None and not os.environ.get(RULES_ENV)
    if rule_triggers is None:
        rule_triggers = static_rule_triggers() if registered else None
        if rule_triggers is None:
            rule_triggers = imported_rule_triggers()
    if registered:
        if not any(code_enabled(code) for codes, _ in rule_triggers for code in codes):
            return ()
        return ADMISSION
    union: List[bytes] = []
    for codes, triggers in rule_triggers:
        if not any(code_enabled(code) for code in codes):
            continue
        if not triggers:
            return None
        union.extend(t for t in triggers if t not in union)
    return tuple(union)
