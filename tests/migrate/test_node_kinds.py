"""The rules test some LibCST node classes by ``type(node) is C`` (an ``isinstance``
against LibCST's ABC-based classes costs a Python call per miss): that reads the same only
while no class is derived from a concrete node class, in LibCST or in this package."""

from __future__ import annotations

import inspect

import libcst as cst

import migrate.engine  # noqa: F401 - every rule module imported, with any class it derives


def _node_classes():
    pending, found = [cst.CSTNode], set()
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return found


def test_no_node_class_is_derived_from_a_concrete_one() -> None:
    derived = {
        cls.__qualname__: [sub.__qualname__ for sub in cls.__subclasses__()]
        for cls in _node_classes()
        if not inspect.isabstract(cls) and not cls.__name__.startswith("Base") and cls.__subclasses__()
    }
    assert derived == {}
