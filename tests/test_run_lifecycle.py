"""A run's life in the warehouse: traces written as questions finish, failed and cancelled runs
marked with their error, a run whose process died marked abandoned, and views that count
finished runs only."""

from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import threading
import sys

import pytest
from pathlib import Path

from conductor.methods import Method
from conductor.planners import TemplatePlanner
from tasks.traces import TraceBatches
from tests.factories import make_trace
from warehouse import Run, TraceStore


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid  # reaped: no process has it (pids are not reused this fast)


def test_a_run_whose_process_is_gone_is_abandoned_and_left_out_of_the_views(tmp_path):
    host = socket.gethostname()
    with TraceStore(tmp_path / "w.duckdb") as store:
        store.write_runs([
            Run(run_id="dead", status="running", host=host, pid=_dead_pid(), method="m"),
            Run(run_id="alive", status="running", host=host, pid=os.getpid(), method="m"),
            Run(run_id="elsewhere", status="running", host="another-host", pid=_dead_pid(), method="m"),
            Run(run_id="done", status="finished", method="m"),
        ])
        rng = random.Random(3)
        store.write_traces([make_trace(rng, run_id=r, parse_error=False) for r in ("dead", "alive", "done", None)])
        assert store.abandon_dead_runs() == ["dead"]
        status = {r["run_id"]: r["status"] for r in store.query("SELECT run_id, status FROM runs").to_pylist()}
        assert status == {"dead": "abandoned", "alive": "running", "elsewhere": "running", "done": "finished"}
        counted = store.query("SELECT run_id FROM v_questions ORDER BY run_id NULLS LAST").column(0).to_pylist()
        assert counted == ["done", None]  # a trace with no run row still counts
        per_worker_runs = store.query("SELECT sum(questions) FROM v_accuracy_by_worker_domain").column(0)[0].as_py()
        assert per_worker_runs == store.query(
            "SELECT count(*) FROM (SELECT DISTINCT c.root_trace_id, c.worker_id FROM calls c JOIN traces t"
            " ON t.trace_id = c.root_trace_id WHERE c.role = 'worker' AND (t.run_id = 'done' OR t.run_id IS NULL))"
        ).column(0)[0].as_py()


def test_traces_are_recorded_in_batches_as_they_finish(tmp_path):
    db = tmp_path / "w.duckdb"
    sink = TraceBatches(str(db), size=3)
    rng = random.Random(5)
    for i in range(7):
        sink.add(make_trace(rng, run_id="r"))
        stored = 0
        if db.exists():
            with TraceStore(db) as store:
                stored = store.query("SELECT count(*) FROM traces WHERE depth = 0").column(0)[0].as_py()
        assert stored == (i + 1) // 3 * 3
    sink.flush()
    with TraceStore(db) as store:
        assert store.query("SELECT count(*) FROM traces WHERE depth = 0").column(0)[0].as_py() == 7
    assert sink.recorded == sink.handed == 7


def test_handed_off_batches_are_written_and_each_writer_answers_for_its_own(tmp_path):
    """A solve task that does not wait hands its batches to the trace writer its flow owns;
    the flow's `drain` waits for that writer's batches only and raises their failed write (here a
    real one: the warehouse path is a directory), not another flow's."""
    from tasks.traces import TraceWriter, write_lock

    db = tmp_path / "w.duckdb"
    rng = random.Random(6)
    with TraceWriter() as mine, TraceWriter() as theirs:
        ok = TraceBatches(str(db), size=2, writer=mine, wait_at_end=False)
        bad = TraceBatches(str(tmp_path), size=2, writer=theirs, wait_at_end=False)
        for _ in range(3):
            ok.add(make_trace(rng, run_id="ok"))
        bad.add(make_trace(rng, run_id="bad"))
        ok.finish()
        bad.finish()
        assert ok.handed == 3 and bad.handed == 1
        assert mine.drain() == 2  # its full batch and its handed-off one
        assert ok.recorded == 3 and ok.pending == []
        with TraceStore(db) as store:
            assert store.query("SELECT count(*) FROM traces WHERE depth = 0").column(0)[0].as_py() == 3
        with pytest.raises(RuntimeError, match="1 of 1 trace batches were not written"):
            theirs.drain()
        assert bad.recorded == 0  # handed, never written
        assert mine.drain() == theirs.drain() == 0
        # `flush` after `finish` still waits for the handed-off batches (the kill drill counts on
        # it): with the writer held up, a flush in another thread waits until the writes are done.
        late = TraceBatches(str(tmp_path / "late.duckdb"), size=5, writer=mine, wait_at_end=False)
        with write_lock():
            late.add(make_trace(rng, run_id="late"))
            late.finish()
            flusher = threading.Thread(target=late.flush)
            flusher.start()
            flusher.join(timeout=0.3)
            assert flusher.is_alive()  # waiting for the write the lock holds up
        flusher.join(timeout=30)
        with TraceStore(tmp_path / "late.duckdb") as store:
            assert store.query("SELECT count(*) FROM traces WHERE depth = 0").column(0)[0].as_py() == 1
        assert mine.drain() == 1


