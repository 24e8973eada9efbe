"""TraceStore on real DuckDB files: round trip, idempotence, atomicity, typed columns, records."""

from __future__ import annotations

import random
from datetime import date

import duckdb
import pytest
from pydantic import ValidationError

from conductor.trace import Trace
from tests.factories import make_problem, make_trace, make_traces
from warehouse import (
    CostRow, DatasetManifest, Promotion, Run, SchemaError, TraceRowError, TraceStore, flatten,
)


@pytest.fixture
def store(tmp_path):
    with TraceStore(tmp_path / "w.duckdb") as s:
        yield s


def _count(store: TraceStore, table: str) -> int:
    return store.query(f"SELECT count(*) FROM {table}").column(0)[0].as_py()


def test_round_trip_rebuilds_every_nested_trace(store):
    rng = random.Random(3)
    traces = [make_trace(rng, recurse=True), make_trace(rng, parse_error=True)] + make_traces(80, seed=4)
    store.write_traces(traces)
    for t in traces:
        assert store.get_trace(t.trace_id) == t
    child = traces[0].steps[-1].child
    assert child is not None and store.get_trace(child.trace_id) == child
    assert store.get_trace("no-such-id") is None
    # JSON round trip of the rebuilt trace is the same document too.
    again = store.get_trace(traces[0].trace_id)
    assert Trace.model_validate_json(again.model_dump_json()) == traces[0]


def test_rows_match_the_trace_tree(store):
    traces = make_traces(60, seed=5)
    result = store.write_traces(traces)
    rounds = [r for t in traces for r in t.rounds()]
    assert result.traces == len(rounds) == _count(store, "traces")
    assert result.steps == sum(len(r.steps) for r in rounds) == _count(store, "steps")
    assert result.calls == sum(len(t.all_calls()) for t in traces) == _count(store, "calls")
    roots = store.query("SELECT count(*) FROM traces WHERE depth = 0 AND trace_id = root_trace_id")
    assert roots.column(0)[0].as_py() == 60
    # Every child round names its parent and the step that started it.
    bad = store.query(
        "SELECT count(*) FROM traces c JOIN steps s ON s.child_trace_id = c.trace_id"
        " WHERE c.parent_step_index <> s.step_index OR c.root_trace_id <> s.root_trace_id"
    )
    assert bad.column(0)[0].as_py() == 0


def test_same_batch_twice_never_duplicates(store):
    traces = make_traces(50, seed=6)
    first = store.write_traces(traces)
    second = store.write_traces(traces)
    assert second.replaced == 50 and first.replaced == 0
    assert _count(store, "traces") == first.traces
    assert _count(store, "steps") == first.steps
    assert _count(store, "calls") == first.calls
    # A repeated trace inside one batch counts once (the last copy wins).
    store.write_traces([traces[0], traces[0]])
    assert _count(store, "traces") == first.traces


def test_rewrite_replaces_a_question_with_its_new_rounds(store):
    rng = random.Random(7)
    t = make_trace(rng, recurse=True)
    store.write_traces([t])
    assert _count(store, "traces") == 2
    retried = make_trace(random.Random(8), recurse=False, parse_error=False, trace_id=t.trace_id)
    store.write_traces([retried])
    assert store.get_trace(t.trace_id) == retried
    assert _count(store, "traces") == 1  # the old recursion round went with the old version
    assert _count(store, "calls") == len(retried.all_calls())


def test_a_failing_batch_writes_nothing(store):
    good = make_traces(20, seed=9)
    store.write_traces(good)
    before = {t: _count(store, t) for t in ("traces", "steps", "calls")}
    rng = random.Random(10)
    a, b = make_trace(rng, parse_error=False), make_trace(rng, parse_error=False)
    # Two questions sharing a call id: the calls insert fails after traces and steps went in.
    b.steps[0].call.call_id = a.conductor_call.call_id  # type: ignore[union-attr]
    with pytest.raises(duckdb.ConstraintException):
        store.write_traces([a, b, *good[:5]])
    assert {t: _count(store, t) for t in ("traces", "steps", "calls")} == before
    assert store.get_trace(a.trace_id) is None
    # The store is still usable after the rollback.
    many = make_traces(30, seed=16)
    assert store.write_traces(many).traces == flatten(many).traces.num_rows
    assert store.get_trace(good[0].trace_id) == good[0]


def test_created_at_is_a_datetime_checked_where_the_trace_is_made(store):
    with pytest.raises(ValidationError, match="created_at"):
        Trace(problem_id="p", source="MATH", domain="math", created_at="yesterday")
    t = make_trace(random.Random(1))
    store.write_traces([t])
    assert store.get_trace(t.trace_id).created_at == t.created_at


def test_the_warehouse_stores_what_the_trace_carries(store):
    """source and domain come from the trace itself: no problems row, no id parsing."""
    t = make_trace(random.Random(2)).model_copy(update={"problem_id": "no-pattern-here", "source": "MySet",
                                                        "domain": "code"})
    store.write_traces([t])
    row = store.query("SELECT source, domain FROM traces WHERE trace_id = ?", [t.trace_id]).to_pylist()
    assert row == [{"source": "MySet", "domain": "code"}]


