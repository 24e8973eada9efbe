"""Typed values instead of long argument lists (issue 24): no call in the modules below passes more
than five arguments. Read from the source with `ast`, so a long call anywhere in them (a model
built field by field, a task given its inputs one by one) fails here, naming the line."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MOST = 5
CHECKED = ("flows/nightly.py",)


def long_calls(source: str) -> list[tuple[int, int]]:
    """(line, number of arguments) of each call passing more than MOST; `*xs` and `**kw` count one each."""
    return [(node.lineno, n) for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and (n := len(node.args) + len(node.keywords)) > MOST]


def test_the_nightly_flow_passes_no_argument_list_longer_than_five() -> None:
    for rel in CHECKED:
        assert long_calls((REPO / rel).read_text()) == [], rel


def test_a_sixth_argument_is_counted_however_it_is_passed() -> None:
    assert long_calls("f(a, b, c, d, e)\ng(a, *b, c=1, d=2, **e)\n") == []
    assert long_calls("x = 1\nf(a, b, c, d, e, f)\n") == [(2, 6)]
    assert long_calls("f(g(a=1, b=2, c=3, d=4, e=5, **f))\n") == [(1, 6)]
