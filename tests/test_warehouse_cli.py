"""`conductor sql` and `conductor warehouse ...` against a real warehouse file."""

from __future__ import annotations

import csv
import io
import json

import duckdb
import pytest
from typer.testing import CliRunner

from conductor.cli import app
from tests.factories import make_traces
from warehouse import Run, TraceStore, migrations
from warehouse.staging import pending, stage_traces

runner = CliRunner()


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "w.duckdb"
    with TraceStore(path) as store:
        store.write_traces(make_traces(40, seed=31, run_id="eval-1"))
        store.write_runs([Run(run_id="eval-1", kind="eval", method="conductor@1", status="finished")])
    return path


def test_sql_prints_a_table_csv_and_json(db):
    res = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM traces WHERE depth = 0", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "n" in res.output and "40" in res.output and "1 row" in res.output
    res = runner.invoke(app, ["sql", "SELECT method, benchmark, questions FROM v_leaderboard ORDER BY 2",
                              "--db", str(db), "--csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert {r["method"] for r in rows} == {"conductor@1"}
    assert sum(int(r["questions"]) for r in rows) == 40
    res = runner.invoke(app, ["sql", "SELECT trace_id, pool, created_at FROM traces LIMIT 2", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert len(data) == 2 and isinstance(data[0]["pool"], list) and data[0]["created_at"].startswith("2026-")


def test_a_wide_result_shows_every_column(db, monkeypatch):
    """v_leaderboard's 10 columns at 80 columns of text: wider than the terminal, so one line per
    column per row (DuckDB's `line` mode), every column's value shown, floats rounded; a narrow
    result stays DuckDB's box; --csv keeps the exact value."""
    monkeypatch.setenv("COLUMNS", "80")
    res = runner.invoke(app, ["sql", "SELECT * FROM v_leaderboard ORDER BY benchmark", "--db", str(db)])
    assert res.exit_code == 0, res.output
    with TraceStore(db, read_only=True) as store:
        board = store.query("SELECT * FROM v_leaderboard ORDER BY benchmark")
    lines = res.output.splitlines()
    for name in board.column_names:  # each column, once per row, with its value
        assert sum(line.split(" = ")[0].strip() == name for line in lines) == board.num_rows, name
    accuracy = [line.split(" = ")[1] for line in lines if line.split(" = ")[0].strip() == "accuracy"]
    assert accuracy == [str(round(a, 4)) for a in board.column("accuracy").to_pylist()]
    assert lines[-1].startswith(f"{board.num_rows} rows, {board.num_columns} columns (one line per column")
    res = runner.invoke(app, ["sql", "SELECT avg(accuracy) AS a FROM v_leaderboard", "--db", str(db)])
    assert "│ 0.5286 │" in res.output and "1 row" in res.output  # narrow: the box, rounded
    res = runner.invoke(app, ["sql", "SELECT avg(accuracy) AS a FROM v_leaderboard", "--db", str(db), "--csv"])
    assert res.output == "a\n0.5285714285714285\n"  # exact
    # More rows than --max-rows: the middle is elided and the footer counts them all.
    res = runner.invoke(app, ["sql", "SELECT trace_id FROM traces", "--db", str(db), "--max-rows", "6"])
    assert res.exit_code == 0, res.output
    with TraceStore(db, read_only=True) as store:
        total = store.query("SELECT count(*) FROM traces").column(0)[0].as_py()
    assert f"{total} rows (6 shown)" in res.output and sum(len(line.split("│")[1].strip()) == 32
                                                           for line in res.output.splitlines() if "│" in line) == 6


def test_sql_errors_are_one_line_and_exit_2(db, tmp_path):
    res = runner.invoke(app, ["sql", "SELECT * FROM no_such_table", "--db", str(db)])
    assert res.exit_code == 2
    assert res.output.strip().startswith("error:") and "no_such_table" in res.output
    assert len(res.output.strip().splitlines()) <= 2  # one line, maybe wrapped once
    res = runner.invoke(app, ["sql", "SELECT 1", "--db", str(tmp_path / "missing.duckdb")])
    assert res.exit_code == 2 and "no warehouse" in res.output
    res = runner.invoke(app, ["sql", "DELETE FROM traces", "--db", str(db)])
    assert res.exit_code == 2 and "read-only" in res.output
    with TraceStore(db) as store:
        assert store.query("SELECT count(*) FROM traces").column(0)[0].as_py() > 0
    res = runner.invoke(app, ["sql", "SELECT 1", "--db", str(db), "--csv", "--json"])
    assert res.exit_code == 2


def test_interactive_prompt_reads_statements_until_semicolon(db):
    script = (
        "SELECT count(*) AS questions\n  FROM traces\n  WHERE depth = 0;\n"
        "SELECT nope;\n"  # an error is reported and the prompt goes on
        "SELECT 41 + 1 AS answer;\n"
        ".quit\n"
        "SELECT 'never' AS after_quit;\n"
    )
    res = runner.invoke(app, ["sql", "--db", str(db), "--csv"], input=script)
    assert res.exit_code == 0, res.output
    assert "questions\n40\n" in res.output and "answer\n42\n" in res.output
    assert "error:" in res.output and "never" not in res.output


def test_interactive_prompt_ends_at_end_of_input(db):
    res = runner.invoke(app, ["sql", "--db", str(db), "--json"], input="SELECT 1 AS one;\n.tables\n")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output[: res.output.index("]") + 1]) == [{"one": 1}] and "v_leaderboard" in res.output


def test_info_migrate_export_and_ingest(tmp_path, db):
    res = runner.invoke(app, ["warehouse", "info", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert f"schema version: {migrations.LATEST}" in res.output and "traces" in res.output
    fresh = tmp_path / "new" / "w.duckdb"
    res = runner.invoke(app, ["warehouse", "migrate", "--db", str(fresh)])
    assert res.exit_code == 0 and fresh.exists() and f"schema version {migrations.LATEST}" in res.output
    out = tmp_path / "export"
    res = runner.invoke(app, ["warehouse", "export", "--parquet", str(out), "--db", str(db)])
    assert res.exit_code == 0, res.output
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{out}/traces.parquet')").fetchall()[0][0]
    with TraceStore(db) as store:
        assert n == store.query("SELECT count(*) FROM traces").column(0)[0].as_py()
    res = runner.invoke(app, ["warehouse", "export", "--parquet", str(out), "--db", str(db)])
    assert res.exit_code == 2 and "not empty" in res.output
    staging = tmp_path / "staging"
    traces = make_traces(10, seed=32)
    stage_traces(staging, traces)
    res = runner.invoke(app, ["warehouse", "ingest", str(staging), "--db", str(fresh)])
    assert res.exit_code == 0 and "ingested 1 batches" in res.output
    assert pending(staging) == []
    with TraceStore(fresh) as store:
        assert store.query("SELECT count(*) FROM traces WHERE depth = 0").column(0)[0].as_py() == 10


def test_default_path_is_under_conductor_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CONDUCTOR_HOME", str(tmp_path / "home"))
    assert runner.invoke(app, ["warehouse", "migrate"]).exit_code == 0
    assert (tmp_path / "home" / "warehouse.duckdb").exists()
    res = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM v_questions", "--csv"])
    assert res.exit_code == 0 and res.output == "n\n0\n"
