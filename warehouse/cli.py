"""`conductor sql` and `conductor warehouse ...`: query, inspect, export and feed the warehouse."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Optional

import duckdb
import pyarrow as pa
import typer

from conductor.cli.common import UserError, add_user_errors, console, err_console, fail, user_errors
from conductor.config import Settings
from warehouse import migrations
from warehouse.sql import quote
from warehouse.output import box, fits, print_table, rounded, vertical, write_result
from warehouse.staging import ingest_staged, pending
from warehouse.store import TraceStore

WIDE = 100_000  # the box at any width, to see whether it fits the terminal
DB_HELP = "Warehouse file (default: $CONDUCTOR_HOME/warehouse.duckdb)."
wh_app = typer.Typer(help="Inspect, migrate, export and feed the trace warehouse.", no_args_is_help=True)


def _path(db: Optional[Path]) -> Path:
    return db if db is not None else Settings().warehouse_path


def open_for_reading(db: Optional[Path], *, write: bool = False) -> TraceStore:
    """Open read-only (other readers may share the file); an older schema is migrated first."""
    path = _path(db)
    if not path.exists():
        raise UserError(f"no warehouse at {path} (`conductor warehouse migrate` creates an empty one)")
    if write:
        return TraceStore(path)
    try:
        return TraceStore(path, read_only=True)
    except migrations.SchemaError as exc:
        if "newer than this code" in str(exc):
            raise
        TraceStore(path).close()  # migrate, then reopen read-only
        return TraceStore(path, read_only=True)


def _emit(store: TraceStore, sql: str, fmt: str, max_rows: int) -> None:
    table = store.query(sql)
    if table.num_columns == 0:  # a statement with no result (--write: UPDATE, CREATE ...)
        console.print("ok", style="dim")
    elif fmt in ("csv", "json"):
        write_result(table, fmt, sys.stdout)  # type: ignore[arg-type]
    else:
        # The terminal's width (80 when it is not a terminal, or $COLUMNS). DuckDB's box elides the
        # columns that do not fit; a result wider than the terminal is shown one line per column
        # instead, so that no column is hidden. Floats are rounded for the eye (--csv/--json are exact).
        width = shutil.get_terminal_size().columns
        shown = rounded(table)
        whole = box(shown, width=WIDE, max_rows=max_rows)
        sys.stdout.write(whole if fits(whole, width) else vertical(shown, max_rows=max_rows))


def _repl(store: TraceStore, fmt: str, max_rows: int) -> None:
    """Read statements until `;` (several lines allowed); `.quit` or end of input leaves."""
    interactive = sys.stdin.isatty()
    buf: list[str] = []
    if interactive:
        console.print("conductor sql: end statements with ';', '.tables' lists tables, '.quit' leaves.")
    while True:
        if interactive:
            console.print("sql> " if not buf else "...> ", end="")
        line = sys.stdin.readline()
        if not line:
            break
        stripped = line.strip()
        if not buf and stripped in (".quit", ".exit", r"\q"):
            break
        if not buf and stripped == ".tables":
            _emit(store, "SELECT table_name AS name, 'table' AS kind, comment FROM duckdb_tables()"
                  " UNION ALL SELECT view_name, 'view', comment FROM duckdb_views() WHERE NOT internal"
                  " ORDER BY kind, name", fmt, max_rows)
            continue
        if not stripped and not buf:
            continue
        buf.append(line)
        if stripped.endswith(";"):
            sql, buf = "".join(buf), []
            try:
                _emit(store, sql, fmt, max_rows)
            except duckdb.Error as exc:
                err_console.print(f"[bold red]error:[/] {str(exc).splitlines()[0]}", highlight=False)


def sql_command(
    query: Optional[str] = typer.Argument(None, help="SQL to run; leave out for an interactive prompt."),
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
    csv: bool = typer.Option(False, "--csv", help="Print CSV."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON array of rows."),
    max_rows: int = typer.Option(200, "--max-rows", help="Rows shown in a table (CSV/JSON print all)."),
    write: bool = typer.Option(False, "--write", help="Open read-write (statements may change data)."),
) -> None:
    """Query the warehouse with SQL (tables: traces, steps, calls, runs, ...; views: v_*)."""
    if csv and json_out:
        raise fail("choose one of --csv and --json")
    fmt = "csv" if csv else "json" if json_out else "table"
    with user_errors(duckdb.Error, migrations.SchemaError):
        store = open_for_reading(db, write=write)
        try:
            if query is None:
                _repl(store, fmt, max_rows)
            else:
                _emit(store, query, fmt, max_rows)
        finally:
            store.close()


@wh_app.command("info")
def info(db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Where the warehouse is, its schema version, and how many rows each table holds. Runs of
    this host whose process is gone are marked abandoned first (when no writer holds the file)."""
    with user_errors(duckdb.Error, migrations.SchemaError):
        abandoned = _abandon_dead_runs(_path(db))
        store = open_for_reading(db)
        try:
            path = store.path
            console.print(f"path: {path}  ({path.stat().st_size / 1e6:.1f} MB)")
            console.print(f"schema version: {store.schema_version} (latest {migrations.LATEST})")
            rows = store.query("SELECT table_name, comment FROM duckdb_tables() ORDER BY 1").to_pylist()
            counts = store.counts()
            print_table(console, pa.table({
                "table": [r["table_name"] for r in rows],
                "rows": [counts.get(r["table_name"], 0) for r in rows],
                "comment": [r["comment"] for r in rows],
            }), max_rows=100)
            views = store.query("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1")
            console.print("views: " + ", ".join(views.column(0).to_pylist()))
            if abandoned:
                console.print(f"marked abandoned (their process was gone): {', '.join(abandoned)}")
        finally:
            store.close()


