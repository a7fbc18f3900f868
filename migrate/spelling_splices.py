"""The deprecated ``torch.cuda.amp`` spellings as exact splices at stdlib ``ast`` positions.

A file in which the only rule with work is ``TorchAmpSpellingsRule`` (no apex in it: the
deprecated native API alone) gets the bytes and findings that rule gives through LibCST,
without a LibCST tree: each site is a few bytes replaced or inserted where ``ast`` says it
is, every other byte kept.  Only the plain shapes are taken: a call (or bare decorator)
spelled ``torch.cuda.amp.autocast`` / ``GradScaler`` / ``custom_fwd`` / ``custom_bwd`` in
full through the file's one ``import torch``, its arguments by keyword (``GradScaler`` by
position too) and laid out so that the rule's argument rebuilding reads as an insertion.
Anything else (another binding of ``torch``, an import naming amp, a reference that is not
such a call, a comment or parenthesis where the layout is copied, a line the rule would
split, a text LibCST might not print back as read) returns None, and the engine takes the
LibCST route as before.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from . import stdlib_trees
from .ast_table import child_nodes
from .findings import Finding
from .rules.torch_amp_spellings import custom_message, grad_scaler_message, autocast_message
from .settings import Settings
from .write import compile_error

#: the rule's line limit: a rebuilt call on a longer line has its arguments split
from .rules._namespace_gate import _dotted
from .rules._neighbour_base import MAX_LINE

#: callee spelled in full -> (kind, device)
_CALLEES: Dict[str, Tuple[str, str]] = {
    **{f"torch.{d}.amp.autocast": ("autocast", d) for d in ("cuda", "cpu")},
    **{f"torch.{d}.amp.GradScaler": ("GradScaler", d) for d in ("cuda", "cpu")},
    "torch.cuda.amp.custom_fwd": ("custom_fwd", "cuda"),
    "torch.cuda.amp.custom_bwd": ("custom_bwd", "cuda"),
}
_NEW_CALLEE = {
    "autocast": "torch.autocast",
    "GradScaler": "torch.amp.GradScaler",
    "custom_fwd": "torch.amp.custom_fwd",
    "custom_bwd": "torch.amp.custom_bwd",
}
_CODES = ("APX901", "APX902", "APX903", "APX904")
#: characters some line splitter counts as a line break where Python's does not, and bytes
#: LibCST may not print back as read: such a file takes the LibCST route
_ODD_TEXT = re.compile("[\x00\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]|\r(?!\n)")
_ONE_LINE_SEP = re.compile(r"[ \t]*,[ \t]*")
_BROKEN_SEP = re.compile(r"([ \t]*),[ \t]*(\r?\n)([ \t]*)")
_COMPOUND = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
    ast.With, ast.AsyncWith, ast.Try,
) + ((ast.Match,) if hasattr(ast, "Match") else ()) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


@dataclass(frozen=True)
class _Edit:
    line: int  # 1-based
    start: int  # character columns in that line
    end: int
    text: str


def spliced(source: bytes, path: str, settings: Settings) -> Optional[Tuple[bytes, List[Finding]]]:
    """The new bytes and findings of ``source`` under ``TorchAmpSpellingsRule`` alone, or
    None where this module does not take the file (the LibCST route decides then)."""
    if not all(settings.code_enabled(code) for code in _CODES) or not settings.torch_at_least(2, 4):
        return None
    if source.startswith(b"\xef\xbb\xbf") or b"TODO(apexcompat" in source:
        return None
    crlf = source.count(b"\r\n")
    if crlf and crlf != source.count(b"\n"):
        return None  # mixed line ends: LibCST writes one of them into a copied separator
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _ODD_TEXT.search(text) or _declares_other_encoding(text):
        return None
    tree = stdlib_trees.parse(text)
    if tree is None:
        return None
    lines = text.split("\n")
    sites = _sites(tree, lines)
    if sites is None:
        return None
    edits: List[_Edit] = []
    findings: List[Finding] = []
    newline = "\r\n" if crlf else "\n"
    for site in sites:
        made = _site_edits(site, lines, newline, path)
        if made is None:
            return None
        edits.extend(made[0])
        findings.append(made[1])
    new_lines = _apply(lines, edits)
    if new_lines is None or not _fits(sites, lines, new_lines):
        return None
    new = "\n".join(new_lines).encode("utf-8")
    if new != source and compile_error(new, path) is not None:
        return None
    return new, findings


def _declares_other_encoding(text: str) -> bool:
    for line in text.split("\n", 2)[:2]:
        match = re.match(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", line)
        if match:
            return match.group(1).lower().replace("_", "-") not in ("utf-8", "utf8")
    return False


@dataclass
class _Site:
    node: ast.AST  # the call, or the bare decorator's attribute
    kind: str
    device: str
    bare: bool
    statement: ast.stmt  # the innermost statement holding it


def _sites(tree: ast.Module, lines: Sequence[str]) -> Optional[List[_Site]]:
    """Every reference into torch.cuda.amp / torch.cpu.amp as a site of a handled shape,
    or None where some reference or binding is outside them."""
    top_imports = 0
    allowed: set = set()
    sites: List[_Site] = []
    chains: List[ast.Attribute] = []
    stack: List[Tuple[ast.AST, Optional[ast.stmt], Optional[ast.AST]]] = [(tree, None, None)]
    while stack:
        node, statement, parent = stack.pop()
        if isinstance(node, ast.stmt):
            statement = node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            plain = _import_verdict(node, parent is tree)
            if plain is None:
                return None
            top_imports += plain
        elif isinstance(node, ast.Name):
            if node.id == "torch" and not isinstance(node.ctx, ast.Load):
                return None
        elif type(node) in _BINDERS and _binds_torch(node):
            return None
        elif isinstance(node, ast.Attribute):
            chains.append(node)
        elif isinstance(node, ast.JoinedStr):
            # positions inside an f-string are not always the text's
            if any(isinstance(sub, ast.Attribute) and (_dotted(sub) or "").startswith("torch.") for sub in ast.walk(node)):
                return None
        elif isinstance(node, ast.Call):
            found = _CALLEES.get(_dotted(node.func) or "")
            if found is not None and statement is not None:
                sites.append(_Site(node, found[0], found[1], False, statement))
                _allow(node.func, allowed)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                found = _CALLEES.get(_dotted(decorator) or "")
                if found is not None and found[0].startswith("custom_"):
                    sites.append(_Site(decorator, found[0], found[1], True, node))
                    _allow(decorator, allowed)
        stack.extend((child, statement, node) for child in child_nodes(node))
    if top_imports == 0:
        return None
    for chain in chains:
        dotted = _dotted(chain) or ""
        if dotted.startswith(("torch.cuda.amp", "torch.cpu.amp")) and id(chain) not in allowed:
            return None
    return sorted(sites, key=lambda s: (s.node.lineno, s.node.col_offset))


def _allow(node: ast.AST, allowed: set) -> None:
    while isinstance(node, ast.Attribute):
        allowed.add(id(node))
        node = node.value


#: the node classes that may bind a name other than by assignment (``_binds_torch``)
_BINDERS = frozenset(
    {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.arg, ast.Global, ast.Nonlocal, ast.ExceptHandler}
    | {getattr(ast, name) for name in ("MatchAs", "MatchStar", "MatchMapping") if hasattr(ast, name)}
)


def _binds_torch(node: ast.AST) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == "torch"
    if isinstance(node, ast.arg):
        return node.arg == "torch"
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return "torch" in node.names
    if isinstance(node, ast.ExceptHandler):
        return node.name == "torch"
    for field in ("name", "rest"):  # match patterns
        if type(node).__name__.startswith("Match") and getattr(node, field, None) == "torch":
            return True
    return False


#: a dotted name with one of these parts may give the rule an alias or an amp binding
_AMP_WORDS = frozenset({"amp", "autocast", "autocast_mode", "grad_scaler", "GradScaler", "custom_fwd", "custom_bwd"})


#: the packages whose star import may bring in a name the rules resolve (the rule's own
#: table of star exports, apex's); any other module's is as opaque to the LibCST route
_STAR_REFUSED = frozenset({"torch", "apex", "apexcompat"})


def _import_verdict(node: ast.AST, at_top: bool) -> Optional[int]:
    """How many plain ``import torch`` a module-level import holds (``import torch.nn`` binds
    the same name to the same module: allowed there); None for one that binds ``torch``
    otherwise, names amp, or imports everything from torch or apex."""
    names = node.names  # type: ignore[attr-defined]
    plain = 0
    if isinstance(node, ast.ImportFrom):
        bound = [a.asname or a.name for a in names]
        if "torch" in bound or ("*" in bound and (node.module or "").split(".")[0] in _STAR_REFUSED):
            return None  # a star import of another module binds no name the rule resolves
        # what comes from apex (``from apex import amp``) is apex's: never a name the rule rewrites
        from_apex = not node.level and _from_apex(node.module or "")
        words = [] if from_apex else [a.name for a in names] + [a.asname or "" for a in names] + [node.module or ""]
    else:
        binding = [a for a in names if (a.asname or a.name.split(".")[0]) == "torch"]
        if binding and (not at_top or any(a.asname is not None for a in binding)):
            return None
        plain = sum(a.name == "torch" for a in binding)
        words = [w for a in names if not _from_apex(a.name) for w in (a.name, a.asname or "")]
    if any(not _AMP_WORDS.isdisjoint(word.split(".")) for word in words):
        return None
    if any(word.startswith(("torch.cuda", "torch.cpu", "torch.amp")) for word in words):
        return None
    return plain


def _from_apex(module: str) -> bool:
    return module.split(".")[0] in ("apex", "apexcompat")


def _column(line: str, byte_col: int) -> int:
    """The character column of ``ast``'s UTF-8 byte offset in ``line``."""
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8"))


