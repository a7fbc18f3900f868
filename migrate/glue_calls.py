"""A file without apex.amp that joins a model factory to the helper that scales the loss.

The shape (few-shot-vid2vid's ``train.py``, reduced): a launcher that names no apex.amp
calls a model factory of another file (whose ``amp.initialize`` the plan rewrites so that
it returns the GradScaler as one more value, ``repo_plan._factory_routes``) and, in the same
function, a helper of a third file that scales the loss (``amp.scale_loss``) and steps.  No
rule edits the launcher, so this module proves and makes its three edits with stdlib
``ast`` and byte splices:

- the unpacking of the factory's call binds the GradScaler to a name the file never uses
  (``model, optimizer, scaler = build(args)``);
- each call of the helper passes it as the keyword the helper now takes
  (``backward_step(args, loss, optimizer, scaler=scaler)``);
- the statements just before each call that compute what it is handed from the models'
  outputs run under ``torch.autocast(..., enabled=scaler.is_enabled())``.

Proven, else the reason is returned (and the factory's component keeps apex.amp): the
factory's call is one statement of the function's own body, unpacked into names, and every
helper call comes after it in that function (so the name is bound wherever it is read);
the helper's calls are plain calls without ``**`` or that keyword; ``torch`` is the module
imported as ``torch`` at module level and bound nowhere else; every value the helper calls
are handed that is computed after the factory's call by a call of anything is computed in
a wrapped statement (the forward passes feeding the scaled losses run under autocast);
the wrapped lines hold no multi-line string and are indented with spaces.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

from . import stdlib_trees
from .repo_index import parent_links

#: the statements a forward span may hold
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)
#: autocast's device type where the function names none
CUDA = '"cuda"'
#: methods of a model or an optimizer that run no forward pass
NO_FORWARD = frozenset({
    "state_dict", "load_state_dict", "parameters", "named_parameters", "buffers", "modules", "children",
    "train", "eval", "zero_grad", "to", "cuda", "cpu", "float", "half",
})


@dataclass(frozen=True)
class GlueEdit:
    """The edits of a launcher without apex.amp that hands the factory's GradScaler on."""

    #: the name the GradScaler is bound to, the keyword the helpers take it as
    name: str
    keyword: str
    #: the helpers (for the finding)
    helpers: Tuple[str, ...]
    #: (line, byte column) where ``, <name>`` goes in the factory call's unpacking
    unpack: Tuple[int, int]
    #: (line, byte column, text) inserted in each helper call
    passes: Tuple[Tuple[int, int, str], ...]
    #: (first line, last line) of each run of statements that goes under autocast
    wraps: Tuple[Tuple[int, int], ...]
    #: autocast's device type: the device the function moves its models or data to
    #: (``device.type``), else ``"cuda"``, where apex ran
    device: str = CUDA
    #: ``[0]`` where the name holds the list of GradScalers, one per loss id (all switched
    #: alike), else ""
    first: str = ""