def _abandon_dead_runs(path: Path) -> list[str]:
    if not path.exists():
        return []
    try:
        with TraceStore(path) as store:
            return store.abandon_dead_runs()
    except duckdb.IOException:  # another process writes the file now: it is not ours to fix
        return []


@wh_app.command("migrate")
def migrate_command(db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Create the warehouse file if needed and apply pending migrations."""
    path = _path(db)
    with user_errors(duckdb.Error, migrations.SchemaError):
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path))
        try:
            applied = migrations.migrate(con)
            version = migrations.current_version(con)
        finally:
            con.close()
    console.print(f"{path}: schema version {version}" + (f" (applied {', '.join(applied)})" if applied else ""))


@wh_app.command("export")
def export(
    parquet: Path = typer.Option(..., "--parquet", help="Directory to write (one Parquet file per table)."),
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Export every table as Parquet, with schema.sql/load.sql (DuckDB's IMPORT DATABASE reads it back)."""
    with user_errors(duckdb.Error, migrations.SchemaError, OSError):
        if parquet.exists() and any(parquet.iterdir()):
            raise UserError(f"{parquet} is not empty")
        store = open_for_reading(db)
        try:
            store.con.execute(f"EXPORT DATABASE {quote(str(parquet))} (FORMAT parquet, COMPRESSION zstd)")
        finally:
            store.close()
    files = sorted(p.name for p in parquet.glob("*.parquet"))
    console.print(f"exported {len(files)} tables to {parquet}")


@wh_app.command("ingest")
def ingest(
    staging: Path = typer.Argument(..., help="Staging directory the producers write batches into."),
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
    watch: Optional[float] = typer.Option(None, "--watch", help="Keep ingesting every N seconds."),
) -> None:
    """The single writer: ingest staged trace batches (each in one transaction), then delete them."""
    if watch is None and not staging.is_dir():
        raise fail(f"no staging directory {staging}")
    with user_errors(duckdb.Error, migrations.SchemaError):
        with TraceStore(_path(db)) as store:
            while True:
                rep = ingest_staged(store, staging)
                if rep.batches or rep.skipped or watch is None:
                    console.print(f"ingested {rep.batches} batches ({rep.traces} traces, {rep.steps} steps,"
                                  f" {rep.calls} calls); {rep.skipped} already in; {len(pending(staging))} waiting")
                if watch is None:
                    break
                time.sleep(watch)


def register(app: typer.Typer) -> None:
    """Add this layer's commands to the `conductor` CLI."""
    add_user_errors(duckdb.Error, migrations.SchemaError)  # a bad query, a warehouse too new
    app.command("sql")(sql_command)
    app.add_typer(wh_app, name="warehouse")
