"""Every run row is written through warehouse/lifecycle.py's RunLifecycle: `running` before the
work, then its one end. A run row written beside it (a flow upserting its rows at the end, as the
evaluation flow once did) could skip `running`, or leave a row missing when the process dies.

So the calls that write rows (`write_runs`, `record_runs`) may stand only in the writers a
RunLifecycle is given: lifecycle.write_to, tasks/records.run_writer (its `record-runs` task) and
the server's write_runs."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("conductor", "flows", "tasks", "server", "registry", "warehouse", "deployments")
# (file, function) where a row write may stand: the writers.
WRITERS = {
    ("warehouse/lifecycle.py", "write"),  # write_to's writer
    ("tasks/records.py", "record_runs"),  # the task run_writer calls
    ("tasks/records.py", "write"),  # run_writer's writer
    ("server/recording.py", "write_runs"),  # the server's writer (never fatal)
    ("server/recording.py", "run_lifecycle"),  # its writer, a lambda over write_runs
}
ROW_WRITES = {"write_runs", "record_runs"}


def called_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "fn":
        f = f.value  # a Prefect task called as a plain function
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


class RowWrites(ast.NodeVisitor):
    """Each row-writing call, with the innermost function it stands in."""

    def __init__(self) -> None:
        self.stack: list[str] = ["<module>"]
        self.calls: list[tuple[str, int]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        if called_name(node) in ROW_WRITES:
            self.calls.append((self.stack[-1], node.lineno))
        self.generic_visit(node)


def row_writes() -> list[tuple[str, str, int]]:
    """(file, function, line) of every row write in the packages."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            visitor = RowWrites()
            visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
            found += [(rel, fn, line) for fn, line in visitor.calls]
    return found


def test_run_rows_are_written_only_by_a_lifecycles_writer() -> None:
    assert [w for w in row_writes() if w[:2] not in WRITERS] == []


def test_the_scan_sees_the_writers_it_allows() -> None:
    """The scan finds the writers themselves, so an empty answer above is not a scan that sees nothing."""
    assert {w[:2] for w in row_writes()} == WRITERS
