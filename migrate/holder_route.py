"""The cross-file plan's holder route: apex.amp kept on an object's attribute by a helper
(``model.amp = amp`` after its ``amp.initialize``), read as "apex.amp or None" by the methods
of a class in a file without apex (``self.amp = None`` in ``__init__``, ``if self.amp is not
None: with self.amp.scale_loss(loss, self.optimizer) as s: s.backward()``).

The attribute becomes a GradScaler-or-None holder under a new name (``self.scaler``): the
launcher puts its GradScaler there (the per-file carrier route, ``_amp_carrier``), and that
class's file is edited as bytes here: the reads are renamed, the scaled backward becomes
``self.scaler.scale(loss).backward()``, the optimizer step goes through the scaler when
there is one, and autocast (enabled only then) goes around the statements before the branch
that compute the loss.  Proven only for the exact shape: every ``.amp`` read of that file is
``self.amp`` in a method of that one class, each a ``self.amp = None`` in ``__init__``, an
``is None`` / ``is not None`` test (None exactly when apex.amp was), ``state_dict()`` /
``load_state_dict(x)`` (the GradScaler's, read back through ``load_scaler_state``), or one
``amp.scale_loss`` alone in a ``with`` inside the branch of ``if self.amp is not None``; the
branch is in the method body, or ends the body of a loop directly in it, and the one
``self.<opt>.step()`` of the method comes right after it (or after that loop); the
method-level statements before the loop call nothing with arguments (no forward pass
runs outside the new autocast); the wrapped lines hold no multi-line string.  Pure ``ast``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

from . import stdlib_trees
from .repo_index import parent_links

#: the checkpoint rule's helper that loads apex's and GradScaler's entries alike
#: (``rules.checkpoints.HELPER_NAME``; imported where used: the rules import the plan)
HELPER_NAME = "load_scaler_state"

#: attribute names the GradScaler-or-None holder may take, in order of preference
HOLDER_ATTRIBUTES = ("scaler", "grad_scaler")
CUDA = '"cuda"'


@dataclass(frozen=True)
class HolderEdit:
    """The byte edit of the holder class's file, as whole-line replacements."""

    path: str
    shown: str
    cls: str
    method: str
    attribute: str
    new_attribute: str
    #: (first line, last line, replacement lines without their newline), 1-based, disjoint
    lines: Tuple[Tuple[int, int, Tuple[str, ...]], ...]
    #: line after which ``import torch`` goes (0: the file imports it already)
    torch_after: int = 0
    #: line after which the ``load_scaler_state`` helper goes (0: none is needed)
    helper_after: int = 0


