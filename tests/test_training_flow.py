"""The Prefect training flow for real: GRPO in chunks (each a task that resumes from the last
checkpoint), then one MLflow run registered as conductor@challenger."""

from __future__ import annotations

import mlflow

from conductor.training.config import local_profile
from conductor.training.problems import local_problems, split_problems
from conductor.training.warm import warm_started_tiny


def test_training_flow_runs_chunks_and_registers(tmp_path, prefect_harness, monkeypatch) -> None:
    from flows.training import training_flow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    train, _ = split_problems(local_problems("train"), 0.25, seed=0)
    model = warm_started_tiny(local_profile(tmp_path / "warm", sft_epochs=2.0), train, copies=2, hidden_size=32,
                              num_hidden_layers=1)
    overrides = {"model_name_or_path": str(model), "max_steps": 2, "per_device_train_batch_size": 4,
                 "num_generations": 2, "max_completion_length": 32, "eval_every": 0, "early_stopping_patience": 0}
    out = tmp_path / "run"
    registered = training_flow(output_dir=str(out), chunk_steps=1, overrides=overrides)
    # Two chunks, each ending in a checkpoint the next one resumed from.
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    client = mlflow.MlflowClient(uri)
    assert len(client.get_metric_history(registered["run_id"], "reward")) == 2
    assert str(client.get_model_version_by_alias("conductor", "challenger").version) == registered["version"]
