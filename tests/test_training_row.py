"""A training run's row is written when it starts, through the one RunLifecycle: a `conductor
train` that fails leaves its row `failed`, and one killed outright leaves it `running` with its
pid, which the next run marks `abandoned`. Never missing (it was written only at the first GRPO
step: a run that died in its warm start left nothing)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import duckdb
import pytest

from warehouse.lifecycle import RunLifecycle, run_here, write_to
from warehouse.store import TraceStore

ROOT = Path(__file__).resolve().parent.parent


def _train(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONDUCTOR_HOME": str(home)}
    return subprocess.Popen([sys.executable, "-c", "from conductor.cli import app; app()", "train", "--profile", "local", "--no-track",
                             "--compare", "0", "--out", str(home / "run"), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _train_rows(home: Path) -> list[dict]:
    """The `train` rows, or [] while the file is missing or held by the training process."""
    if not (home / "warehouse.duckdb").is_file():
        return []
    try:
        with TraceStore(home / "warehouse.duckdb", read_only=True) as store:
            return store.query("SELECT run_id, status, pid, notes FROM runs WHERE kind = 'train'").to_pylist()
    except duckdb.IOException:  # the training process holds the file for a moment
        return []


def test_a_training_run_that_fails_leaves_its_row_failed(tmp_path: Path) -> None:
    # A model directory that is not there: the run fails when GRPO loads it, before any step.
    proc = _train(tmp_path, "--model", str(tmp_path / "no-such-model"), "--max-steps", "1")
    out, _ = proc.communicate()
    assert proc.returncode != 0, out
    rows = _train_rows(tmp_path)
    assert [r["status"] for r in rows] == ["failed"], out
    assert "no-such-model" in rows[0]["notes"]


def test_a_training_run_killed_in_its_warm_start_is_abandoned_never_missing(tmp_path: Path) -> None:
    proc = _train(tmp_path)  # the local profile's warm start: minutes, so it is killed in it
    rows: list[dict] = []
    while not rows and proc.poll() is None:
        rows = _train_rows(tmp_path)
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert [(r["status"], r["pid"]) for r in rows] == [("running", proc.pid)]
    with TraceStore(tmp_path / "warehouse.duckdb") as store:
        assert store.abandon_dead_runs() == [rows[0]["run_id"]]
    assert [r["status"] for r in _train_rows(tmp_path)] == ["abandoned"]


@pytest.mark.parametrize(("raised", "status"), [(None, "finished"), (RuntimeError("boom"), "failed"),
                                                (KeyboardInterrupt(), "cancelled")])
def test_the_lifecycle_writes_running_then_its_end(tmp_path: Path, raised: BaseException | None, status: str) -> None:
    seen: list[str] = []
    write = write_to(tmp_path / "w.duckdb")

    def record(runs) -> None:  # noqa: ANN001
        seen.extend(r.status for r in runs)
        write(runs)

    with pytest.raises(type(raised)) if raised else nullcontext():
        with RunLifecycle(run_here("r1", "train", method="m"), record) as life:
            life.update(mlflow_run_id="ml-1")
            if raised:
                raise raised
    assert seen == ["running", status]
    with TraceStore(tmp_path / "w.duckdb", read_only=True) as store:
        row = store.query("SELECT status, mlflow_run_id, finished_at IS NOT NULL AS ended FROM runs").to_pylist()
    assert row == [{"status": status, "mlflow_run_id": "ml-1", "ended": True}]


def test_the_training_flow_writes_its_row_first_and_fails_it_with_the_run(prefect_harness: Path, tmp_path: Path) -> None:
    from flows.training import TrainingRequest, training_flow

    missing = tmp_path / "no-such-model"  # outside the run directory: used as given, and GRPO fails to load it
    state = training_flow(TrainingRequest(output_dir=str(tmp_path / "run"), chunk_steps=1,
                                          overrides={"model_name_or_path": str(missing), "max_steps": 1}),
                          return_state=True)
    assert state.is_failed()
    with TraceStore(prefect_harness / "warehouse.duckdb", read_only=True) as store:
        rows = store.query("SELECT status, notes, started_at < finished_at AS ordered FROM runs"
                           " WHERE kind = 'train' AND params->>'output_dir' = ?", [str(tmp_path / "run")]).to_pylist()
    assert [(r["status"], r["ordered"]) for r in rows] == [("failed", True)]
    assert "no-such-model" in rows[0]["notes"]