def holder_route(path: str, shown: str, source: bytes, attribute: str,
                 taken: Sequence[str] = ()) -> Union[HolderEdit, str]:
    """The edit that makes ``attribute`` of the one class of ``source`` reading it a
    GradScaler-or-None holder, else why not ("" when no class there reads ``self.<attribute>``;
    ``taken``: names the launcher uses)."""
    tree = stdlib_trees.parse(source)
    text = stdlib_trees.decoded(source)
    if tree is None or text is None:
        return f"{shown} does not parse"
    parents = parent_links(tree)
    lines = [line.rstrip("\r\n") for line in physical_lines(text)]
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    new = next((a for a in HOLDER_ATTRIBUTES if a not in names and a not in taken), None)
    if new is None:
        return f"{' and '.join(HOLDER_ATTRIBUTES)} are both taken in {shown}"
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == attribute]
    owners = {_method_and_class(parents, n) for n in reads}
    if not any(_is_self(n.value) and _method_and_class(parents, n)[1] is not None for n in reads):
        return ""  # no class of that file reads self.<attribute>: no holder to speak of
    classes = {c for _m, c in owners if c is not None}
    if len(classes) != 1 or any(m is None for m, _c in owners):
        return f"{shown} reads .{attribute} outside the methods of one class"
    cls = classes.pop()
    renames: List[ast.Attribute] = []
    scaled: List[Tuple[ast.With, ast.If]] = []
    loads: List[ast.Call] = []
    for node in sorted(reads, key=lambda n: (n.lineno, n.col_offset)):
        method, _cls = _method_and_class(parents, node)
        kind = _read_kind(node, method, parents)
        where = f"{shown}:{node.lineno}"
        if isinstance(kind, str):
            return f"self.{attribute} is read at {where} {kind}"
        if isinstance(kind, tuple):
            scaled.append(kind)
        elif isinstance(kind, ast.Call):
            loads.append(kind)
        else:
            renames.append(node)
    if len(scaled) != 1:
        how = "no loss" if not scaled else "losses in several places"
        return f"{cls.name}'s methods scale {how} through self.{attribute}"
    with_stmt, branch = scaled[0]
    method, _cls = _method_and_class(parents, with_stmt)
    edits: List[Tuple[int, int, Tuple[str, ...]]] = []
    step = _step_after(branch, method, with_stmt, parents, shown)
    if isinstance(step, str):
        return step
    step_stmt, block = step
    unit = _indent_unit(lines, branch)
    wrapped = _wrapped(block, branch, method, with_stmt, lines, tree, shown)
    if isinstance(wrapped, str):
        return wrapped
    first, last = wrapped
    me = method.args.args[0].arg
    holder = f"{me}.{new}"
    device = device_of(block[: block.index(branch)], me)
    pad = " " * block[0].col_offset
    switch = f"{holder} is not None and {holder}.is_enabled()"
    head = f"{pad}with torch.autocast({device}, dtype=torch.float16, enabled={switch}):"
    body = tuple(unit + line if line.strip() else line for line in lines[first - 1 : last])
    edits.append((first, last, (head, *body)))
    loss = with_stmt.items[0].context_expr.args[0].id  # type: ignore[attr-defined]
    backward = f"{' ' * with_stmt.col_offset}{holder}.scale({loss}).backward()"
    edits.append((with_stmt.lineno, with_stmt.end_lineno, (backward,)))
    opt = ast.unparse(step_stmt.value.func.value)  # type: ignore[attr-defined]
    pad = " " * step_stmt.col_offset
    edits.append((step_stmt.lineno, step_stmt.end_lineno, (
        f"{pad}if {holder} is not None:", f"{pad}{unit}{holder}.step({opt})", f"{pad}{unit}{holder}.update()",
        f"{pad}else:", f"{pad}{unit}{opt}.step()",
    )))
    for node in renames:
        line = node.lineno
        covered = next((e for e in edits if e[0] <= line <= e[1]), None)
        if covered is not None and covered[0] == with_stmt.lineno:
            continue  # the scaled backward is rewritten whole
        if node.lineno != node.end_lineno:
            return f"self.{attribute} spans lines at {shown}:{line}"
        edits.append((line, line, (_renamed(lines[line - 1], node, attribute, new),)))
    for call in loads:
        if HELPER_NAME in names:
            return f"{HELPER_NAME} is already a name in {shown}"
        line = lines[call.lineno - 1]
        raw = line.encode("utf-8")
        arg = ast.get_source_segment(text, call.args[0])
        new_call = f"{HELPER_NAME}({me}.{new}, {arg})"
        edits.append((call.lineno, call.lineno, ((raw[: call.col_offset] + new_call.encode("utf-8")
                                                  + raw[call.end_col_offset :]).decode("utf-8"),)))
    torch_after = torch_import_after(tree)
    if torch_after < 0:
        return f"{shown} imports nothing at module level to put `import torch` after"
    edits = _merged(edits, lines)
    if edits is None:
        return f"the lines of {cls.name}.{method.name}() in {shown} are not laid out one statement a line"
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    helper_after = imports[-1].end_lineno if loads else 0
    edit = HolderEdit(path, shown, cls.name, method.name, attribute, new, tuple(edits), torch_after, helper_after)
    return compiled_or_reason(source, edit)