def _site_edits(site: _Site, lines: Sequence[str], newline: str, path: str) -> Optional[Tuple[List[_Edit], Finding]]:
    node = site.node
    func = node if site.bare else node.func  # type: ignore[attr-defined]
    if func.lineno != func.end_lineno:
        return None
    line = lines[func.lineno - 1]
    start, end = _column(line, func.col_offset), _column(line, func.end_col_offset)
    dotted = _dotted(func)
    if line[start:end] != dotted or _opened_before(lines, func.lineno, start):
        return None
    edits = [_Edit(func.lineno, start, end, _NEW_CALLEE[site.kind])]
    new_arg = f'device_type="{site.device}"' if site.kind.startswith("custom_") else f'"{site.device}"'
    if site.bare:
        if start == 0 or line[start - 1] != "@":
            return None
        edits[0] = _Edit(func.lineno, start, end, f"{_NEW_CALLEE[site.kind]}({new_arg})")
        return edits, _finding(path, func.lineno, start - 1 + 1, site)
    if line[end : end + 1] != "(":
        return None
    args: List[ast.AST] = list(node.args) + list(node.keywords)  # type: ignore[attr-defined]
    if any(isinstance(a, ast.Starred) or (isinstance(a, ast.keyword) and a.arg is None) for a in args):
        return None
    if node.args and site.kind != "GradScaler":  # type: ignore[attr-defined]
        return None  # the rule passes them by keyword or moves them: not an insertion
    if not args:
        if line[end + 1 : end + 2] != ")":
            return None
        edits.append(_Edit(func.lineno, end + 1, end + 1, new_arg))
        return edits, _finding(path, func.lineno, start + 1, site)
    first = args[0]
    if not _blank_between(lines, (func.lineno, end + 1), (first.lineno, _column(lines[first.lineno - 1], first.col_offset))):
        return None
    separator = ", "
    if len(args) > 1:
        between = _text_between(lines, args[0], args[1])
        if between is None:
            return None
        one_line = _ONE_LINE_SEP.fullmatch(between)
        broken = _BROKEN_SEP.fullmatch(between) if one_line is None else None
        if one_line is not None:
            separator = between
        elif broken is not None:
            separator = f"{broken.group(1)},{newline}{broken.group(3)}"
        else:
            return None
    if site.kind == "autocast":
        # the rule passes each argument again by keyword, a copy: every separator becomes
        # the first one's layout (``rebuild_args``), so each must be that already
        for left, right in zip(args[1:], args[2:]):
            if _text_between(lines, left, right) != separator:
                return None
        if len(args) > 1 and _text_between(lines, args[0], args[1]) != separator:
            return None
    at = _column(lines[first.lineno - 1], first.col_offset)
    edits.append(_Edit(first.lineno, at, at, new_arg + separator))
    return edits, _finding(path, func.lineno, start + 1, site)


