"""Returns of a setup helper before its ``amp.initialize``: the path without mixed precision.

A helper that initializes and hands back what it made often leaves first when mixed
precision is off::

    def setup(model, optimizer, args):
        if not args.fp16:
            return model, optimizer
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
        return model, optimizer

When the GradScaler the initialize becomes is returned as one more value
(``_amp_sites._returned_scaler``), such an early return gives back a disabled one
(``torch.amp.GradScaler(..., enabled=False)``): on that path apex.amp was never
initialized, so the original could only train there without its loss scaling (an
``amp.scale_loss`` on that path raised for want of apex's state), which is what a disabled
GradScaler does (its autocast switch is off, ``scaler.step(opt)`` is ``opt.step()``).

Proven only for a return in a statement of the helper's own body before the one holding
every initialize, a tuple of as many values as the others, under ``if`` tests that read
nothing but the helper's parameters (``half``, ``args.fp16``) which the helper never
rebinds or sets: a test on state the helper changes (a run-once flag, set when it first
initialized) would hand a later caller a disabled GradScaler where apex's state from the
first call was still on.
"""

from __future__ import annotations

from typing import Any, Optional, Set

import libcst as cst

from ._edits import code_of


def early_return_ok(parents: Any, helper: cst.FunctionDef, ret: cst.Return, width: Optional[int]) -> bool:
    """Whether ``ret`` (a return of ``helper`` before its initializes) may hand back a
    disabled GradScaler, as above."""
    value = ret.value
    if not isinstance(value, cst.Tuple) or any(isinstance(e, cst.StarredElement) for e in value.elements):
        return False
    if width is not None and len(value.elements) != width:
        return False
    params = _parameter_names(helper)
    written = _written_roots(helper)
    node = ret
    while node is not helper:
        parent = parents.get(node)
        if parent is None or isinstance(parent, (cst.For, cst.While, cst.Try, cst.With)):
            return False
        if isinstance(parent, cst.If) and not _reads_only(parent.test, params, written):
            return False  # its body or its else (an elif's ``if`` too): the test decides the path
        node = parent
    return True


def _parameter_names(func: cst.FunctionDef) -> Set[str]:
    p = func.params
    return {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}


def _written_roots(func: cst.FunctionDef) -> Set[str]:
    """The dotted texts the function assigns to (``args.fp16``, ``half``), and the names it
    rebinds."""
    from ._amp_sites import _assigned_texts  # its module imports this one

    return _assigned_texts(func.body, skip=func.name)


def _reads_only(test: cst.BaseExpression, params: Set[str], written: Set[str]) -> bool:
    """``test`` is built of ``not``/``and``/``or`` over parameters and their attributes
    (``half``, ``args.fp16``) none of which the function writes (nor an attribute under it)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _reads_only(test.expression, params, written)
    if isinstance(test, cst.BooleanOperation):
        return _reads_only(test.left, params, written) and _reads_only(test.right, params, written)
    if not isinstance(test, (cst.Name, cst.Attribute)):
        return False
    text = code_of(test)
    root = text.split(".")[0]
    if root not in params or not all(part.isidentifier() for part in text.split(".")):
        return False
    return not any(w == text or w.startswith(text + ".") or text.startswith(w + ".") or w == root for w in written)