def compiled_or_reason(source: bytes, edit: HolderEdit) -> Union[HolderEdit, str]:
    """``edit`` where the file it makes of ``source`` compiles, else why it cannot be made."""
    try:
        compile(apply_holder_edit(source, edit), edit.shown, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return f"the edit of {edit.shown} would not compile"
    return edit


def apply_holder_edit(source: bytes, edit: HolderEdit) -> bytes:
    """``source`` with ``edit`` made (line endings kept as the file has them)."""
    text = source.decode("utf-8")
    ending = "\r\n" if "\r\n" in text else "\n"
    lines = physical_lines(text)
    for first, last, new in sorted(edit.lines, reverse=True):
        lines[first - 1 : last] = [line + ending for line in new]
    if edit.helper_after:
        from .rules.checkpoints import HELPER

        helper = ["", "", *HELPER.rstrip("\n").split("\n")]
        lines[edit.helper_after : edit.helper_after] = [line + ending for line in helper]
    if edit.torch_after:
        lines.insert(edit.torch_after, "import torch" + ending)
    return "".join(lines).encode("utf-8")


def physical_lines(text: str) -> List[str]:
    """The lines as ``ast`` counts them, with their ends (``str.splitlines`` also splits at a
    form feed and other separators, which would shift the line numbers)."""
    parts = re.split(r"(\r\n|\r|\n)", text)
    lines = [parts[i] + (parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]
    return lines[:-1] if lines and not lines[-1] else lines


def holder_message(edit: HolderEdit, launcher: str) -> str:
    return (
        f"self.{edit.attribute} held apex.amp (set by {launcher}) or None: self.{edit.new_attribute} holds the "
        f"GradScaler or None instead; {edit.cls}.{edit.method}() scales and steps through it and runs its "
        "forward pass under torch.autocast while it is set"
    )


def _method_and_class(parents, node) -> Tuple[Optional[ast.FunctionDef], Optional[ast.ClassDef]]:
    """The plain method around ``node`` and its top-level class (None, None elsewhere)."""
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        cur = parents.get(cur)
    cls = parents.get(cur) if isinstance(cur, ast.FunctionDef) else None
    if not isinstance(cls, ast.ClassDef) or not isinstance(parents.get(cls), ast.Module) or cur.decorator_list:
        return None, None
    if not cur.args.args or cur.args.args[0].arg != "self":
        return None, None
    return cur, cls


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _read_kind(node: ast.Attribute, method: ast.FunctionDef, parents):
    """None: a rename will do (``self.amp = None`` in ``__init__``, an if's ``is (not) None``
    test); (with, if): the scale_loss; a string: why the read is not followed."""
    if not _is_self(node.value):
        return "off another object than self"
    parent = parents.get(node)
    if isinstance(parent, ast.Assign):
        ok = (parent.targets == [node] and isinstance(parent.value, ast.Constant) and parent.value.value is None
              and method.name == "__init__" and parents.get(parent) is method)
        return None if ok else "as an assignment other than self.<attr> = None in __init__()"
    if isinstance(parent, ast.Compare):
        ok = (parent.left is node and len(parent.ops) == 1 and isinstance(parent.ops[0], (ast.Is, ast.IsNot))
              and isinstance(parent.comparators[0], ast.Constant) and parent.comparators[0].value is None)
        return None if ok else "in a comparison other than `is None` / `is not None`"
    call = parents.get(parent)
    called = isinstance(parent, ast.Attribute) and isinstance(call, ast.Call) and call.func is parent
    if called and parent.attr == "state_dict" and not call.args and not call.keywords:
        return None  # the GradScaler's state, which load_scaler_state reads back
    if called and parent.attr == "load_state_dict":
        if len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred) \
                and call.lineno == call.end_lineno:
            return call
        return "by a load_state_dict not given one argument on its line"
    if not (called and parent.attr == "scale_loss"):
        return ("other than in an `is None` / `is not None` test, `= None` in __init__(), a scale_loss, "
                "state_dict() or load_state_dict() call")
    item = parents.get(call)
    with_stmt = parents.get(item)
    branch = parents.get(with_stmt)
    if not (isinstance(item, ast.withitem) and isinstance(with_stmt, ast.With) and len(with_stmt.items) == 1
            and isinstance(item.optional_vars, ast.Name)):
        return "by a scale_loss that is not the one item of a with ... as"
    scaled = item.optional_vars.id
    body = with_stmt.body
    if not (len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call)
            and not body[0].value.args and not body[0].value.keywords
            and ast.unparse(body[0].value.func) == f"{scaled}.backward"):
        return f"by a scale_loss whose block does more than {scaled}.backward()"
    args = call.args
    keywords = {k.arg for k in call.keywords}
    if not (len(args) == 2 and isinstance(args[0], ast.Name) and isinstance(args[1], ast.Attribute)
            and _is_self(args[1].value) and keywords <= {"delay_unscale"}
            and not any(isinstance(n, ast.Call) for k in call.keywords for n in ast.walk(k.value))):
        return "by a scale_loss not given (loss, self.<optimizer>) and at most delay_unscale without calls"
    if not (isinstance(branch, ast.If) and with_stmt in branch.body and isinstance(branch.test, ast.Compare)
            and isinstance(branch.test.ops[0], ast.IsNot)
            and ast.unparse(branch.test) == f"self.{node.attr} is not None"):
        return f"by a scale_loss outside the branch of `if self.{node.attr} is not None`"
    return (with_stmt, branch)