def _names_read(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_bound(stmt: ast.AST) -> Set[str]:
    targets: List[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _statement_of(node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> ast.AST:
    while not isinstance(node, ast.stmt):
        node = parents[node]
    return node


def _block_of(stmt: ast.AST, parents: Dict[ast.AST, ast.AST]) -> Optional[List[ast.stmt]]:
    owner = parents.get(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(owner, field, None)
        if isinstance(block, list) and stmt in block:
            return block
    return None


def fresh_name(source: bytes, choices: Sequence[str]) -> Optional[str]:
    """The first of ``choices`` that appears nowhere in ``source`` (not even in a string or
    a comment): binding it cannot shadow or clash with anything of the file."""
    return next((c for c in choices if not re.search(rb"\b" + c.encode() + rb"\b", source)), None)


def glue_edit(
    source: bytes,
    shown: str,
    function: str,
    factory_line: int,
    factory_texts: Set[str],
    helper_texts: Dict[str, str],
    name: str,
    keyword: str,
) -> Union[GlueEdit, str]:
    """The edits of ``function`` (top-level, in the file ``shown``) that bind the GradScaler
    the factory (called as one of ``factory_texts`` at ``factory_line``) returns to ``name``
    and hand it as ``keyword`` to each call of the helpers (call text -> helper name), or
    why they cannot be proven."""
    tree = stdlib_trees.parse(source)
    if tree is None or source.startswith(b"\xef\xbb\xbf"):
        return f"{shown} does not parse as UTF-8 Python"
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        return f"{shown} is not UTF-8"
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if func is None:
        return f"{function}() of {shown} is not a top-level function"
    where = f"{function}() of {shown}"
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Global, ast.Nonlocal))
           for n in ast.walk(func) if n is not func):
        return f"{where} defines functions, classes or lambdas of its own or declares global names"
    why = _torch_module(tree, shown)
    if why:
        return why
    parents = parent_links(tree)
    factory_calls = [
        n for n in ast.walk(func)
        if isinstance(n, ast.Call) and n.lineno == factory_line and ast.unparse(n.func) in factory_texts
    ]
    if len(factory_calls) != 1:
        return f"the factory's call at {shown}:{factory_line} was not found once in {function}()"
    factory_call = factory_calls[0]
    assign = parents.get(factory_call)
    if not (isinstance(assign, ast.Assign) and assign.value is factory_call and assign in func.body):
        return f"the factory's call at {shown}:{factory_line} is not a statement of {function}()'s own body"
    if len(assign.targets) != 1 or not isinstance(assign.targets[0], (ast.Tuple, ast.List)):
        return f"what the factory returns at {shown}:{factory_line} is not unpacked into names"
    target = assign.targets[0]
    inner = [n for n in ast.walk(target) if n is not target]
    if not target.elts or not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Load, ast.Store)) for n in inner):
        return f"what the factory returns at {shown}:{factory_line} is not unpacked into names"
    last = target.elts[-1]
    # after the last element (a nested ``[opt_g, opt_d]`` included: its bracket ends it)
    unpack = (last.end_lineno or 0, last.end_col_offset or 0)
    factory_names = {n.id for n in inner if isinstance(n, ast.Name)}

    helper_calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) in helper_texts
    ]
    if not helper_calls:
        return f"no call of {', '.join(sorted(set(helper_texts.values())))}() was found again in {shown}"
    tokens = _tokens(text)
    if isinstance(tokens, str):
        return f"{shown} does not tokenize: {tokens}"
    lines = source.splitlines(keepends=True)
    passes: List[Tuple[int, int, str]] = []
    spans: List[List[ast.stmt]] = []
    for call in helper_calls:
        at = f"{shown}:{call.lineno}"
        if _enclosing_function(call, parents) is not func:
            return f"the call at {at} is not in {function}(), where the factory's GradScaler is bound"
        if call.lineno <= (assign.end_lineno or assign.lineno):
            return f"the call at {at} comes before the factory's call in {function}()"
        if any(k.arg is None or k.arg == keyword for k in call.keywords):
            return f"the call at {at} passes `**` or `{keyword}=` already"
        if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.GeneratorExp):
            return f"the call at {at} is handed a bare generator expression"
        insert = _keyword_position(call, tokens, lines)
        if insert is None:
            return f"the end of the call at {at} was not found"
        line, column, before = insert
        lead = {"(": "", ",": " "}.get(before, ", ")
        passes.append((line, column, f"{lead}{keyword}={name}"))
        stmt = _statement_of(call, parents)
        span = _forward_span(stmt, call, parents, factory_names, set(helper_texts), assign)
        if isinstance(span, str):
            return f"at {at}: {span}"
        if span:
            spans.append(span)
    wraps = _merged(spans)
    why = _unwrapped_forward(func, helper_calls, wraps, assign, factory_names | {name}, parents, shown,
                             set(helper_texts)) or _model_used_elsewhere(func, assign, factory_names, wraps,
                                                                         helper_calls, parents, shown)
    if why:
        return why
    for first, last_line in wraps:
        why = _wrappable(lines, tokens, first, last_line, shown)
        if why:
            return why
    helpers = tuple(sorted(set(helper_texts.values())))
    device = _device_type(func, assign, factory_names) if wraps else CUDA
    return GlueEdit(name, keyword, helpers, unpack, tuple(sorted(passes)), tuple(wraps), device)