def test_a_closed_writer_has_written_every_batch_it_was_handed(tmp_path):
    """The flow's writer ends with the flow (a Ctrl-C or a failure included): closing it waits
    for every batch submitted, so no finished question is lost with the thread."""
    from tasks.traces import TraceWriter, write_lock

    db = tmp_path / "w.duckdb"
    rng = random.Random(7)
    writer = TraceWriter()
    sink = TraceBatches(str(db), size=2, writer=writer, wait_at_end=False)
    with write_lock():  # the writer cannot start until every batch is handed over
        for _ in range(5):
            sink.add(make_trace(rng, run_id="r"))
        sink.finish()
    writer.close()
    with TraceStore(db) as store:
        assert store.query("SELECT count(*) FROM traces WHERE depth = 0").column(0)[0].as_py() == 5


@pytest.mark.parametrize(("raised", "status"), [(RuntimeError("boom"), "failed"), (KeyboardInterrupt(), "cancelled")])
def test_a_run_that_stops_is_marked_with_why_and_keeps_finished_traces(prefect_harness, tmp_path, monkeypatch,
                                                                      raised, status):
    import conductor.solve
    import tasks.solve
    from flows.run import run_flow

    real = conductor.solve.solve_many

    async def stop_after_some(tasks_, pool, planner, options=None, **kw):
        await real(tasks_[:3], pool, planner, options, **kw)  # three questions finish (and are handed on)...
        raise raised  # ...then the run stops

    monkeypatch.setattr(tasks.solve, "solve_many", stop_after_some)
    db = tmp_path / "w.duckdb"
    with pytest.raises(type(raised)):
        run_flow.fn(method=Method(TemplatePlanner("single"), "deployments/pools/local.yaml"), limit_per_source=1,
                    db_path=str(db))
    with TraceStore(db) as store:
        [run] = store.query("SELECT status, notes, finished_at FROM runs").to_pylist()
        assert run["status"] == status and type(raised).__name__ in run["notes"] and run["finished_at"]
        assert store.query("SELECT count(*) FROM traces").column(0)[0].as_py() == 3
        assert store.query("SELECT count(*) FROM v_questions").column(0)[0].as_py() == 0  # not finished