def _step_after(branch: ast.If, method: ast.FunctionDef, with_stmt: ast.With, parents, shown: str):
    """(the ``self.<opt>.step()`` statement, the block of the branch), the step being the
    method's one step of that optimizer, right after the branch's block; else why not."""
    opt = ast.unparse(with_stmt.items[0].context_expr.args[1])  # type: ignore[attr-defined]
    steps = [n for n in ast.walk(method) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "step" and ast.unparse(n.func.value) == opt]
    holder = parents.get(branch)
    block = _block_of(holder, branch)
    where = f"{method.name}() in {shown}"
    outer = branch
    if holder is not method:
        if not (isinstance(holder, ast.For) and parents.get(holder) is method and not holder.orelse
                and block is holder.body):
            return f"the scaled backward is neither in the method body nor in a loop directly in it in {where}"
        if block[-1] is not branch:
            return f"the scaled backward's if is not the last statement of its loop in {where}"
        outer = holder
    index = method.body.index(outer)
    following = method.body[index + 1] if index + 1 < len(method.body) else None
    if len(steps) != 1 or following is None or not (
        isinstance(following, ast.Expr) and following.value is steps[0] and not steps[0].args
        and not steps[0].keywords
    ):
        return f"{opt}.step() is not one statement right after the scaled backward's block in {where}"
    for stmt in method.body[:index] if outer is not branch else ():  # (without a loop, all are wrapped)
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and (n.args or n.keywords):
                return (f"{where} calls something with arguments (line {n.lineno}) before the loop that scales the "
                        "loss: a forward pass there would run outside autocast")
    return following, block


def _block_of(holder, stmt) -> Optional[List[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        block = getattr(holder, name, None)
        if isinstance(block, list) and stmt in block:
            return block
    return None


def _wrapped(block, branch, method, with_stmt, lines, tree, shown):
    """(first line, last line) of the statements before ``branch`` in ``block`` (they compute
    the loss), else why they cannot be wrapped."""
    before = block[: block.index(branch)]
    loss = with_stmt.items[0].context_expr.args[0].id
    where = f"{method.name}() in {shown}"
    if not before or not any(loss in _assigned(s) for s in before):
        return f"the loss {loss} is not computed in the statements before the scaled backward's if in {where}"
    first, last = before[0].lineno, before[-1].end_lineno
    header = block is method.body and first == method.lineno or any(
        s.lineno == first and s is not before[0] for s in ast.walk(tree) if isinstance(s, ast.stmt)
    )
    if header or lines[first - 1][: before[0].col_offset].strip() or branch.lineno <= last:
        return f"the statements that compute the loss in {where} do not start their own lines"
    for n in ast.walk(method):
        if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and n.lineno != n.end_lineno \
                and first <= n.lineno <= last:
            return f"a string spans lines in the statements that compute the loss in {where}"
    return first, last


def _assigned(stmt: ast.stmt) -> set:
    names = set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
    return names


def device_of(before: Sequence[ast.stmt], me: str) -> str:
    """``torch.device(self.device).type`` where the statements move data to an attribute of
    self named like a device (bound before they run), else ``"cuda"``."""
    for stmt in before:
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Call):
                continue
            for arg in [*n.args, *[k.value for k in n.keywords if k.arg == "device"]]:
                if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == me \
                        and "device" in arg.attr.lower():
                    return f"torch.device({me}.{arg.attr}).type"
    return CUDA


def _indent_unit(lines: List[str], branch: ast.If) -> str:
    inner = branch.body[0].col_offset - branch.col_offset
    return " " * (inner if inner > 0 else 4)


def _renamed(line: str, node: ast.Attribute, attribute: str, new: str) -> str:
    raw = line.encode("utf-8")
    piece = raw[node.col_offset : node.end_col_offset].decode("utf-8")
    return (raw[: node.col_offset].decode("utf-8") + piece[: -len(attribute)] + new
            + raw[node.end_col_offset :].decode("utf-8"))


def _merged(edits, lines):
    """The edits with the one-line renames folded into the wrapped block they fall in;
    None when two overlap otherwise."""
    edits = sorted(edits, key=lambda e: (e[0], -e[1]))
    out: List[Tuple[int, int, Tuple[str, ...]]] = []
    for first, last, new in edits:
        if out and first <= out[-1][1]:
            big_first, big_last, big_new = out[-1]
            if first != last or big_first == big_last:
                return None
            offset = first - big_first + 1  # the block's first line is the with header
            old = lines[first - 1]
            block_line = big_new[offset]
            indent = block_line[: len(block_line) - len(old)]
            out[-1] = (big_first, big_last, big_new[:offset] + (indent + new[0],) + big_new[offset + 1 :])
            continue
        out.append((first, last, new))
    return out


def torch_import_after(tree: ast.Module) -> int:
    """0 when ``import torch`` binds torch at module level, else the line after which to add
    it (-1: no import to put it after)."""
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    if any(isinstance(s, ast.Import) and any(a.name == "torch" and a.asname is None for a in s.names) for s in imports):
        return 0
    return imports[-1].end_lineno if imports else -1