def _finding(path: str, line: int, col: int, site: _Site) -> Finding:
    if site.kind == "autocast":
        code, message = "APX901", autocast_message(site.device)
    elif site.kind == "GradScaler":
        code, message = "APX902", grad_scaler_message(site.device)
    else:
        code, message = "APX903", custom_message(site.kind)
    return Finding(path, line, col, code, message, fixed=True, severity="info")


def _opened_before(lines: Sequence[str], line: int, col: int) -> bool:
    """Whether the code before (``line``, ``col``) may end in an opening parenthesis (the
    call's own, which LibCST counts in the call's position): it does, or the site starts
    its line, whose code before would be on another line."""
    before = lines[line - 1][:col].rstrip(" \t")
    return not before or before.endswith("(")


def _blank_between(lines: Sequence[str], start: Tuple[int, int], end: Tuple[int, int]) -> bool:
    between = _span(lines, start, end)
    return between is not None and between.strip(" \t\r\n") == ""


def _text_between(lines: Sequence[str], first: ast.AST, second: ast.AST) -> Optional[str]:
    start = (first.end_lineno, _column(lines[first.end_lineno - 1], first.end_col_offset))  # type: ignore[attr-defined]
    end = (second.lineno, _column(lines[second.lineno - 1], second.col_offset))  # type: ignore[attr-defined]
    return _span(lines, start, end)


