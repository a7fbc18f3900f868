"""The run's shared stdlib trees (``stdlib_trees``) and the index's node table (``ast_table``)."""

import ast

from migrate import stdlib_trees
from migrate.ast_table import SCOPE_NODES, FastNodeVisitor, NodeTable

SOURCE = '''\
import torch


def train(model, batches, *, steps=2):
    total = 0.0
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean() if steps else -x
        total += loss.item()

    def report(value=lambda v: v + 1):
        return value(total)

    return report()


class Box:
    size = [n for n in range(3) if n > 0]
'''


def test_a_text_is_parsed_once_and_forgotten_at_the_end_of_a_run():
    stdlib_trees.forget()
    first = stdlib_trees.parse(SOURCE)
    assert first is not None and stdlib_trees.parse(SOURCE) is first
    # the file's bytes (with a coding cookie) denote the same text as the decoded string
    assert stdlib_trees.parse(SOURCE.encode("utf-8")) is first
    stdlib_trees.forget()
    assert stdlib_trees.parse(SOURCE) is not first


def test_the_end_of_a_run_keeps_the_trees_only_for_a_process_about_to_end(monkeypatch):
    stdlib_trees.forget()
    first = stdlib_trees.parse(SOURCE)
    stdlib_trees.end_of_run()
    assert stdlib_trees.parse(SOURCE) is not first  # a caller that goes on: freed
    monkeypatch.setattr(stdlib_trees, "_left_to_exit", False)
    stdlib_trees.leave_to_exit()  # what the command does before its run
    kept = stdlib_trees.parse(SOURCE)
    stdlib_trees.end_of_run()
    assert stdlib_trees.parse(SOURCE) is kept


def test_text_the_stdlib_rejects_gives_none():
    assert stdlib_trees.parse("def broken(:\n") is None
    assert stdlib_trees.parse(b"\xff\xfe not utf-8 \xff") is None
    latin = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    tree = stdlib_trees.parse(latin.encode("latin-1"))
    assert tree is not None and tree.body[0].value.value == "caf\xe9"


def _listed(nodes):
    """The nodes a table lists: every node but the parser's shared ones (``ast.Load()``, operators)."""
    shared = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
    return [n for n in nodes if not isinstance(n, shared)]


def test_a_subtree_is_a_slice_holding_what_ast_walk_gives():
    tree = ast.parse(SOURCE)
    table = NodeTable(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
            continue
        under = table.under(node)
        assert under[0] is node
        assert sorted(map(id, under)) == sorted(map(id, _listed(ast.walk(node))))
        for child in ast.iter_child_nodes(node):
            if _listed([child]):
                assert table.parents[child] is node


def test_own_nodes_leave_out_nested_scopes():
    tree = ast.parse(SOURCE)
    table = NodeTable(tree)
    train = tree.body[1]
    own = table.own_nodes(train)
    assert not any(isinstance(n, SCOPE_NODES) for n in own)
    report = next(n for n in ast.walk(train) if isinstance(n, ast.FunctionDef) and n.name == "report")
    assert not set(map(id, table.under(report))) & set(map(id, own))
    assert any(isinstance(n, ast.AugAssign) for n in own)


def test_the_fast_visitor_visits_what_the_stdlib_one_does():
    class Names(ast.NodeVisitor):
        def __init__(self):
            self.seen = []

        def visit_Name(self, node):
            self.seen.append(node.id)
            self.generic_visit(node)

    class FastNames(FastNodeVisitor, Names):
        pass

    tree = ast.parse(SOURCE)
    slow, fast = Names(), FastNames()
    slow.visit(tree)
    fast.visit(tree)
    assert fast.seen == slow.seen and "total" in fast.seen


#: fields whose lists hold more than nodes: names (``global``), a dict's ``**`` (None), a
#: comparison's operators, a class pattern's keyword names
MIXED = '''\
def f(a, *b, c=1, **d):
    global g
    x = {**a, "k": 1 < a <= 2, "n": not a and -a or a + 1}
    x += 1
    match x:
        case Point(1, y=2) | {"k": 3, **rest}:
            pass
    return f"{x!r:>{a}}"
'''


def test_the_table_and_the_fast_visitor_list_every_node_but_the_shared_ones_on_real_code():
    from pathlib import Path

    class Every(FastNodeVisitor):
        def __init__(self):
            self.seen = []

        def visit(self, node):
            self.seen.append(node)
            return super().visit(node)

    root = Path(__file__).resolve().parents[2] / "migrate"
    for text in [MIXED] + [p.read_text() for p in sorted(root.glob("*.py"))[:40]]:
        tree = ast.parse(text)
        table = NodeTable(tree)
        every = Every()
        every.visit(tree)
        # constants are visited, nothing below them
        assert [id(n) for n in every.seen] == [id(n) for n in table.nodes]
        assert sorted(map(id, table.nodes)) == sorted(map(id, _listed(ast.walk(tree))))
        for node in table.nodes:
            for child in _listed(list(ast.iter_child_nodes(node))):
                assert table.parents[child] is node


def test_the_plan_is_built_without_cyclic_collections_and_the_collector_comes_back(monkeypatch):
    import gc

    from migrate import pipeline
    from migrate.settings import Settings

    seen = []
    monkeypatch.setattr(pipeline, "_plan", lambda *args: seen.append(gc.isenabled()))
    assert gc.isenabled()
    pipeline.migrate_repository([("a.py", b"x = 1\n")], ["/r/a.py"], Settings(), 1, ["/r"])
    assert seen == [False] and gc.isenabled()
