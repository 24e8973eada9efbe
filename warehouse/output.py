"""Render query results (Arrow tables): DuckDB's box renderer for `conductor sql`, DuckDB's CSV
and JSON writers for its --csv/--json, and a rich table for the other commands' short tables."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import tempfile
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal, TextIO

import duckdb
import pyarrow as pa
from rich.console import Console
from rich.table import Table

from warehouse.sql import quote, registered


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def print_table(console: Console, table: pa.Table, *, max_rows: int = 200) -> None:
    view = Table(show_lines=False, highlight=False)
    for name in table.column_names:
        view.add_column(name, overflow="fold")
    for row in table.slice(0, max_rows).to_pylist():
        view.add_row(*[_cell(v) for v in row.values()])
    console.print(view)
    more = table.num_rows - max_rows
    note = f"{table.num_rows} row{'s' if table.num_rows != 1 else ''}"
    console.print(f"{note} ({more} not shown; --csv or --json prints all)" if more > 0 else note, style="dim")


# DuckDB's footer when it elided rows or columns: "43 rows (5 shown)", "4 rows   10 columns (4 shown)".
_ROW_COUNT = re.compile(r"\b\d+ rows?\b")


@contextlib.contextmanager
def _in_memory() -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB of its own for rendering a result already read: it opens no file, and shows
    timestamps in UTC as the warehouse's own connection does."""
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        yield con
    finally:
        con.close()


def box(table: pa.Table, *, width: int, max_rows: int) -> str:
    """`table` drawn by DuckDB's own box renderer, what its CLI prints: at most `width` columns of
    text (columns that do not fit are elided as "…" and counted in the footer, long cells cut
    short), at most `max_rows` rows (the middle elided), each column's type under its name; and
    always a row count (DuckDB prints one only when it elides something)."""
    out = io.StringIO()
    with _in_memory() as con, contextlib.redirect_stdout(out):  # `show` prints; the caller says where to
        con.from_arrow(table).show(max_width=width, max_rows=max_rows)
    text = out.getvalue().rstrip("\n")
    if not _ROW_COUNT.search(text.splitlines()[-1]):
        text += f"\n  {table.num_rows} row{'s' if table.num_rows != 1 else ''}"
    return text + "\n"


def write_result(table: pa.Table, fmt: Literal["csv", "json"], out: TextIO) -> None:
    """`table` as CSV (a header, then DuckDB's CSV writer) or as one JSON array of row objects
    (DuckDB's JSON writer), written to `out`. DuckDB writes files, so it goes through a temporary one."""
    options = "FORMAT csv, HEADER true" if fmt == "csv" else "FORMAT json, ARRAY true"
    with tempfile.TemporaryDirectory(prefix="conductor-sql-") as tmp, _in_memory() as con:
        path = Path(tmp) / f"result.{fmt}"
        with registered(con, result=table):
            con.execute(f"COPY result TO {quote(str(path))} ({options})")
        with path.open(encoding="utf-8") as f:
            shutil.copyfileobj(f, out)