def test_warehouse_info_marks_dead_runs_abandoned(tmp_path):
    from typer.testing import CliRunner

    from conductor.cli import app

    db = tmp_path / "w.duckdb"
    with TraceStore(db) as store:
        store.write_runs([Run(run_id="killed", status="running", host=socket.gethostname(), pid=_dead_pid())])
    result = CliRunner().invoke(app, ["warehouse", "info", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "marked abandoned (their process was gone): killed" in result.output
    with TraceStore(db) as store:
        assert store.query("SELECT status FROM runs").column(0).to_pylist() == ["abandoned"]


def test_a_cancellation_stops_a_solve_in_another_thread_and_keeps_what_finished(tmp_path):
    """What the first Ctrl-C of `conductor run` does: the solve (which may run in a Prefect
    worker thread, where no KeyboardInterrupt arrives) is cancelled; finished traces stay."""
    import asyncio
    import threading
    import time

    from conductor.data.bank import sample_problems
    from tasks.solve import Cancellation, SolveRun, solve_problems

    pool = tmp_path / "slow.yaml"
    pool.write_text(re.sub(r"latency_ms: \{median: \d+", "latency_ms: {median: 1500",
                           Path("deployments/pools/local.yaml").read_text()))
    problems = [p for p in sample_problems() if p.domain != "code"][:30]
    method = Method(TemplatePlanner("single"), pool)
    db = tmp_path / "w.duckdb"
    outcome: list[BaseException] = []
    cancellation = Cancellation()

    def solve() -> None:
        try:
            solve_problems.fn(problems, method, SolveRun(run_id="r", db_path=str(db), batch_size=1), cancellation=cancellation)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    thread = threading.Thread(target=solve)
    thread.start()
    deadline = time.monotonic() + 60
    while not db.exists() and time.monotonic() < deadline:  # wait until some questions finished
        time.sleep(0.2)
    assert not cancellation.stopped
    assert cancellation.stop() == 1
    thread.join(timeout=30)
    assert not thread.is_alive() and outcome and isinstance(outcome[0], asyncio.CancelledError)
    with TraceStore(db) as store:
        kept = store.query("SELECT count(*) FROM traces WHERE run_id = 'r'").column(0)[0].as_py()
    assert 1 <= kept < len(problems)
    assert cancellation.stop() == 0  # nothing left running
    # Stopped, a solve that starts now (a task still waiting for a thread) answers nothing.
    assert cancellation.stopped
    with pytest.raises(asyncio.CancelledError):
        solve_problems.fn(problems, method, SolveRun(run_id="r2", db_path=str(db), batch_size=1),
                          cancellation=cancellation)
    with TraceStore(db) as store:
        assert store.query("SELECT count(*) FROM traces WHERE run_id = 'r2'").column(0)[0].as_py() == 0


def test_abandoning_a_killed_run_marks_its_prefect_flow_run_crashed(prefect_harness, tmp_path):
    """A SIGKILLed `conductor run` cannot report its end: its flow run stays Running in Prefect
    until the next run, which marks the warehouse run abandoned, finds the flow run and crashes it."""
    import uuid

    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.states import Running

    from tasks.records import FLOW_RUN_PARAM, abandon_dead_runs

    @flow(name="killed-run")
    def killed() -> None:
        pass

    with get_client(sync_client=True) as client:
        flow_run = client.create_flow_run(killed, state=Running())
        alive = client.create_flow_run(killed, state=Running())
    db = tmp_path / "w.duckdb"
    host = socket.gethostname()
    with TraceStore(db) as store:
        store.write_runs([
            Run(run_id="killed", status="running", host=host, pid=_dead_pid(), params={FLOW_RUN_PARAM: str(flow_run.id)}),
            Run(run_id="unknown", status="running", host=host, pid=_dead_pid(), params={FLOW_RUN_PARAM: str(uuid.uuid4())}),
            Run(run_id="alive", status="running", host=host, pid=os.getpid(), params={FLOW_RUN_PARAM: str(alive.id)}),
        ])
    assert sorted(abandon_dead_runs.fn(str(db))) == ["killed", "unknown"]  # an unknown flow run is no error
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(flow_run.id).state.type.value == "CRASHED"
        assert client.read_flow_run(alive.id).state.type.value == "RUNNING"


def test_a_pid_reused_by_a_younger_process_does_not_keep_a_dead_run_running(tmp_path):
    from datetime import UTC, datetime, timedelta

    host = socket.gethostname()
    younger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = datetime.now(UTC) - timedelta(minutes=5)  # the run began before that process existed
        with TraceStore(tmp_path / "w.duckdb") as store:
            store.write_runs([
                Run(run_id="reused", status="running", host=host, pid=younger.pid, started_at=started),
                Run(run_id="mine", status="running", host=host, pid=os.getpid(), started_at=datetime.now(UTC)),
            ])
            assert store.abandon_dead_runs() == ["reused"]
    finally:
        younger.kill()
        younger.wait()
