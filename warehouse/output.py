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


def rounded(table: pa.Table) -> pa.Table:
    """`table` with its floating-point columns rounded for a terminal: 4 decimals from 1 up, 4
    significant digits below 1 (`50.04509480000002` -> 50.0451, 0.005421337 -> 0.005421).
    What --csv and --json write is never rounded."""
    import numpy as np
    import pyarrow.compute as pc

    columns = []
    for column in table.columns:
        if pa.types.is_floating(column.type):
            values = column.to_numpy(zero_copy_only=False).astype("float64")
            with np.errstate(divide="ignore", invalid="ignore"):
                magnitude = np.floor(np.log10(np.abs(values)))
            digits = np.clip(np.nan_to_num(3 - magnitude, nan=4, posinf=4, neginf=4), 4, 15).astype(int)
            scale = np.power(10.0, digits)
            out = np.where(np.isfinite(values), np.round(values * scale) / scale, values)
            column = pa.array(out, type=column.type, mask=pc.is_null(column).to_numpy(zero_copy_only=False))
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def vertical(table: pa.Table, *, max_rows: int) -> str:
    """One line per column per row, as DuckDB's `line` mode prints (the name right-aligned, ` = `,
    the value whole): for a result wider than the terminal, so that no column is hidden."""
    names = table.column_names
    pad = max((len(n) for n in names), default=0)
    blocks = ["\n".join(f"{name:>{pad}} = {_line_cell(value)}" for name, value in row.items())
              for row in table.slice(0, max_rows).to_pylist()]
    n, more = table.num_rows, table.num_rows - max_rows
    note = f"{n} row{'s' if n != 1 else ''}, {table.num_columns} columns (one line per column: wider than the terminal)"
    if more > 0:
        note += f"; {more} rows not shown (--max-rows, or --csv / --json prints all)"
    return "\n\n".join(blocks) + ("\n\n" if blocks else "") + note + "\n"


def _line_cell(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)  # already rounded: its shortest repr
    return _cell(value)


def fits(text: str, width: int) -> bool:
    return max((len(line) for line in text.splitlines()), default=0) <= width


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
