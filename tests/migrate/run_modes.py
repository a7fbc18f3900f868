"""A fixture for the analyses that work per statement inside a file's run: each test using
``within_a_run`` runs twice, outside a run (whole-tree analysis) and inside one (facts kept
per top-level statement, ``migrate.rules._tree.printing_by_statement``)."""

from __future__ import annotations

import pytest

from migrate.rules._tree import StatementTexts, printing_by_statement


@pytest.fixture(params=["whole", "statementwise"])
def within_a_run(request):
    if request.param == "whole":
        yield request.param
        return
    with printing_by_statement(StatementTexts()):
        yield request.param
