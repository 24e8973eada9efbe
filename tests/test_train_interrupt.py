"""Ctrl-C during `conductor train`, as a user presses it: SIGINT to the command in the middle of
GRPO. It ends with rc 130 and one line, no traceback; its warehouse run is `cancelled` (not left
`running`) with every rollout written so far kept; its MLflow run ends KILLED; nothing is
registered. Real parts: the `conductor` executable, DuckDB, MLflow (sqlite), the tiny model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import mlflow

from warehouse import TraceStore

CONDUCTOR = Path(sys.executable).with_name("conductor")


def _as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a child of a pytest worker may inherit it ignored


def test_ctrl_c_during_grpo_cancels_the_run_and_keeps_its_rollouts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "prefect").mkdir(parents=True)
    # the store named, not inherited: an earlier test's mlflow.set_tracking_uri exports its own
    mlflow_uri = f"sqlite:///{home / 'mlflow.db'}"
    env = os.environ | {"CONDUCTOR_HOME": str(home), "PREFECT_HOME": str(home / "prefect"),
                        "MLFLOW_TRACKING_URI": mlflow_uri}
    proc = subprocess.Popen(
        [str(CONDUCTOR), "train", "--profile", "local", "--max-steps", "40", "--set", "sft_problems=16",
         "--set", "sft_copies=1", "--compare", "0"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal)
    err: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for chunk in iter(lambda: proc.stderr.read(64), ""):
            err.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 600
        # the GRPO bar past its second step: rollouts of two steps are in the warehouse
        while "GRPO" not in "".join(err) or " 2/40 " not in "".join(err):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(err)[-3000:]
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)  # not communicate(): it would read stderr too, racing the reader for its last line
        assert proc.stdout is not None
        stdout = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=30)
    stderr = "".join(err)
    assert proc.returncode == 130, stderr[-3000:]
    last = stderr.rstrip().splitlines()[-1]
    assert last.startswith("interrupted at GRPO step ") and "--resume" in last, stderr[-3000:]
    assert "Traceback" not in stderr + stdout, stderr[-3000:]
    # each step's bar line is drawn once (not once by set_postfix and again by refresh)
    assert stderr.count("| 1/40 [") == 1, stderr[-3000:]
    with TraceStore(home / "warehouse.duckdb", read_only=True) as store:
        runs = store.query("SELECT kind, status, finished_at, run_id FROM runs").to_pylist()
        traces = store.query("SELECT count(*) AS n FROM traces").to_pylist()[0]["n"]
    assert [(r["kind"], r["status"]) for r in runs] == [("train", "cancelled")] and runs[0]["finished_at"] is not None
    assert traces >= 2 * 32  # two steps' rollouts at least (32 a step), none lost
    client = mlflow.MlflowClient(tracking_uri=mlflow_uri, registry_uri=mlflow_uri)  # both named: set_registry_uri is process-wide
    statuses = [r.info.status for e in client.search_experiments() for r in client.search_runs([e.experiment_id])]
    assert statuses == ["KILLED"]
    assert client.search_registered_models() == []  # nothing registered from an interrupted run
