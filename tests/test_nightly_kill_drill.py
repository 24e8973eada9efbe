"""The nightly kill drill: a nightly run is killed with `kill -9` mid-training, its rerun is
killed again mid-evaluation, and the third run completes. Afterwards: one registered challenger
(the second run resumed training from the first run's checkpoint instead of starting over, and
the third reused the registered version instead of training again), no duplicate traces, every
killed run marked abandoned, and no alias pointing at a half-registered version.

Everything is real: each run is a separate Python process running `nightly_flow` against the
session's Prefect test server, writing a real DuckDB file and a real MLflow SQLite store under its
own CONDUCTOR_HOME. Where to kill is made deterministic by the drill script (test code), which
wraps one library function so the run blocks there after writing a marker file: inside the second
GRPO chunk (after the first chunk's checkpoint), or after the first benchmark's traces of the
evaluation were recorded. The test waits for the marker, then `kill -9`s the process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import pytest

from conductor.config import REPO_ROOT
from warehouse import TraceStore

DRILL = """\
import json, os, sys, time
from pathlib import Path

kill_at, marker, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3]

def block(note):
    marker.write_text(note)
    time.sleep(3600)

if kill_at == "training":
    import tasks.training as tt
    real_train = tt.train_grpo
    def train_grpo(config, *args, **kwargs):
        if (config.stop_at_step or config.max_steps) >= 2:  # the second chunk: checkpoint-1 is on disk
            block("training")
        return real_train(config, *args, **kwargs)
    tt.train_grpo = train_grpo
elif kill_at == "evaluation":
    import tasks.evaluation as te
    real_solve = te.solve_all
    async def solve_all(problems, method, run_id, seed, sink, cancellation=None):
        traces = await real_solve(problems, method, run_id, seed, sink, cancellation)
        sink.flush()  # this benchmark's traces are in the warehouse
        block("evaluation")
        return traces
    te.solve_all = solve_all

from flows.nightly import NightConfig, nightly_flow
TINY = {"sft_problems": 8, "sft_copies": 1, "sft_epochs": 1.0, "per_device_train_batch_size": 2,
        "num_generations": 2, "max_completion_length": 48, "eval_every": 0, "early_stopping_patience": 0,
        "validation_problems": 4}
s = nightly_flow(NightConfig(steps=2, chunk_steps=1, heldout_problems=4, baselines=[], training_overrides=TINY,
                             concurrency=2, run_key="drill", challenger_efforts=[]))  # no row per level