def _device_type(func: ast.FunctionDef, factory_stmt: ast.stmt, models: Set[str]) -> str:
    """``D.type`` (``torch.device(D).type``) where ``func`` hands the factory ``D`` (a name
    naming a device), or moves a model the factory returned, or data, to ``D``
    (``x.to(device)``), a name bound once: a parameter, or a statement of the function's
    body before the factory's call; else ``"cuda"``."""
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    bindings: Dict[str, List[ast.AST]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bindings.setdefault(node.id, []).append(node)
    # the device handed to the factory first: its GradScaler follows that one
    handed = factory_stmt.value if isinstance(factory_stmt, ast.Assign) else None
    on_model: List[str] = [
        a.id for a in getattr(handed, "args", []) + [k.value for k in getattr(handed, "keywords", [])]
        if isinstance(a, ast.Name) and "device" in a.id.lower()
    ]
    on_data: List[str] = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"):
            continue
        given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "device"), None)
        if not isinstance(given, ast.Name):
            continue
        receiver = node.func.value
        if isinstance(receiver, ast.Name) and receiver.id in models:
            on_model.append(given.id)
        elif "device" in given.id.lower():
            on_data.append(given.id)
    for name in on_model + on_data:
        bound = bindings.get(name, [])
        if name in params and not bound:
            return f"torch.device({name}).type"
        if len(bound) != 1 or name in params:
            continue
        stmt = next((s for s in func.body if s.lineno < factory_stmt.lineno and bound[0] in ast.walk(s)), None)
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or stmt.targets[0] is not bound[0]:
            continue
        value = stmt.value
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "torch.device":
            return f"{name}.type"
        return f"torch.device({name}).type"
    return CUDA


def _torch_module(tree: ast.Module, shown: str) -> str:
    """"" when ``torch`` is the module: imported as ``import torch`` at module level, bound
    to nothing else anywhere in the file; else why not."""
    imported = any(
        isinstance(s, ast.Import) and any(a.name == "torch" and a.asname is None for a in s.names) for s in tree.body
    )
    bindings = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "torch" and not isinstance(node.ctx, ast.Load):
            bindings += 1
        elif isinstance(node, ast.arg) and node.arg == "torch":
            bindings += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == "torch":
            bindings += 1
        elif isinstance(node, ast.Import):
            # ``import torch.nn.functional`` binds torch to the same module
            bindings += sum(1 for a in node.names if a.asname == "torch")
        elif isinstance(node, ast.ImportFrom):
            bindings += sum(1 for a in node.names if (a.asname or a.name) == "torch")
    if not imported or bindings:
        return (f"{shown} does not import torch as `import torch` at module level, or binds the name to something "
                "else: autocast would come from there")
    return ""


def _enclosing_function(node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> Optional[ast.AST]:
    node = parents.get(node)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        node = parents.get(node)
    return node


def _tokens(text: str) -> Union[List[tokenize.TokenInfo], str]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError) as error:
        return str(error)


def _byte_column(lines: List[bytes], row: int, column: int) -> int:
    """The byte column of the character column ``column`` on line ``row`` (1-based)."""
    return len(lines[row - 1].decode("utf-8")[:column].encode("utf-8"))


def _keyword_position(
    call: ast.Call, tokens: List[tokenize.TokenInfo], lines: List[bytes]
) -> Optional[Tuple[int, int, str]]:
    """(line, byte column, the token there) right after the last token before the call's
    closing parenthesis: a keyword argument goes there."""
    end = (call.end_lineno, call.end_col_offset)
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    for i, token in enumerate(tokens):
        row, column = token.end
        if token.string != ")" or (row, _byte_column(lines, row, column)) != end:
            continue
        j = i - 1
        while j >= 0 and tokens[j].type in skip:
            j -= 1
        if j < 0:
            return None
        before = tokens[j]
        row, column = before.end
        return row, _byte_column(lines, row, column), before.string
    return None


