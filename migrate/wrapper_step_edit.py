"""The edit of an optimizer wrapper class whose ``step`` a native training script hands the
GradScaler (``optimizer_wrappers.scaler_steppable_attribute``): a file without apex.amp
(glow-tts' ``commons.Adam``, BiSeNet's ``Optimizer``), edited as bytes.

``def step(self):`` gains ``scaler=None`` and its ``self.<attr>.step()`` statement becomes::

    if scaler is None:
        self.<attr>.step()
    else:
        scaler.step(self.<attr>)

so every caller that passes nothing steps as before, and the migrated caller's
``wrapper.step(scaler)`` skips the inner step on inf/nan gradients as apex's patched
``optimizer.step`` did, while the rest of the wrapper's step (its learning-rate update, its
step count) runs as it did under apex.
"""

from __future__ import annotations

import ast
from typing import List, Optional

#: the parameter the wrapper's step gains
PARAMETER = "scaler"


def edit_wrapper_step(source: bytes, cls_name: str, attr: str) -> Optional[bytes]:
    """``source`` with the top-level class ``cls_name``'s step edited as above; None when
    the text is not the shape the index proved (the class, its one-parameter step, the
    inner step alone on its lines) or the step already takes a second parameter."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == cls_name), None)
    step = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "step"), None) if cls else None
    if step is None or len(step.args.args) != 1:
        return None
    me = step.args.args[0]
    inner = [
        n for n in ast.walk(step)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute)
        and n.value.func.attr == "step" and isinstance(n.value.func.value, ast.Attribute)
        and n.value.func.value.attr == attr and isinstance(n.value.func.value.value, ast.Name)
        and n.value.func.value.value.id == me.arg
    ]
    if len(inner) != 1 or PARAMETER in {n.id for n in ast.walk(step) if isinstance(n, ast.Name)}:
        return None
    lines: List[bytes] = source.splitlines(keepends=True)
    stmt = inner[0]
    if shares_lines(step, stmt):
        return None
    line = lines[stmt.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    def_line = lines[step.lineno - 1]
    def_indent = def_line[: len(def_line) - len(def_line.lstrip())]
    first_body = lines[step.body[0].lineno - 1]
    body_indent = first_body[: len(first_body) - len(first_body.lstrip())]
    if not body_indent.startswith(def_indent) or len(body_indent) == len(def_indent):
        return None
    unit = body_indent[len(def_indent):]
    newline = b"\r\n" if line.endswith(b"\r\n") else b"\n"
    held = f"{me.arg}.{attr}".encode()
    block = [
        indent + f"if {PARAMETER} is None:".encode() + newline,
        indent + unit + held + b".step()" + newline,
        indent + b"else:" + newline,
        indent + unit + f"{PARAMETER}.step(".encode() + held + b")" + newline,
    ]
    lines[stmt.lineno - 1 : stmt.end_lineno] = block
    # the parameter goes right after self (the lines above the inner step are unchanged)
    row = me.end_lineno - 1
    text = lines[row]
    column = me.end_col_offset  # a byte offset, as ast gives it
    lines[row] = text[:column] + f", {PARAMETER}=None".encode() + text[column:]
    return b"".join(lines)


def shares_lines(step: ast.FunctionDef, stmt: ast.stmt) -> bool:
    """Whether another statement of ``step`` starts or ends on a line of ``stmt`` (``a();
    self.opt.step()``), or ``stmt`` is the def's own line (``def step(self): self.o.step()``)."""
    if stmt.lineno == step.lineno:
        return True
    span = range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)
    for node in ast.walk(step):
        if isinstance(node, ast.stmt) and node is not stmt and node is not step:
            if node.lineno in span or (node.end_lineno in span and not _contains(node, stmt)):
                return True
    return False


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer))


def wrapper_step_line(source: bytes, cls_name: str) -> int:
    """The line of ``cls_name``'s ``def step`` (for the finding), 1 when not found."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 1
    cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == cls_name), None)
    step = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "step"), None) if cls else None
    return step.lineno if step is not None else 1