def test_filter_columns_are_typed(store):
    store.write_traces(make_traces(5, seed=11))
    types = {
        r["k"]: r["t"]
        for r in store.query(
            "SELECT table_name || '.' || column_name AS k, data_type AS t FROM duckdb_columns()"
            " WHERE table_name IN ('traces', 'steps', 'calls')"
        ).to_pylist()
    }
    assert types["traces.correct"] == "BOOLEAN" and types["traces.reward"] == "DOUBLE"
    assert types["traces.depth"] == "INTEGER" and types["traces.cost_usd"] == "DOUBLE"
    assert types["traces.tokens"] == "BIGINT" and types["traces.shape"] == "VARCHAR"
    assert types["traces.run_id"] == "VARCHAR" and types["traces.source"] == "VARCHAR"
    assert types["calls.worker_id"] == "VARCHAR" and types["calls.latency_s"] == "DOUBLE"
    assert types["steps.status"] == "VARCHAR" and types["steps.reads"] == "INTEGER[]"
    assert types["traces.created_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["traces.workflow"] == "JSON" and types["calls.messages"] == "JSON"
    # JSON columns are queryable as JSON.
    n = store.query("SELECT count(*) FROM traces WHERE json_array_length(workflow->'$.model_id') = n_steps")
    assert n.column(0)[0].as_py() == store.query("SELECT count(*) FROM traces WHERE workflow IS NOT NULL").column(0)[0].as_py()


def test_writing_problems_never_rewrites_stored_traces(store):
    rng = random.Random(12)
    p1 = make_problem(rng, 1)
    t1 = make_trace(rng, problem=p1)
    store.write_traces([t1])
    store.write_problems([p1.model_copy(update={"domain": "code", "source": "Other"}), p1])
    row = store.query("SELECT source, domain FROM traces WHERE trace_id = ?", [t1.trace_id]).to_pylist()
    assert row == [{"source": p1.source, "domain": p1.domain}]
    assert _count(store, "problems") == 1


def test_record_writers_upsert_by_key(store):
    store.write_runs([Run(run_id="r1", kind="eval", method="conductor@1"), Run(run_id="r2")])
    store.write_runs([Run(run_id="r1", kind="eval", method="conductor@2", status="finished")])
    assert store.query("SELECT method, status FROM runs WHERE run_id = 'r1'").to_pylist() == [
        {"method": "conductor@2", "status": "finished"}
    ]
    assert _count(store, "runs") == 2
    m = DatasetManifest(dataset_id="train-v1", problem_ids=["a", "b", "c"], source="mixed", manifest={"seed": 0})
    store.write_dataset(m)
    store.write_dataset(m.model_copy(update={"problem_ids": ["c", "a"]}))
    assert store.query("SELECT problem_id FROM dataset_problems ORDER BY position").column(0).to_pylist() == ["c", "a"]
    assert store.query("SELECT n_problems FROM datasets").column(0).to_pylist() == [2]
    with pytest.raises(ValueError, match="repeated"):
        DatasetManifest(dataset_id="x", problem_ids=["a", "a"])
    c = CostRow(day=date(2026, 11, 1), worker_id="gpt-5", cost_usd=1.5, calls=3)
    store.write_costs([c, c.model_copy(update={"cost_usd": 2.0})])
    assert store.query("SELECT cost_usd FROM costs").column(0).to_pylist() == [2.0]
    store.write_promotions([Promotion(promotion_id="p1", challenger_version="3", promoted=True, reason="better")])
    assert store.query("SELECT promoted FROM promotions").column(0).to_pylist() == [True]
    store.write_training_metrics("r1", 1, {"reward": 0.5, "accuracy": 0.4})
    store.write_training_metrics("r1", 1, {"reward": 0.6})
    curve = store.query("SELECT reward, accuracy FROM v_training_curves").to_pylist()
    assert curve == [{"reward": 0.6, "accuracy": 0.4}]


def test_read_only_open_and_missing_file(tmp_path):
    path = tmp_path / "w.duckdb"
    with TraceStore(path) as s:
        s.write_traces(make_traces(3, seed=13))
    with TraceStore(path, read_only=True) as ro:
        assert _count(ro, "traces") >= 3
        with pytest.raises(duckdb.Error):
            ro.write_traces(make_traces(1, seed=14))
    with pytest.raises(FileNotFoundError):
        TraceStore(tmp_path / "none.duckdb", read_only=True)
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.close()
    with pytest.raises(SchemaError, match="schema version 0"):
        TraceStore(tmp_path / "old.duckdb", read_only=True)


def test_flatten_rejects_a_round_id_used_twice():
    rng = random.Random(15)
    t = make_trace(rng, recurse=True)
    child = t.steps[-1].child
    assert child is not None
    child.trace_id = t.trace_id
    with pytest.raises(TraceRowError, match="twice"):
        flatten([t])


def test_an_unparsed_answer_counts_as_wrong_in_the_views(store):
    rng = random.Random(17)
    right = make_trace(rng, parse_error=False, recurse=False)
    right.verdict = right.verdict.model_copy(update={"correct": True})  # type: ignore[union-attr]
    unparsed = make_trace(rng, parse_error=True)
    assert unparsed.verdict is None
    store.write_traces([right, unparsed])
    acc = store.query("SELECT sum(questions) AS n, sum(accuracy * questions) AS ok FROM v_leaderboard").to_pylist()
    assert acc == [{"n": 2, "ok": 1.0}]
    rows = store.query("SELECT correct FROM v_questions ORDER BY correct").column(0).to_pylist()
    assert rows == [False, True]
    # The raw column keeps what the trace said (no verdict).
    assert store.query("SELECT count(*) FROM traces WHERE correct IS NULL").column(0)[0].as_py() == 1
