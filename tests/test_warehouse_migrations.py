"""Migrations: from an empty file and from every earlier version, data kept, same final schema."""

from __future__ import annotations

import duckdb

from conductor.trace import Trace
import pytest

from tests.factories import make_traces
from warehouse import TraceStore, flatten, migrations


def _schema(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    cols = con.execute(
        "SELECT table_name, column_name, data_type, comment FROM duckdb_columns()"
        " WHERE database_name = current_database() ORDER BY table_name, column_index"
    ).fetchall()
    tables = con.execute(
        "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = current_database() ORDER BY 1"
    ).fetchall()
    views = con.execute(
        "SELECT view_name, comment FROM duckdb_views() WHERE database_name = current_database()"
        " AND NOT internal ORDER BY 1"
    ).fetchall()
    return {"columns": cols, "tables": tables, "views": views}


def test_empty_file_gets_every_migration_in_order(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    assert migrations.current_version(con) == 0
    applied = migrations.migrate(con)
    assert applied == migrations.MIGRATIONS
    assert migrations.LATEST >= 3
    rows = con.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert rows == [(i + 1, name) for i, name in enumerate(migrations.MIGRATIONS)]
    assert migrations.migrate(con) == []  # nothing pending: a no-op
    schema = _schema(con)
    views = {v for v, _ in schema["views"]}
    assert {"v_questions", "v_leaderboard", "v_run_summary", "v_accuracy_by_worker_domain"} <= views
    # Every table and column says what it holds.
    assert all(comment for t, comment in schema["tables"] if t != "schema_migrations")
    assert all(c[3] for c in schema["columns"] if c[0] not in {"schema_migrations", *views})
    con.close()


@pytest.mark.parametrize("start", range(0, migrations.LATEST))
def test_upgrade_from_every_earlier_version_keeps_data(tmp_path, start):
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    migrations.migrate(con, target=start)
    assert migrations.current_version(con) == start
    traces = make_traces(10, seed=start)
    if start < _version_of("m005_call_reasoning_tokens"):
        traces = [_without(t, "reasoning_tokens") for t in traces]  # not stored before v5
    if start < _version_of("m006_trace_usage_simulated_runs"):  # a round's own usage totals
        traces = [_round_usage_as_before_v6(t) for t in traces]
    if start >= 1:  # write what that version can hold, the way the store writes it
        batch = flatten(traces)
        for name, table in (("traces", batch.traces), ("steps", batch.steps), ("calls", batch.calls)):
            have = {r[0] for r in con.execute(f"SELECT column_name FROM duckdb_columns() WHERE table_name = '{name}'").fetchall()}
            table = table.select([c for c in table.column_names if c in have])  # what that version had
            con.register("src", table)
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM src")
            con.unregister("src")
    if 2 <= start < _version_of("m011_drop_evaluations_repeat_cost_known"):  # the table m011 dropped
        con.execute("INSERT INTO evaluations (eval_id, method, benchmark, n, correct) VALUES ('e', 'm', 'b', 2, 1)")
    con.close()

    with TraceStore(path) as store:
        assert store.schema_version == migrations.LATEST
        if start >= 1:
            for t in traces:
                assert store.get_trace(t.trace_id) == t
            assert store.query("SELECT count(*) FROM v_questions").column(0)[0].as_py() == 10
        if start >= 2:
            # m011 dropped the table nothing wrote (the views compute what it would have held)
            assert store.query("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'evaluations'"
                               ).column(0).to_pylist() == [0]
        upgraded = _schema(store.con)
    fresh = duckdb.connect(str(tmp_path / "fresh.duckdb"))
    migrations.migrate(fresh)
    assert upgraded == _schema(fresh)
    fresh.close()


def _version_of(name: str) -> int:
    return migrations.MIGRATIONS.index(name) + 1


def _round_usage_as_before_v6(trace: Trace) -> Trace:
    """Before m006, `traces` held no reasoning/cached tokens, latency or retries of a round's totals."""
    before = {"reasoning_tokens": 0, "cached_input_tokens": 0, "latency_s": 0.0, "retries": 0}
    for r in trace.rounds():
        r.usage = r.usage.model_copy(update=before)
    return trace


def _without(trace: Trace, field: str) -> Trace:
    """The trace as a schema without `field` stores it: that field at its default (0) everywhere."""

    def walk(node):
        if isinstance(node, dict):
            return {k: (0 if k == field else walk(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return Trace.model_validate(walk(trace.model_dump()))


def test_a_failing_migration_leaves_the_last_good_version(tmp_path, monkeypatch):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    migrations.migrate(con)

    real_sql = migrations.migration_sql

    def sql(name: str) -> str:
        if name == "m999_broken":
            return "CREATE TABLE half_done (a INTEGER); SELECT * FROM no_such_table;"
        return real_sql(name)

    monkeypatch.setattr(migrations, "migration_sql", sql)
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, "m999_broken"])
    monkeypatch.setattr(migrations, "LATEST", migrations.LATEST + 1)
    with pytest.raises(migrations.SchemaError, match="m999_broken"):
        migrations.migrate(con)
    assert migrations.current_version(con) == migrations.LATEST - 1
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'half_done'").fetchall() == [(0,)]
    con.close()


def test_a_newer_file_is_refused(tmp_path):
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    migrations.migrate(con)
    con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, 'm_future')", [migrations.LATEST + 1])
    con.close()
    with pytest.raises(migrations.SchemaError, match="newer than this code"):
        TraceStore(path)
    with pytest.raises(migrations.SchemaError, match="no schema version"):
        migrations.migrate(duckdb.connect(), target=migrations.LATEST + 5)


def test_migrations_are_tracked_by_name_so_one_added_earlier_still_applies(tmp_path, monkeypatch):
    """A file that has every migration but one inserted into the list later gets exactly that one."""
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    migrations.migrate(con)
    real_sql = migrations.migration_sql
    monkeypatch.setattr(migrations, "migration_sql",
                        lambda name: "CREATE TABLE inserted (a INTEGER);" if name == "m003b_inserted" else real_sql(name))
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS[:3], "m003b_inserted", *migrations.MIGRATIONS[3:]])
    monkeypatch.setattr(migrations, "LATEST", len(migrations.MIGRATIONS))
    assert migrations.migrate(con) == ["m003b_inserted"]
    assert con.execute("SELECT count(*) FROM inserted").fetchall() == [(0,)]
    con.close()
