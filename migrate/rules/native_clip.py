"""APX331: a native GradScaler loop that clips the gradients it left scaled.

``scaler.scale(loss).backward()`` leaves every gradient multiplied by the loss scale until
``scaler.unscale_(optimizer)`` (or ``scaler.step``, which unscales what is still scaled);
a norm or value clip between the two cuts the scaled gradients, so its threshold is met
at the scale times the real norm (65536 at the start): it almost never clips.  The rules
that rewrite ``amp.scale_loss`` put the ``unscale_`` before every clip they see; a loop the
original already wrote with its own GradScaler (neural_sp's ``torch >= 1.6`` branch, kept
by APX249) is its authors', and the tool does not change what it trains.  It warns instead,
with a TODO above the clip that names it and says to call ``scaler.unscale_(optimizer)``
before it.

Fires where, in one function (or the module's top level), source order gives a
``S.scale(...).backward()``, then the clip, then ``S.step(...)``, and no ``S.unscale_(...)``
between that backward and the step, nor a call there of a same-file function or method that
calls ``unscale_``.  A clip whose threshold reads ``S.get_scale()`` (the tool's own rewrite
of a clip on every micro-step, APX328) is meant for the scaled gradients and is left alone.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Any, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from .. import stdlib_trees
from ._amp_rule import AmpRule
from ._clip_functions import SCALABLE_CLIPS
from ._amp_shared_step import opposite_sides
from ._amp_sites import exclusive
from ._edits import code_of
from ._tree import DEFINITIONS, children, walk_of
from .base import Example

#: the last names of ``SCALABLE_CLIPS``
_CLIP_NAMES = frozenset(name.rsplit(".", 1)[1] for name in SCALABLE_CLIPS)

#: the fixed start of the TODO this rule writes (a later run reports the comment again)
CLIP_TODO = "clips the gradients that"

CODE = "APX331"

#: a training loop with a GradScaler of its own that clips at the accumulation boundary
OWN_LOOP = """\
import torch
{head}

def fit(model, optimizer, batches, accumulate, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        scaler.scale(loss).backward()
        if (i + 1) % accumulate == 0:
{unscale}{todo}            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
"""
#: a loop whose half branch unscales before its clip and whose float32 branch clips as it is
BRANCHED_LOOP = """\
import torch

# apex's amp used to scale this loop


def fit(model, optimizer, batches, half, max_norm):
    scaler = torch.amp.GradScaler("cuda", enabled=half)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=half):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if half:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
"""
OWN_LOOP_TODO = """\
            # TODO(apexcompat): torch.nn.utils.clip_grad_norm_(...) clips the gradients that
            #   scaler.scale(loss).backward() left multiplied by the loss scale (its threshold is
            #   met at scaler.get_scale() times the real norm): call scaler.unscale_(optimizer)
            #   before it
"""


def _receiver(call: cst.Call, method: str) -> Optional[str]:
    """``S`` of a call ``S.<method>(...)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == method:
        return code_of(func.value)
    return None


#: ``S.scale(...).backward(`` on one line, as the scale-loss rule writes it: where the text
#: has it, the rule has work without a parse of the text (one in a string or a comment only
#: costs the rule's own look at the tree, which finds no call)
_WRITTEN_SCALED_BACKWARD = re.compile(rb"\.scale\((?:[^()\n]|\([^()\n]*\))*\)\.backward\(")


@lru_cache(maxsize=16)
def _holds_scaled_backward(source: bytes) -> bool:
    """Whether the text ``source`` calls ``S.scale(...).backward(...)`` somewhere (or does not
    parse, or writes one in a string or a comment: LibCST decides then)."""
    if _WRITTEN_SCALED_BACKWARD.search(source):
        return True
    tree = stdlib_trees.parse(source)
    return tree is None or any(_scaled_backward_node(node) for node in ast.walk(tree))