def _forward_span(
    stmt: ast.AST,
    call: ast.Call,
    parents: Dict[ast.AST, ast.AST],
    factory_names: Set[str],
    helper_texts: Set[str],
    factory_stmt: ast.AST,
) -> Union[List[ast.stmt], str]:
    """The simple statements just before ``stmt`` in its block, from the first through the
    last that compute what ``call`` is handed (names read by its arguments, then by those
    statements); [] when none does."""
    block = _block_of(stmt, parents)
    if block is None:
        return "the call is not in a block of statements"
    needed = set().union(*(_names_read(a) for a in list(call.args) + [k.value for k in call.keywords])) - factory_names
    first = last = None
    for index in range(block.index(stmt) - 1, -1, -1):
        before = block[index]
        if not isinstance(before, _SIMPLE) or before is factory_stmt or any(
            isinstance(n, ast.Call) and ast.unparse(n.func) in helper_texts for n in ast.walk(before)
        ):
            break
        if _names_bound(before) & needed:
            needed |= _names_read(before) - factory_names
            first = index
            last = index if last is None else last
    if first is None or last is None:
        return []
    if (first and (block[first - 1].end_lineno or 0) >= block[first].lineno) or (
        (block[last].end_lineno or 0) >= block[last + 1].lineno
    ):
        return "the statements computing what it is handed share a line with others"
    return block[first : last + 1]


