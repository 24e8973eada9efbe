"""The nightly's training under accelerate, for real: the Prefect training flow with an
accelerate config runs each checkpointed GRPO chunk as `accelerate launch ... conductor train
--resume`, here two CPU processes joined by torch.distributed (gloo), with the tiny model. Two
chunks: both ranks step, the second chunk resumes from the first's checkpoint, the ranks' rollouts
reach the warehouse, and one model is registered."""

from __future__ import annotations

from pathlib import Path

import mlflow

from conductor.training.config import local_profile
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.result import TrainResult
from conductor.training.warm import warm_started_tiny
from tests.test_training_flow import _messages
from warehouse.store import TraceStore

REPO = Path(__file__).resolve().parent.parent
CPU_2PROC = REPO / "deployments" / "accelerate" / "cpu_2proc.yaml"


def test_each_chunk_runs_under_accelerate_on_two_processes(tmp_path, prefect_harness, monkeypatch) -> None:
    from flows.training import TrainingRequest, training_flow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    # what a launch would inherit as its temp dir: torch's elastic agent leaves a folder there
    inherited = tmp_path / "tmp"
    inherited.mkdir()
    monkeypatch.setenv("TMPDIR", str(inherited))
    train = take_per_domain(bank_splits().train, 16)
    model = warm_started_tiny(local_profile(tmp_path / "warm", sft_epochs=1.0, sft_problems=16), train, copies=1,
                              hidden_size=32, num_hidden_layers=1)
    overrides = {"model_name_or_path": str(model), "max_steps": 2, "per_device_train_batch_size": 2,
                 "num_generations": 2, "max_completion_length": 16, "eval_every": 0, "early_stopping_patience": 0,
                 "validation_problems": 2}
    out = tmp_path / "run"
    state = training_flow(TrainingRequest(output_dir=str(out), chunk_steps=1, overrides=overrides,
                                          accelerate_config=str(CPU_2PROC)), return_state=True)
    registered = state.result()
    logged = _messages(state.state_details.flow_run_id)
    # Each chunk was a launch, and its ranks' lines reached the task's log.
    launches = [m for m in logged if m.startswith("launch: ") and "accelerate launch --config_file" in m]
    assert len(launches) == 2 and all(" train --config " in m and " --resume " in m for m in launches), launches
    stepped = {m for m in logged if " of 2: stepped to " in m}
    # chunk 1 ends at its own step (the run's schedule goes on), chunk 2 at the run's max_steps
    assert stepped == {f"rank {r} of 2: stepped to {step} ({why})" for r in (0, 1)
                       for step, why in ((1, "chunk_end"), (2, "max_steps"))}, stepped
    # The second chunk resumed: its checkpoint holds both steps' optimizer history, and it started at step 1.
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    first = TrainResult.from_json((out / "chunks" / "to-step-1.result.json").read_text())
    second = TrainResult.from_json((out / "chunks" / "to-step-2.result.json").read_text())
    assert (first.world_size, second.world_size) == (2, 2)
    assert [r["step"] for r in first.history] == [1] and [r["step"] for r in second.history] == [2]
    # One model registered, from the last chunk's directory.
    client = mlflow.MlflowClient(uri)
    assert [str(v.version) for v in client.search_model_versions("name='conductor'")] == [registered.version]
    assert len(client.get_metric_history(registered.run_id, "reward")) == 2
    # Both ranks' rollouts were staged and ingested under the one training run: 2 steps x 2 ranks
    # x 2 rollouts (per device).
    with TraceStore(prefect_harness / "warehouse.duckdb", read_only=True) as store:
        rows = store.query("SELECT run_id, status FROM runs WHERE kind = 'train' AND mlflow_run_id = ?",
                           [registered.run_id]).to_pylist()
        assert len(rows) == 1 and rows[0]["status"] == "finished"
        n = store.query("SELECT count(*) AS n FROM traces WHERE run_id = ?", [rows[0]["run_id"]]).to_pylist()
    assert n == [{"n": 2 * 2 * 2}]
    # The launches left nothing in the temp dir they inherited, and removed their own.
    assert list(inherited.iterdir()) == [] and not list((out / "chunks").glob("*.tmp"))