def _scaled_backward_node(node: ast.AST) -> bool:
    """Whether the stdlib node ``node`` is a call ``S.scale(...).backward(...)`` (the shape of
    ``_scaled_backward``)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "backward":
        return False
    inner = node.func.value
    return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "scale"


def _scaled_backward(call: cst.Call) -> Optional[str]:
    """``S`` of ``S.scale(loss).backward(...)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward" and isinstance(func.value, cst.Call):
        return _receiver(func.value, "scale")
    return None


def _own_calls(body: cst.CSTNode) -> Iterator[cst.Call]:
    """The calls of ``body`` in source order, not those of nested definitions."""
    stack: List[Any] = [body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            yield node
        kids = [c for c in children(node) if type(c) not in DEFINITIONS]
        stack.extend(reversed(kids))


class NativeClipRule(AmpRule):
    """A clip between a native GradScaler's scaled backward and its step, with no unscale_
    before it, gets a warning TODO."""

    DESCRIPTION = "Warn where a native GradScaler loop clips the gradients it left scaled."
    CODES = {
        "APX331": "a native GradScaler loop clips the scaled gradients: call scaler.unscale_(optimizer) before the clip",
    }
    TRIGGERS = (b"clip_grad",)
    LIVE_TRIGGERS = ("clip_grad",)
    KNOWN = {CLIP_TODO: (CODE, "warning", False)}
    EXAMPLES = [
        Example(
            # the file's own native loop (beside an apex import it no longer uses) clips
            # before the step with no unscale_: warned, left as its authors wrote it
            "native-loop-clipping-scaled-gradients-is-warned",
            before=OWN_LOOP.format(head="from apex import amp  # the old fp16 path\n", todo="", unscale=""),
            after=OWN_LOOP.format(head="", todo=OWN_LOOP_TODO, unscale=""),
            codes=("APX101", "APX331"),
        ),
    ]
    NOOP_EXAMPLES = [
        Example(
            # the same loop with the unscale_ before the clip: nothing to say
            "native-loop-unscaling-before-its-clip",
            before=OWN_LOOP.format(
                head="# ported from apex amp\n", todo="", unscale="            scaler.unscale_(optimizer)\n"
            ),
            after=None,
        ),
        Example(
            # the clip without unscale_ is on the float32 branch, which never scaled: the
            # scaled backward is in the other branch of the same if
            "native-loop-clipping-on-its-unscaled-branch",
            before=BRANCHED_LOOP,
            after=None,
        ),
    ]

    @classmethod
    def has_work(cls, source: bytes) -> bool:
        # without ``S.scale(...).backward()`` anywhere and a TODO of ours to report again,
        # ``plan`` stops at once (the rules before may have written the scaled backward:
        # the engine asks about the text the rule is about to get)
        if not super().has_work(source):
            return False
        return not source.isascii() or CLIP_TODO.encode() in source or _holds_scaled_backward(source)

    def plan(self, module: cst.Module) -> None:
        # only a function (or the top level) with a scaled backward of its own can clip
        # scaled gradients: the others are not scanned at all (most functions of a file)
        calls = walk_of(module, cst.Call)
        scaled = {self._own_scope(call) for call in calls if _scaled_backward(call) is not None}
        scaled.discard(None)
        if not scaled:
            return
        unscaling = self._unscaling_functions(calls)
        for scope in [module, *walk_of(module, cst.FunctionDef)]:
            if scope in scaled:
                self._check(scope.body if isinstance(scope, cst.FunctionDef) else scope, unscaling)

    def _own_scope(self, call: cst.Call) -> Optional[cst.CSTNode]:
        """The function whose body holds ``call`` outside any nested definition, or the
        module for a call of the top level; None for a call that ``_own_calls`` of no
        function gives (in a lambda, a class body, a signature or a decorator)."""
        parents = self.parents
        below: Any = call
        cur = parents.get(call)
        while cur is not None:
            if isinstance(cur, cst.FunctionDef):
                return cur if below is cur.body else None
            if isinstance(cur, (cst.ClassDef, cst.Lambda)):
                return None
            below, cur = cur, parents.get(cur)
        return below if isinstance(below, cst.Module) else None

    def _unscaling_functions(self, calls: Sequence[cst.Call]) -> Set[str]:
        """Names of the file's functions and methods that call ``unscale_`` themselves."""
        found: Set[str] = set()
        for call in calls:
            if _receiver(call, "unscale_") is not None:
                scope = self._own_scope(call)
                if isinstance(scope, cst.FunctionDef):
                    found.add(scope.name.value)
        return found

    def _check(self, body: cst.CSTNode, unscaling: Set[str]) -> None:
        kinds: List[Tuple[str, str, cst.Call]] = []
        for call in _own_calls(body):
            scaled = _scaled_backward(call)
            if scaled is not None:
                kinds.append(("backward", scaled, call))
            elif _receiver(call, "unscale_") is not None:
                kinds.append(("unscale", _receiver(call, "unscale_") or "", call))
            elif _receiver(call, "step") is not None and call.args:
                kinds.append(("step", _receiver(call, "step") or "", call))
            elif self._may_clip(call):
                # what it resolves to is asked only of a clip that cuts scaled gradients
                # (below): the scope analysis of the whole file costs more than the rest
                unscales = code_of(call.func).split(".")[-1] in unscaling
                if unscales and not self._is_clip(call):
                    kinds.append(("unscale", "*", call))
                else:
                    kinds.append(("clip", "", call))
            elif code_of(call.func).split(".")[-1] in unscaling:
                kinds.append(("unscale", "*", call))
        if not any(kind == "clip" for kind, _, _ in kinds):
            return  # only a clip is ever warned: the lines of the others are not needed
        events = sorted(((self.line_of(call), kind, s, call) for kind, s, call in kinds), key=lambda e: e[0])
        for line, kind, _, call in events:
            if kind == "clip":
                scaler = self._left_scaled(events, call, line)
                if scaler is not None and self._is_clip(call):
                    self._warn(call, scaler)

    def _is_clip(self, call: cst.Call) -> bool:
        return bool(self.qualified_names(call.func) & SCALABLE_CLIPS)

    def _may_clip(self, call: cst.Call) -> bool:
        """Whether ``call.func`` may resolve to one of ``SCALABLE_CLIPS``, told without the
        scope analysis: a qualified name keeps an attribute's last name as written, and a
        bare name resolves into another module only through an import that binds it, under
        the imported name or an ``as`` alias of the file."""
        func = call.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in _CLIP_NAMES
        if isinstance(func, cst.Name):
            return func.value in _CLIP_NAMES or func.value in self._import_aliases()
        return False

    def _import_aliases(self) -> FrozenSet[str]:
        aliases = getattr(self, "_aliases", None)
        if aliases is None:
            aliases = self._aliases = frozenset(
                alias.asname.name.value
                for alias in walk_of(self.tree, cst.ImportAlias)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
            )
        return aliases

    def _left_scaled(self, events: List[Tuple[int, str, str, cst.Call]], clip: cst.Call, at: int) -> Optional[str]:
        """The GradScaler whose scaled gradients the clip at line ``at`` cuts: the latest scaled
        backward before it that can run with it, then a step of that scaler after it, and no
        unscale_ that can run with the clip between the two; None when there is none."""
        parents = self.parents
        live = [e for e in events if not exclusive(parents, e[3], clip) and not opposite_sides(parents, e[3], clip)]
        backwards = [(line, s) for line, kind, s, _ in live if kind == "backward" and line < at]
        if not backwards:
            return None
        start, name = backwards[-1]
        if f"{name}.get_scale" in code_of(clip):
            return None  # meant for the scaled gradients (APX328)
        steps = [line for line, kind, s, _ in live if kind == "step" and s == name and line > at]
        if not steps:
            return None
        if any(kind == "unscale" and s in (name, "*") and start < line < steps[0] for line, kind, s, _ in live):
            return None
        return name

    def _warn(self, clip: cst.Call, scaler: str) -> None:
        self.todo(
            clip,
            CODE,
            f"{code_of(clip.func)}(...) {CLIP_TODO} {scaler}.scale(loss).backward() left multiplied by the loss "
            f"scale (its threshold is met at {scaler}.get_scale() times the real norm): call "
            f"{scaler}.unscale_(optimizer) before it",
            severity="warning",
        )
