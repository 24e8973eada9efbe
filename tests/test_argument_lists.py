"""Typed values instead of long argument lists (issue 24): no call in the modules below passes more
than five arguments. Read from the source with `ast`, so a long call anywhere in them (a model
built field by field, a task given its inputs one by one) fails here, naming the line.

And (issue 34) no function in flows/, tasks/ or server/ takes more than six parameters, CLI
command functions aside (their options are the command line): a longer list is a typed value
(`ChunkPlan`, `BenchmarkSolve`, `EvaluationReport`, `CurationConfig`, ...)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MOST = 5
CHECKED = ("flows/nightly.py",)
MOST_PARAMETERS = 6
LAYERS = ("flows", "tasks", "server")


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


def _is_cli_command(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A typer command: some parameter's default is `typer.Option(...)` or `typer.Argument(...)`."""
    defaults = [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]
    return any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and isinstance(d.func.value, ast.Name)
               and d.func.value.id == "typer" for d in defaults)


def long_signatures(source: str) -> list[tuple[int, str, int]]:
    """(line, name, parameters) of each function taking more than MOST_PARAMETERS (`self` and
    `cls` aside; `*args` and `**kwargs` count one each), CLI commands aside."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or _is_cli_command(node):
            continue
        a = node.args
        names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x))]
        n = len([name for name in names if name not in ("self", "cls")])
        if n > MOST_PARAMETERS:
            found.append((node.lineno, node.name, n))
    return found


def test_no_function_in_flows_tasks_or_server_takes_more_than_six_parameters() -> None:
    found = {str(path.relative_to(REPO)): hits for layer in LAYERS for path in sorted((REPO / layer).rglob("*.py"))
             if (hits := long_signatures(path.read_text(encoding="utf-8")))}
    assert found == {}


def test_a_seventh_parameter_is_counted_and_a_cli_command_is_not() -> None:
    assert long_signatures("def f(self, a, b, c, d, e, f): ...\nasync def g(a, *b, c, d, e, **f): ...\n") == []
    assert long_signatures("class C:\n    def m(self, a, b, c, d, e, f, *, g=1): ...\n") == [(2, "m", 7)]
    assert long_signatures("def f(a, b, c, d, e, f, *g): ...\n") == [(1, "f", 7)]
    cli = "def cmd(a=typer.Option(1), b=2, c=3, d=4, e=5, f=6, g=7): ...\n"
    assert long_signatures(cli) == [] and long_signatures(cli.replace("typer.Option(1)", "1")) == [(1, "cmd", 7)]
