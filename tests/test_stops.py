"""A stop from outside (Ctrl-C, SIGTERM) ends what was running as stopped, not failed: a warehouse
row `cancelled`, an MLflow run KILLED; and a few registry writes that only mean something
together are not cut in half by one (conductor/stops.py). Real parts: a real signal sent to this
process, DuckDB, an MLflow SQLite store."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import mlflow
import pytest
from prefect.exceptions import TerminationSignal

from conductor.stops import signals_held, stops_not_swallowed
from registry.runs import TrainingRun
from tasks.stops import unless_stopped
from warehouse import TraceStore
from warehouse.lifecycle import RunLifecycle, run_here, write_to


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Python's own Ctrl-C handler (a pytest worker may run with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_inside_signals_held_waits_for_the_block_to_end(ctrl_c_raises: None) -> None:
    written = []
    with pytest.raises(KeyboardInterrupt):
        with signals_held():
            written.append("alias")
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C between two writes that go together
            for _ in range(1000):  # Python runs a handler at the next bytecode: give it many
                pass
            written.append("decision")
    assert written == ["alias", "decision"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back


def _an_error_while_stopping() -> ValueError:
    """What Prefect's task engine raises when a SIGTERM lands as a task run begins."""
    try:
        raise TerminationSignal(signal.SIGTERM)
    except TerminationSignal:
        try:
            raise ValueError("Task run is not set")  # noqa: B904 - as Prefect raises it
        except ValueError as exc:
            return exc


class _Finalized:
    def __del__(self) -> None:
        raise KeyboardInterrupt  # as a Ctrl-C handler raises when the signal lands in a finalizer


def test_a_stop_that_a_finalizer_swallowed_is_sent_again(ctrl_c_raises: None) -> None:
    """Seen: Prefect's TerminationSignal for a SIGTERM raised inside an asyncio transport's
    `__del__`, dropped by Python ("Exception ignored in ..."), and the night trained on."""
    with pytest.raises(KeyboardInterrupt):
        with stops_not_swallowed():
            _Finalized()  # dropped at once: its __del__ raises, and Python ignores what it raises
            threading.Event().wait(5)  # the signal sent again (0.1 s later) interrupts the wait


@pytest.mark.parametrize(("stop", "status"), [
    (KeyboardInterrupt(), "cancelled"),
    (_an_error_while_stopping(), "cancelled"),
    (TerminationSignal(signal.SIGTERM), "cancelled"),  # Prefect's SIGTERM, raised in a flow
    (asyncio.CancelledError(), "cancelled"),
    (RuntimeError("boom"), "failed"),
])
def test_a_run_row_stopped_from_outside_is_cancelled_and_one_that_errs_is_failed(
        tmp_path: Path, stop: BaseException, status: str) -> None:
    db = tmp_path / "w.duckdb"
    with pytest.raises(type(stop)):
        with RunLifecycle(run_here("r1", "train", method="m"), write_to(db)):
            raise stop
    with TraceStore(db, read_only=True) as store:
        rows = store.query("SELECT status, notes, finished_at FROM runs").to_pylist()
    assert [r["status"] for r in rows] == [status]
    assert rows[0]["finished_at"] is not None and rows[0]["notes"].startswith(type(stop).__name__)


@pytest.mark.parametrize(("stop", "status"), [
    (KeyboardInterrupt(), "KILLED"),
    (TerminationSignal(signal.SIGTERM), "KILLED"),
    (RuntimeError("boom"), "FAILED"),
])
def test_an_mlflow_run_stopped_from_outside_ends_killed(tmp_path: Path, stop: BaseException, status: str) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with pytest.raises(type(stop)):
        with TrainingRun({"max_steps": 2}, simulated=True, tracking_uri=uri) as run:
            raise stop
    assert mlflow.MlflowClient(tracking_uri=uri).get_run(run.run_id).info.status == status
    assert mlflow.active_run() is None


def test_a_stop_that_reaches_a_task_as_an_error_is_not_retried(prefect_harness: Path) -> None:
    """A GRPO chunk stopped by SIGTERM as its task run began came back as Prefect's "Task run is
    not set" ValueError, and the task's retries trained the chunk again: the night went on."""
    from prefect import flow, task

    calls: list[str] = []

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=unless_stopped)
    def chunk(kind: str) -> None:
        calls.append(kind)
        raise _an_error_while_stopping() if kind == "stopped" else RuntimeError("flaky")

    @flow
    def night() -> None:
        for kind in ("stopped", "error"):
            chunk(kind, return_state=True)

    night()
    assert calls == ["stopped", "error", "error", "error"]  # the error retried twice, the stop never