def _merged(spans: List[List[ast.stmt]]) -> List[Tuple[int, int]]:
    """The line ranges of ``spans``, those that overlap joined (two calls fed by one run)."""
    ranges = sorted((s[0].lineno, s[-1].end_lineno or s[-1].lineno) for s in spans)
    merged: List[Tuple[int, int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def _unwrapped_forward(
    func: ast.FunctionDef,
    calls: List[ast.Call],
    wraps: List[Tuple[int, int]],
    factory_stmt: ast.AST,
    exempt: Set[str],
    parents: Dict[ast.AST, ast.AST],
    shown: str,
    helper_texts: Set[str],
) -> str:
    """Why a value the helper calls are handed may come from a forward pass outside the
    wrapped lines ("" when none does): every binding in ``func`` of a name they read
    (through the statements that compute it) is a parameter, a statement of the function's
    body before the factory's call (no model of the factory exists yet), a loop whose
    iterable reads no name the factory returned, a statement without calls or whose calls
    are all of the helpers (what they return, their own files compute), or a wrapped
    statement."""
    factory_line = factory_stmt.lineno

    def wrapped(node: ast.AST) -> bool:
        return any(first <= node.lineno and (node.end_lineno or node.lineno) <= last for first, last in wraps)

    bindings: Dict[str, List[ast.AST]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            holder = parents[node]
            while not isinstance(holder, (ast.stmt, ast.comprehension, ast.NamedExpr)):
                holder = parents[holder]
            if not isinstance(holder, ast.comprehension):  # its names do not leave it
                bindings.setdefault(node.id, []).append(holder)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bindings.setdefault((alias.asname or alias.name).split(".")[0], []).append(node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bindings.setdefault(node.name, []).append(node)
    needed = set().union(*(_names_read(a) for c in calls for a in list(c.args) + [k.value for k in c.keywords]))
    needed -= exempt
    seen: Set[str] = set()
    while needed - seen:
        name = sorted(needed - seen)[0]
        seen.add(name)
        for holder in bindings.get(name, []):
            if holder is factory_stmt:
                continue
            if holder in func.body and holder.lineno < factory_line:
                continue
            line = f"{shown}:{holder.lineno}"
            if isinstance(holder, (ast.For, ast.AsyncFor)):
                reads = _names_read(holder.iter)
                if reads & exempt:
                    return f"`{name}` is bound at {line} by a loop over what the factory returned"
                needed |= reads - exempt
            elif isinstance(holder, _SIMPLE):
                calls = [n for n in ast.walk(holder) if isinstance(n, ast.Call)]
                if any(ast.unparse(c.func) not in helper_texts for c in calls) and not wrapped(holder):
                    return (
                        f"`{name}`, handed on to the helper that scales the loss, is computed at {line} by a call "
                        "the autocast the tool can place does not cover (the forward pass would run in float32)"
                    )
                needed |= _names_read(holder) - exempt
            else:
                return f"`{name}`, handed on to the helper that scales the loss, is bound at {line} in a way not followed"
    return ""


def _model_used_elsewhere(
    func: ast.FunctionDef,
    factory_stmt: ast.stmt,
    factory_names: Set[str],
    wraps: List[Tuple[int, int]],
    helper_calls: List[ast.Call],
    parents: Dict[ast.AST, ast.AST],
    shown: str,
) -> str:
    """Why a model the factory returned may run its forward pass outside the wrapped lines
    ("" when it cannot): every read of a name the factory's call binds is in a wrapped
    statement, an argument of a helper call (its own file places the autocast), or the
    receiver of a method that runs no forward pass (``model.state_dict()``,
    ``optimizer.zero_grad()``).  Then no forward pass of them runs anywhere else."""
    handed = {id(a) for c in helper_calls for a in list(c.args) + [k.value for k in c.keywords]}
    for node in ast.walk(func):
        if not (isinstance(node, ast.Name) and node.id in factory_names and isinstance(node.ctx, ast.Load)):
            continue
        if id(node) in handed or any(first <= node.lineno <= last for first, last in wraps):
            continue
        outer = parents.get(node)
        if isinstance(outer, ast.Attribute) and outer.attr in NO_FORWARD and isinstance(parents.get(outer), ast.Call):
            continue
        return (
            f"`{node.id}`, which the factory returns, is used at {shown}:{node.lineno} outside the statements "
            "autocast would go around (it may run a forward pass in float32 there)"
        )
    return ""


def _wrappable(lines: List[bytes], tokens: List[tokenize.TokenInfo], first: int, last: int, shown: str) -> str:
    """Why the lines ``first``..``last`` cannot be indented under a ``with`` ("" when they
    can): the run starts its line, with spaces only before it, and no string spans lines
    in it (indenting would change the string)."""
    head = lines[first - 1]
    indent = head[: len(head) - len(head.lstrip())]
    if indent.strip(b" ") or not head.strip():
        return f"{shown}:{first} is indented with other than spaces"
    for token in tokens:
        if token.type == tokenize.STRING and token.start[0] != token.end[0]:
            if token.start[0] <= last and token.end[0] >= first:
                return f"{shown}:{token.start[0]} holds a string over several lines where autocast would go"
    return ""


def autocast_header(indent: bytes, edit: GlueEdit, dtype: str, newline: bytes, device: str) -> bytes:
    head = f"with torch.autocast({device}, dtype=torch.{dtype}, enabled={edit.name}{edit.first}.is_enabled()):"
    return indent + head.encode() + newline


def apply_glue(source: bytes, edit: GlueEdit, dtype: str = "float16", device_types: bool = True) -> bytes:
    """``source`` with the glue edit's splices: the in-line inserts first (they keep the
    line numbers), then each wrapped run from the last up; ``device_types``: the target
    torch has a CPU GradScaler (2.3), so autocast may follow a device chosen at run time."""
    lines = source.splitlines(keepends=True)
    inserts = [(edit.unpack[0], edit.unpack[1], f", {edit.name}")] + list(edit.passes)
    for line, column, text in sorted(inserts, reverse=True):
        lines[line - 1] = lines[line - 1][:column] + text.encode() + lines[line - 1][column:]
    for first, last in sorted(edit.wraps, reverse=True):
        head = lines[first - 1]
        indent = head[: len(head) - len(head.lstrip())]
        newline = head[len(head.rstrip(b"\r\n")):] or b"\n"
        for row in range(first, last + 1):
            if lines[row - 1].strip():
                lines[row - 1] = b"    " + lines[row - 1]
        device = edit.device if device_types else CUDA  # no CPU GradScaler before torch 2.3
        lines.insert(first - 1, autocast_header(indent, edit, dtype, newline, device))
    return b"".join(lines)


def glue_message(factory: str, edit: GlueEdit) -> str:
    helpers = ", ".join(f"{h}()" for h in edit.helpers)
    wrapped = (
        "; the statements computing what they are handed run under torch.autocast, switched by the GradScaler"
        if edit.wraps else ""
    )
    what = "the list of GradScalers, one per loss id," if edit.first else "the GradScaler"
    return (
        f"{factory}() now returns {what} as one more value: this file binds it to `{edit.name}` and hands it "
        f"to {helpers} as `{edit.keyword}=`{wrapped}"
    )
