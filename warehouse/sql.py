"""The two SQL helpers every writer uses: one transaction block and one string quoting."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import duckdb


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN; COMMIT when the block ends, ROLLBACK (and re-raise) when it raises, Ctrl-C included."""
    con.begin()
    try:
        yield con
    except BaseException:
        con.rollback()
        raise
    con.commit()


def quote(text: str) -> str:
    """A SQL string literal (for the statements that take no parameters: COMMENT ON, EXPORT)."""
    return "'" + text.replace("'", "''") + "'"


@contextlib.contextmanager
def registered(con: duckdb.DuckDBPyConnection, **tables: object) -> Iterator[None]:
    """Arrow tables visible to SQL under the given names for the block, then unregistered."""
    for name, table in tables.items():
        con.register(name, table)
    try:
        yield
    finally:
        for name in tables:
            try:
                con.unregister(name)
            except duckdb.Error:  # an aborted transaction refuses it; the next register replaces it
                pass
