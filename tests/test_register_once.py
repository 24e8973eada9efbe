"""A night stopped after its model was registered but before its training stage ended is rerun
with the same run key: the registration task runs again over the same model directory. It finds
the version it registered (by the run's `conductor.model_key` tag) instead of registering the same
model a second time (issue 33). Real MLflow (sqlite), the task's own function."""

from __future__ import annotations

import os
from pathlib import Path

import mlflow

from conductor.training.result import TrainResult
from registry.store import REGISTERED_MODEL


def _chunk(model_dir: Path) -> TrainResult:
    return TrainResult(model_dir=model_dir, steps=2, stop_reason="max_steps", usd=0.5, calls=8, rollouts=4,
                       wall_s=1.0, history=[{"step": 1.0, "reward": 0.5}, {"step": 2.0, "reward": 0.75}],
                       simulated=True)


def _model(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text('{"model_type": "tiny"}')
    (path / "weights.bin").write_bytes(b"\0" * 64)
    return path


def test_a_rerun_after_registration_finds_its_version_instead_of_registering_again(tmp_path, monkeypatch,
                                                                                    prefect_harness) -> None:
    from prefect import flow

    from tasks.training import register_task

    @flow
    def register(model_dir: Path):  # noqa: ANN202 - the training flow's last step, alone
        return register_task({"seed": 0}, [_chunk(model_dir)])

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    model = _model(tmp_path / "run" / "model")
    first = register(model)
    again = register(model)  # the rerun: same directory, unchanged
    client = mlflow.MlflowClient(uri)
    versions = client.search_model_versions(f"name='{REGISTERED_MODEL}'")
    assert [str(v.version) for v in versions] == [first.version] == [again.version]
    assert again.run_id == first.run_id and again.model_uri == f"models:/{REGISTERED_MODEL}/{first.version}"
    # The directory trained again (its files rewritten) is another model: a new version.
    (model / "weights.bin").write_bytes(b"\1" * 64)
    os.utime(model / "weights.bin", ns=(1, 1))
    retrained = register(model)
    assert retrained.version != first.version
    assert len(client.search_model_versions(f"name='{REGISTERED_MODEL}'")) == 2
