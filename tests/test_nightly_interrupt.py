"""`conductor nightly` stopped from outside, as a user or a supervisor stops it: a SIGTERM during the
second GRPO chunk, then, rerun with the same --run-key, a Ctrl-C (SIGINT to the command's process
group, as a terminal sends it) while the evaluation answers its questions.

Each time: a few quiet lines (no traceback), rc 128 + the signal, every warehouse run row the
night opened ended `cancelled` (none left `running`, none left for the next run to mark
`abandoned`), no MLflow run left RUNNING, the registry unchanged (no champion; the challenger is
registered once, by the rerun that finished training), the finished work kept (the first chunk's
checkpoint, which the rerun resumes from; every question the evaluation counted is in the
warehouse) and the Prefect flow runs ended by Prefect's own rule: Crashed for a bare SIGTERM,
Cancelled for the Ctrl-C the command handled.

Real parts: the `conductor` executable, the session's Prefect test server, DuckDB, an MLflow
SQLite store, a tiny training on the local profile, the simulated pool slowed to 2.5 s a call so
that the evaluation is surely mid-way when the Ctrl-C comes (the first run of it saw 66 of 72
questions done 8 s in at 1 s a call)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import threading
from pathlib import Path

import mlflow
import pytest
import yaml

from conductor.config import REPO_ROOT
from tests.test_eval_interrupt import CONDUCTOR
from warehouse import TraceStore

TINY = ["sft_problems=8", "sft_copies=1", "sft_epochs=1.0", "per_device_train_batch_size=2", "num_generations=2",
        "max_completion_length=48", "eval_every=0", "early_stopping_patience=0", "validation_problems=4"]
HELDOUT = 24  # x 3 methods, ~2.5 s a worker call: the evaluation answers for well over the 10 s before the Ctrl-C
RUN_KEY = "stopped"


def _slow_pool(path: Path) -> Path:
    """The local pool, each worker call ~2.5 s (the conductor's own calls are the local model's)."""
    pool = yaml.safe_load((REPO_ROOT / "deployments" / "pools" / "local.yaml").read_text())
    for worker in pool["workers"]:
        worker.setdefault("options", {})["latency_ms"] = {"median": 2500, "sigma": 0.1}
    path.write_text(yaml.safe_dump(pool))
    return path


def _as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a child of a pytest worker may inherit it ignored


def _night(env: dict[str, str], pool: Path) -> subprocess.Popen:
    sets = [a for kv in TINY for a in ("--set", kv)]
    return subprocess.Popen(
        [str(CONDUCTOR), "nightly", "--steps", "2", "--chunk-steps", "1", "--heldout", str(HELDOUT),
         "--baseline", "single:sim-small", "--pool", str(pool), "--run-key", RUN_KEY, *sets],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        preexec_fn=_as_from_a_terminal)


def _stop_when(proc: subprocess.Popen, said: str, wait_s: float, stop: signal.Signals) -> tuple[str, list[str]]:
    """Read the command's output; `wait_s` after a line containing `said`, send `stop` (SIGINT to
    the process group, as a terminal does; SIGTERM to the process, as `kill` does). The whole
    output, and the lines printed after the signal."""
    lines: list[str] = []
    seen, sent_at = threading.Event(), []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if said in line:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert seen.wait(timeout=600), "".join(lines)[-4000:]
        threading.Event().wait(wait_s)
        sent_at.append(len(lines))
        if stop == signal.SIGINT:
            os.killpg(proc.pid, stop)
        else:
            os.kill(proc.pid, stop)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join(timeout=30)
    return "".join(lines), [line for line in lines[sent_at[0]:] if line.strip()]


def _flow_runs() -> dict[str, tuple[str, str]]:
    """Every flow run the test server knows: id -> (flow name, state type)."""
    from prefect.client.orchestration import get_client

    async def read() -> dict[str, tuple[str, str]]:
        async with get_client() as client:
            flows = {f.id: f.name for f in await client.read_flows()}
            return {str(r.id): (flows.get(r.flow_id, "?"), r.state.type.value if r.state else "?")
                    for r in await client.read_flow_runs()}

    return asyncio.run(read())


def _runs(db: Path) -> list[dict]:
    with TraceStore(db, read_only=True) as store:
        return store.query("SELECT run_id, kind, status, finished_at FROM runs ORDER BY started_at").to_pylist()


@pytest.mark.timeout(900)  # two nights in fresh processes: ~4 min on 2 contended cores
def test_a_night_stopped_in_training_then_in_evaluation_leaves_every_store_consistent(
        prefect_harness: Path, tmp_path: Path) -> None:
    from prefect.settings import PREFECT_API_URL

    home = tmp_path / "home"
    uri = f"sqlite:///{home / 'mlflow.db'}"
    env = os.environ | {"CONDUCTOR_HOME": str(home), "PREFECT_HOME": str(home / "prefect"),
                        "PREFECT_API_URL": PREFECT_API_URL.value(), "MLFLOW_TRACKING_URI": uri}
    pool, db = _slow_pool(tmp_path / "slow.yaml"), home / "warehouse.duckdb"
    night_dir = home / "nightly" / "local" / RUN_KEY
    client = mlflow.MlflowClient(tracking_uri=uri, registry_uri=uri)

    # 1. SIGTERM in the second GRPO chunk (the first chunk's line is printed as it ends).
    before = _flow_runs()
    proc = _night(env, pool)
    # At once, not a moment later: on a quiet machine the second chunk (a tiny model, workers
    # not slowed in training) ends within 2 s and a later signal met the registration instead.
    output, after = _stop_when(proc, "grpo step 1/2", 0, signal.SIGTERM)
    assert proc.returncode == 128 + signal.SIGTERM, output[-4000:]
    assert "Traceback" not in output and len(after) <= 5, output[-4000:]
    assert f"nightly {RUN_KEY} cancelled by SIGTERM" in output, output[-4000:]
    # quiet (flows/terminal.py): the curation's and warm start's tasks ended, and no line says so
    assert not re.search(r"Task run '[^']+' - Finished in state Completed\(\)", output), output[-4000:]
    runs = _runs(db)
    assert {(r["kind"], r["status"]) for r in runs} == {("nightly", "cancelled"), ("train", "cancelled")}, runs
    assert all(r["finished_at"] is not None for r in runs)
    assert (night_dir / "training" / "checkpoint-1").is_dir()  # the finished chunk is kept
    assert client.search_model_versions("name='conductor'") == []  # nothing registered
    assert [r.info.status for r in client.search_runs(
        [e.experiment_id for e in client.search_experiments()])] == []  # no MLflow run opened yet
    night1 = {k: v for k, v in _flow_runs().items() if k not in before}
    states = {name: state for name, state in night1.values()}
    assert states["conductor-nightly"] == "CRASHED", night1
    assert not any(state in ("RUNNING", "PENDING") for _, state in night1.values()), night1

    # 2. Rerun the night: training resumes from checkpoint-1 and registers; Ctrl-C in the evaluation.
    before = _flow_runs()
    proc = _night(env, pool)
    output, after = _stop_when(proc, "for flow 'conductor-eval'", 10, signal.SIGINT)
    assert proc.returncode == 128 + signal.SIGINT, output[-4000:]
    assert "Traceback" not in output and len(after) <= 5, output[-4000:]
    said = re.findall(rf"^nightly {RUN_KEY} cancelled by SIGINT \(interrupted: (\d+) questions recorded, runs"
                      r" cancelled\)", output, flags=re.MULTILINE)
    assert len(said) == 1, output[-4000:]
    runs = _runs(db)
    statuses = {(r["kind"], r["status"]) for r in runs}
    assert statuses == {("nightly", "cancelled"), ("train", "cancelled"), ("train", "finished"),
                        ("evaluation", "cancelled"), ("eval", "cancelled")}, runs
    assert all(r["finished_at"] is not None for r in runs)
    with TraceStore(db, read_only=True) as store:
        answered = store.query("SELECT count(*) AS n FROM traces t JOIN runs r USING (run_id)"
                               " WHERE t.depth = 0 AND r.kind = 'eval'").to_pylist()[0]["n"]
    # stopped mid-way (six methods: the challenger, the template baseline, single:sim-small, and the
    # challenger at each of the three levels the local night trains); every counted question kept
    assert 0 < int(said[0]) == answered < 6 * HELDOUT
    assert (night_dir / "training" / "checkpoint-2").is_dir()
    versions = client.search_model_versions("name='conductor'")
    assert [str(v.version) for v in versions] == ["1"]  # registered once
    assert {a: str(v) for a, v in client.get_registered_model("conductor").aliases.items()} == {"challenger": "1"}
    mlflow_runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert [r.info.status for r in mlflow_runs] == ["FINISHED"]  # the training run; no evaluation run began
    night2 = {k: v for k, v in _flow_runs().items() if k not in before}
    states = {name: state for name, state in night2.values()}
    assert states["conductor-nightly"] == "CANCELLED" and states["conductor-eval"] == "CANCELLED", night2
    assert not any(state in ("RUNNING", "PENDING") for _, state in night2.values()), night2
