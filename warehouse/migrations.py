"""Schema migrations tracked by name, in the style of Simon Willison's `llm` (`llm/migrations.py`).

Each migration is a self-contained SQL file, `warehouse/schema/<name>.sql`, frozen once
released: a later change is a new file appended to `MIGRATIONS`. A file records the names it
has applied in `schema_migrations`; `migrate()` applies every listed name it has not seen, in
list order, each in its own transaction together with its row, so a crash mid-upgrade leaves
the file at the last complete migration. Names, not positions, are the identity: a file made
by any earlier version upgrades, whatever was added since.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from warehouse.sql import transaction

SCHEMA_DIR = Path(__file__).with_name("schema")
MIGRATIONS: list[str] = [
    "m001_core_tables",
    "m002_evaluations_costs_promotions",
    "m003_views",
    "m004_unparsed_counts_as_wrong",
    "m005_call_reasoning_tokens",
    "m006_trace_usage_simulated_runs",
    "m007_finished_runs_only",
    "m008_evaluation_costs",
    "m009_nightly",
    "m010_training_shapes",
    "m011_drop_evaluations_repeat_cost_known",
    "m012_step_fallbacks",
    "m013_worker_nights",
    "m014_rounds",
]
LATEST = len(MIGRATIONS)  # the schema version: how many migrations this code knows


class SchemaError(Exception):
    """The file's schema is newer than this code, or a migration failed."""


def migration_sql(name: str) -> str:
    return (SCHEMA_DIR / f"{name}.sql").read_text(encoding="utf-8")


def _ensure_ledger(con: duckdb.DuckDBPyConnection) -> None:
    # `version` is kept for files written before names were the identity; new rows fill it too.
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
        " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    con.execute("COMMENT ON TABLE schema_migrations IS 'Applied schema migrations, one row per migration name.'")


def applied(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Names of the migrations this file has applied, in the order applied."""
    # fetchall, not fetchone: DuckDB 2 keeps a half-read result open and refuses the next query.
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_migrations' AND schema_name = 'main'"
        " AND database_name = current_database()"
    ).fetchall()
    if not exists[0][0]:
        return []
    return [r[0] for r in con.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()]


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    """How many migrations the file has applied (0 for an empty file)."""
    return len(applied(con))


def migrate(con: duckdb.DuckDBPyConnection, target: int | None = None) -> list[str]:
    """Apply pending migrations, the first `target` of MIGRATIONS (default: all). Returns the
    names applied now."""
    target = LATEST if target is None else target
    if not 0 <= target <= LATEST:
        raise SchemaError(f"no schema version {target} (this code knows 0..{LATEST})")
    done = applied(con)
    unknown = [n for n in done if n not in MIGRATIONS]
    if unknown:
        raise SchemaError(
            f"the warehouse has migrations this code does not know ({', '.join(unknown)}): it is newer"
            " than this code; upgrade conductor"
        )
    now: list[str] = []
    for name in MIGRATIONS[:target]:
        if name in done:
            continue
        try:
            with transaction(con):
                _ensure_ledger(con)
                con.execute(migration_sql(name))
                con.execute(
                    "INSERT INTO schema_migrations (version, name)"
                    " SELECT coalesce(max(version), 0) + 1, ? FROM schema_migrations", [name]
                )
        except Exception as exc:
            raise SchemaError(f"migration {name} failed: {exc}") from exc
        now.append(name)
    return now