def _span(lines: Sequence[str], start: Tuple[int, int], end: Tuple[int, int]) -> Optional[str]:
    if end < start:
        return None
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1] : end[1]]
    parts = [lines[start[0] - 1][start[1] :]] + list(lines[start[0] : end[0] - 1]) + [lines[end[0] - 1][: end[1]]]
    return "\n".join(parts)


def _apply(lines: Sequence[str], edits: Sequence[_Edit]) -> Optional[List[str]]:
    """``lines`` with the edits made (none may overlap another); a line an edit breaks stays
    one entry holding its line breaks, so the numbering stays the original's."""
    out = list(lines)
    by_line: Dict[int, List[_Edit]] = {}
    for edit in edits:
        by_line.setdefault(edit.line, []).append(edit)
    for number, line_edits in by_line.items():
        line = out[number - 1]
        line_edits.sort(key=lambda e: (e.start, e.end))
        for before, after in zip(line_edits, line_edits[1:]):
            if after.start < before.end:
                return None
        for edit in reversed(line_edits):
            line = line[: edit.start] + edit.text + line[edit.end :]
        out[number - 1] = line
    return out


def _fits(sites: Sequence[_Site], lines: Sequence[str], new_lines: Sequence[str]) -> bool:
    """Whether no site's call is one the rule would split over lines: a call on one line in a
    simple statement whose first line grows past ``MAX_LINE`` (the rule's ``_wrap_long_calls``).
    A simple statement that does not start its line (``a; b``, a suite, a continued line) is
    refused: which line LibCST would measure is not worked out here."""
    for site in sites:
        if site.bare or isinstance(site.statement, _COMPOUND):
            continue
        call = site.node
        if call.lineno != call.end_lineno:  # type: ignore[attr-defined]
            continue  # the rule only splits a call it rebuilt on one line
        number = site.statement.lineno
        old = lines[number - 1]
        if _column(old, site.statement.col_offset) != len(old) - len(old.lstrip()):
            return False
        if number > 1 and lines[number - 2].rstrip("\r").endswith("\\"):
            return False
        new = new_lines[number - 1]
        if "\n" in new or len(new.rstrip("\r")) > MAX_LINE:
            return False
    return True