Path(out).write_text(s.model_dump_json())
print("completed", flush=True)
"""


def _launch(kill_at: str, tmp: Path, env: dict[str, str]) -> tuple[subprocess.Popen, Path, Path]:
    marker, out = tmp / f"marker-{kill_at}", tmp / f"summary-{kill_at}.json"
    log = open(tmp / f"log-{kill_at}.txt", "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([sys.executable, "-c", DRILL, kill_at, str(marker), str(out)], env=env, cwd=REPO_ROOT,
                            stdout=log, stderr=subprocess.STDOUT)
    return proc, marker, out


def _kill_when_blocked(proc: subprocess.Popen, marker: Path, tmp: Path, what: str, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    try:
        while not marker.exists():
            if proc.poll() is not None:
                pytest.fail(f"the run ended (rc {proc.returncode}) before reaching {what}:\n"
                            + (tmp / f"log-{what}.txt").read_text()[-4000:])
            if time.monotonic() > deadline:
                pytest.fail(f"the run did not reach {what} in {timeout:.0f} s")
            time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


@pytest.mark.timeout(900)  # three runs in fresh processes: ~7 min on 2 contended cores
def test_nightly_killed_mid_training_then_mid_evaluation_completes_cleanly(prefect_harness, tmp_path) -> None:  # noqa: ANN001
    from prefect.settings import PREFECT_API_URL

    home = tmp_path / "home"
    uri = f"sqlite:///{home / 'mlflow.db'}"
    env = {**os.environ, "CONDUCTOR_HOME": str(home), "PREFECT_API_URL": PREFECT_API_URL.value(),
           "MLFLOW_TRACKING_URI": uri}
    night = home / "nightly" / "local" / "drill"

    proc, marker, _ = _launch("training", tmp_path, env)
    _kill_when_blocked(proc, marker, tmp_path, "training")
    assert (night / "training" / "checkpoint-1").is_dir()
    client = mlflow.MlflowClient(tracking_uri=uri, registry_uri=uri)
    assert client.search_model_versions("name='conductor'") == []  # killed before registration

    proc, marker, _ = _launch("evaluation", tmp_path, env)
    _kill_when_blocked(proc, marker, tmp_path, "evaluation")
    assert [str(v.version) for v in client.search_model_versions("name='conductor'")] == ["1"]
    # The rerun resumed from checkpoint-1: the warm start was not redone (one SFT) and step 2 followed.
    assert (night / "training" / "checkpoint-2").is_dir()

    proc, _, out = _launch("none", tmp_path, env)
    assert proc.wait(timeout=900) == 0, (tmp_path / "log-none.txt").read_text()[-4000:]
    from flows.nightly import NightlySummary

    summary = NightlySummary.model_validate_json(out.read_text())

    # One registered version (the third run reused it), every alias on a READY version of a finished run.
    versions = client.search_model_versions("name='conductor'")
    assert [str(v.version) for v in versions] == [summary.trained.version] == ["1"]
    aliases = {a: str(v) for a, v in client.get_registered_model("conductor").aliases.items()}
    assert aliases["challenger"] == "1" and aliases.get("champion") == ("1" if summary.decision.promoted else None)
    for version in aliases.values():
        v = client.get_model_version("conductor", version)
        assert v.status == "READY" and client.get_run(v.run_id).info.status == "FINISHED"

    with TraceStore(home / "warehouse.duckdb", read_only=True) as store:
        def rows(sql: str, params: list | None = None) -> list[dict]:
            return store.query(sql, params).to_pylist()

        assert rows("SELECT count(*) - count(DISTINCT trace_id) AS dup FROM traces") == [{"dup": 0}]
        # The evaluation the gate read: each method answered each held-out problem exactly once.
        per = rows("SELECT spec, count(*) AS n, count(DISTINCT problem_id) AS p FROM v_question_outcomes"
                   " WHERE evaluation_id = ? GROUP BY spec", [summary.evaluated.evaluation_id])
        assert len(per) == 2 and all(r["n"] == r["p"] == 4 for r in per)
        # The killed runs (two nightly runs, the first training attempt, the killed evaluation and
        # its method runs) are marked abandoned, and no view counts their traces.
        status = {(r["kind"], r["status"]): r["n"] for r in
                  rows("SELECT kind, status, count(*) AS n FROM runs GROUP BY ALL")}
        assert status[("nightly", "abandoned")] == 2 and status[("nightly", "finished")] == 1
        assert status[("train", "abandoned")] == 1 and status[("train", "finished")] == 1
        assert status[("evaluation", "abandoned")] == 1 and status[("evaluation", "finished")] == 1
        assert not any(s == "running" for _, s in status)
        killed_eval = rows("SELECT count(*) AS n FROM traces t JOIN runs r USING (run_id)"
                           " WHERE r.kind = 'eval' AND r.status = 'abandoned'")
        assert killed_eval[0]["n"] > 0  # the drill did kill after recording some evaluation traces
        assert rows("SELECT count(*) AS n FROM v_questions q JOIN runs r USING (run_id) WHERE r.status <> 'finished'") \
            == [{"n": 0}]
        # One decision, recorded once, for the version it names.
        promotions = rows("SELECT promotion_id, challenger_version, promoted FROM promotions")
        assert promotions == [{"promotion_id": summary.decision.promotion_id, "challenger_version": "1",
                               "promoted": summary.decision.promoted}]
