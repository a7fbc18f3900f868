"""APX265: a statement that only prints or logs apex.amp's version.

``print("APEX : {}".format(".".join(str(i) for i in apex.amp.__version__.VERSION)))`` (or
``logger.info("apex %s", amp.__version__)``, ``print(__version__)`` after ``from apex.amp
import __version__``) reports which apex a run used.  The native rewrite has no apex.amp, so
there is no version of it to report: the statement goes, with a one-line note where a
statement follows it in its block, and the import it read ends unused (the import clean-up
removes it).  A version read any other way (a condition, an assignment, an argument of
anything but a print or a logging call) has no native counterpart and keeps the file on the
shim, as before (``_amp_sites``: APX220)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import libcst as cst

from ._edits import comment_line
from ._tree import walk

#: the member of apex.amp a version print reads
VERSION_MEMBER = "__version__"
#: the methods of a logger (``logging.info``, ``self.logger.warning``) that only log
_LOGGING_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "log"})
#: the note left where the statement was
VERSION_NOTE = "apexcompat: removed the report of apex.amp's version (the native code does not use apex.amp)"


def _prints_or_logs(call: cst.Call) -> bool:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    return isinstance(func, cst.Attribute) and func.attr.value in _LOGGING_METHODS


def version_print(parents: Any, expr: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The statement line whose only effect is printing or logging the apex.amp version
    ``expr`` reads: one expression statement on its line, a call of ``print`` or a logging
    method (``_LOGGING_METHODS``) with ``expr`` among its arguments, none of which binds a
    name (``:=``) or defines a function; None otherwise."""
    cur: Any = expr
    call = None
    while cur is not None and not isinstance(cur, cst.BaseStatement):
        parent = parents.get(cur)
        if isinstance(parent, cst.Arg) and isinstance(parents.get(parent), cst.Call):
            call = parents.get(parent)  # the outermost call ``expr`` is an argument of
        cur = parent
    if not isinstance(cur, cst.SimpleStatementLine) or len(cur.body) != 1:
        return None
    small = cur.body[0]
    if not isinstance(small, cst.Expr) or small.value is not call or call is None:
        return None
    if not _prints_or_logs(call):
        return None
    if any(isinstance(node, (cst.NamedExpr, cst.Lambda)) for node in walk(call)):
        return None
    return cur


def remove_version_prints(rule: Any, stmts: Sequence[cst.SimpleStatementLine]) -> None:
    """Plan the removal of ``stmts`` (``version_print`` statements): the comments of each and
    one note per run of them lead the next statement of the block (they go with the last one
    of a block; an emptied block gets ``pass``); APX265 says so at each."""
    doomed = set(stmts)
    for stmt in dict.fromkeys(stmts):
        block = rule.parents.get(stmt)
        body = list(getattr(block, "body", ()))
        after = body[body.index(stmt) + 1] if stmt in body and body.index(stmt) + 1 < len(body) else None
        note = [] if after in doomed else [comment_line(VERSION_NOTE)]

        def removed(updated: Any, note: list = note) -> list:
            rule.edits.lead_next([*updated.leading_lines, *note])
            return []

        rule.edits.replace(stmt, removed)
        rule.report(
            stmt,
            "APX265",
            "this statement only reported apex.amp's version, which the native code no longer uses: removed",
            fixed=True,
            severity="info",
        )
