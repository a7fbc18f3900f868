"""The stdlib-tree walks of ``ast_table``: the nodes ``ast.walk`` gives, less the parser's
shared ones (contexts, operators), in pre-order."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from migrate.ast_table import child_nodes, walk_nodes

#: nodes the parser shares between all their uses: never listed
SHARED = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)

SAMPLES = [
    "import torch.cuda.amp as A\nfrom apex import amp as a, optimizers\n",
    "x = not a and b or -c\ny = [i + 1 for i in range(3) if i < 2]\nz = {**d, 'k': f'{v!r:>{w}}'}\n",
    "@dec(1)\nasync def f(a, /, b=2, *c, d, **e) -> int:\n    global g\n    async with m as n:\n        yield n\n",
    "class C(B, metaclass=M):\n    def m(self):\n        try:\n            pass\n        except E as e:\n            raise\n",
    "match p:\n    case {'k': v, **rest}:\n        pass\n    case [1, *others] | (a as b):\n        pass\n",
]


def _expected(tree: ast.AST) -> list:
    return [node for node in ast.walk(tree) if not isinstance(node, SHARED)]


@pytest.mark.parametrize("code", SAMPLES + [Path(ast.__file__).read_text()], ids=[*map(str, range(len(SAMPLES))), "ast.py"])
def test_walk_nodes_lists_what_ast_walk_gives_less_the_shared_nodes(code: str) -> None:
    tree = ast.parse(code)
    walked = walk_nodes(tree)
    assert sorted(map(id, walked)) == sorted(map(id, _expected(tree)))
    assert len({id(n) for n in walked}) == len(walked)  # each once


def test_walk_nodes_is_in_pre_order_and_child_nodes_in_field_order() -> None:
    tree = ast.parse("def f(a):\n    return g(a.b, c)[0]\n")
    assert [type(n).__name__ for n in walk_nodes(tree)] == [
        "Module", "FunctionDef", "arguments", "arg", "Return", "Subscript", "Call", "Name",
        "Attribute", "Name", "Name", "Constant",
    ]
    call = tree.body[0].body[0].value.value
    assert [type(n).__name__ for n in child_nodes(call)] == ["Name", "Attribute", "Name"]
