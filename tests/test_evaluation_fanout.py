"""The evaluation fan-out on the real Prefect test server (the session's harness) and a real DuckDB
file: per-provider global concurrency limits exist on the server and bound how many
benchmark x method tasks use a provider at once; the Dask task runner (a real in-process
`distributed.LocalCluster`) gives the same results as the thread runner."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import yaml

from conductor.data.synthetic import generate_bank
from conductor.evaluation.config import EvalConfig
from flows.evaluation import evaluation_flow  # at collection, as the other flow tests: Prefect's console
from tests.local_pool import local_pool
from warehouse.store import TraceStore        # handler then writes to pytest's stream, not a CliRunner's

METHODS = ["single:sim-small", "template:chain"]


@pytest.fixture(scope="module")
def setup(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    d = tmp_path_factory.mktemp("fanout")
    (d / "pool.yaml").write_text(yaml.safe_dump(local_pool(latency_ms=25)))
    problems = [p for p in generate_bank(40, seed=11) if p.domain in ("math", "choice")][:12]
    (d / "p.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in problems))
    return {"dir": d, "pool": d / "pool.yaml", "problems": d / "p.jsonl"}


def _cfg(setup: dict, name: str, **kw: object) -> EvalConfig:
    return EvalConfig(methods=METHODS, problems_file=setup["problems"], pool_file=setup["pool"], concurrency=4,
                      out_dir=setup["dir"] / name, log_to_mlflow=False, **kw)  # type: ignore[arg-type]


def _windows(db: Path, evaluation_id: str) -> list[tuple[datetime, datetime]]:
    """Per solve-benchmark task (one per run: method x repeat): from its first recorded question to its last."""
    with TraceStore(db) as store:
        rows = store.query("""
            SELECT min(t.created_at), max(t.created_at) FROM traces t JOIN runs r USING (run_id)
            WHERE r.params->>'evaluation_id' = ? AND t.depth = 0 GROUP BY t.run_id""",
                           [evaluation_id]).to_pylist()
    return [tuple(r.values()) for r in rows]  # type: ignore[misc]


def _max_overlap(windows: list[tuple[datetime, datetime]]) -> int:
    events = sorted([(a, 1) for a, _ in windows] + [(b, -1) for _, b in windows], key=lambda e: (e[0], e[1]))
    now = top = 0
    for _, step in events:
        now += step
        top = max(top, now)
    return top


def _read_limit(name: str) -> int:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name(name).limit


def test_provider_limits_are_created_and_bound_the_tasks_using_a_provider(setup: dict) -> None:
    # one question at a time inside a task, so each task's window is long and tasks would overlap
    one = evaluation_flow(_cfg(setup, "one", repeats=2, provider_limits={"simulated": 1}, questions_in_flight=1),
                          db_path=str(setup["dir"] / "a.duckdb"))
    assert one.provider_limits == {"conductor-provider-simulated": 1}
    assert _read_limit("conductor-provider-simulated") == 1  # on the server
    with TraceStore(setup["dir"] / "a.duckdb") as store:  # the config's questions in flight reached every run
        in_flight = store.query("SELECT DISTINCT params->'execution'->>'questions_in_flight' AS n FROM runs"
                                " WHERE params->>'evaluation_id' = ?", [one.evaluation_id]).column(0).to_pylist()
    assert in_flight == ["1"]
    windows = _windows(setup["dir"] / "a.duckdb", one.evaluation_id)
    assert len(windows) == 4  # 2 methods x 2 repeats
    assert _max_overlap(windows) == 1

    # the same flow again: idempotent; the explicit value is set on the existing limit
    two = evaluation_flow(_cfg(setup, "two", repeats=2, provider_limits={"simulated": 2}, questions_in_flight=1),
                          db_path=str(setup["dir"] / "b.duckdb"))
    assert _read_limit("conductor-provider-simulated") == 2
    assert _max_overlap(_windows(setup["dir"] / "b.duckdb", two.evaluation_id)) == 2  # 4 threads, 2 slots

    # no explicit value: an existing limit is left as an operator set it
    from tasks.evaluation import ensure_provider_limits

    assert ensure_provider_limits.fn(["simulated"], 3, {}) == {"conductor-provider-simulated": 2}
    # ... and the simulated pool, an in-process provider, holds no limit unless named: a killed
    # holder would keep its slot until a lease expiry that a test or ephemeral server never runs
    three = evaluation_flow(_cfg(setup, "three", provider_limit=3), db_path=str(setup["dir"] / "c.duckdb"))
    assert three.provider_limits == {}


def _outcomes(db: Path, evaluation_id: str) -> list[tuple]:
    with TraceStore(db) as store:
        return store.query("""
            SELECT r.method, coalesce(TRY_CAST(r.params->>'repeat' AS INTEGER), 0), q.problem_id, q.correct,
                   q.calls, round(q.cost_usd, 9)
            FROM v_questions q JOIN runs r USING (run_id) WHERE r.params->>'evaluation_id' = ?
            ORDER BY ALL""", [evaluation_id]).to_pylist()


def test_dask_task_runner_on_a_local_cluster_gives_the_thread_runners_results(setup: dict) -> None:
    import dask
    from distributed import LocalCluster

    threads = evaluation_flow(_cfg(setup, "threads", repeats=2), db_path=str(setup["dir"] / "t.duckdb"))
    # the scheduler's and worker's scratch folder (lock files) in the test's own directory, not
    # left in TMPDIR (dask's default)
    with dask.config.set({"temporary-directory": str(setup["dir"] / "dask")}), \
            LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as cluster:
        dask = evaluation_flow(_cfg(setup, "dask", repeats=2, task_runner="dask", dask_address=cluster.scheduler_address),
                               db_path=str(setup["dir"] / "d.duckdb"))
        prefixes = sorted(cluster.scheduler.task_prefixes)
    assert prefixes == ["solve_benchmark"]  # the solves (and only they) went through this cluster's scheduler
    a = _outcomes(setup["dir"] / "t.duckdb", threads.evaluation_id)
    b = _outcomes(setup["dir"] / "d.duckdb", dask.evaluation_id)
    assert len(a) == 2 * 2 * 12 and a == b  # methods x repeats x questions
    assert threads.table_markdown == dask.table_markdown


def test_a_trace_batch_that_cannot_be_written_fails_the_evaluation_and_its_runs(
        setup: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the thread runner a task hands its last batch to the flow's writer and returns; the
    flow waits for every handed-off write before it reads the warehouse. A write that fails there
    (injected: the warehouse refuses every trace batch) fails the evaluation, and every run row,
    parent included, is recorded `failed`, not `finished` with traces missing."""
    from types import SimpleNamespace

    import tasks.traces as tt

    def refuse(traces: list, db_path: str | None = None) -> None:
        raise OSError("disk full (injected)")

    monkeypatch.setattr(tt, "record_traces", SimpleNamespace(fn=refuse))
    db = setup["dir"] / "refused.duckdb"
    with pytest.raises(RuntimeError, match="trace batches were not written"):
        evaluation_flow(_cfg(setup, "refused"), db_path=str(db))
    with TraceStore(db) as store:
        runs = store.query("SELECT kind, status FROM runs ORDER BY kind").to_pylist()
        traces = store.query("SELECT count(*) AS n FROM traces").to_pylist()[0]["n"]
    assert runs == [{"kind": "eval", "status": "failed"}] * 2 + [{"kind": "evaluation", "status": "failed"}]
    assert traces == 0
