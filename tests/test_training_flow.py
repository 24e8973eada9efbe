"""The Prefect training flow for real: GRPO in chunks (each a task that resumes from the last
checkpoint), then one MLflow run registered as conductor@challenger."""

from __future__ import annotations

import mlflow

from conductor.training.config import local_profile
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.warm import warm_started_tiny
from warehouse.store import TraceStore


def test_training_flow_runs_chunks_and_registers(tmp_path, prefect_harness, monkeypatch) -> None:
    from flows.training import training_flow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    train = take_per_domain(bank_splits().train, 16)
    model = warm_started_tiny(local_profile(tmp_path / "warm", sft_epochs=2.0, sft_problems=16), train, copies=2,
                              hidden_size=32, num_hidden_layers=1)
    overrides = {"model_name_or_path": str(model), "max_steps": 2, "per_device_train_batch_size": 4,
                 "num_generations": 2, "max_completion_length": 32, "eval_every": 0, "early_stopping_patience": 0}
    out = tmp_path / "run"
    registered = training_flow(output_dir=str(out), chunk_steps=1, overrides=overrides)
    # Two chunks, each ending in a checkpoint the next one resumed from.
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    client = mlflow.MlflowClient(uri)
    assert len(client.get_metric_history(registered["run_id"], "reward")) == 2
    assert str(client.get_model_version_by_alias("conductor", "challenger").version) == registered["version"]
    # Both chunks' rollouts are in the warehouse under one finished `train` run with the MLflow id.
    with TraceStore(prefect_harness / "warehouse.duckdb", read_only=True) as store:
        rows = store.query("SELECT run_id, status, simulated FROM runs WHERE kind = 'train' AND mlflow_run_id = ?",
                           [registered["run_id"]]).to_pylist()
        assert len(rows) == 1 and rows[0]["status"] == "finished" and rows[0]["simulated"] is True
        n = store.query("SELECT count(*) AS n FROM traces WHERE run_id = ?", [rows[0]["run_id"]]).to_pylist()
        assert n == [{"n": 2 * 4}]
        # Each chunk's steps are on the run's curve (one row per step, 0 = before the first update).
        curve = store.query("SELECT step FROM v_training_curves WHERE run_id = ? ORDER BY step",
                            [rows[0]["run_id"]]).to_pylist()
        assert [r["step"] for r in curve] == [0, 1]
