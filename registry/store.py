"""Where MLflow writes: the tracking URI and the artifact location of the project's experiment."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import mlflow  # noqa: E402  (after the telemetry switch)

from conductor.config import Settings  # noqa: E402

REGISTERED_MODEL = "conductor"
EXPERIMENT = "conductor-training"


def tracking_uri(settings: Settings | None = None) -> str:
    """`MLFLOW_TRACKING_URI` when set, else the profile's SQLite file under $CONDUCTOR_HOME."""
    return os.environ.get("MLFLOW_TRACKING_URI") or (settings or Settings()).mlflow_uri


def use_store(uri: str | None = None, settings: Settings | None = None, *, experiment: str = EXPERIMENT) -> str:
    """Point MLflow (tracking and registry) at the store; create `experiment` (training's by
    default) with a local artifact root beside a SQLite file. Returns the experiment id."""
    uri = uri or tracking_uri(settings)
    if uri.startswith("sqlite:///"):
        Path(uri.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    mlflow.set_tracking_uri(uri)
    mlflow.set_registry_uri(uri)
    found = mlflow.get_experiment_by_name(experiment)
    if found is not None:
        return found.experiment_id
    location = None
    if uri.startswith("sqlite:///"):
        location = (Path(uri.removeprefix("sqlite:///")).parent / "mlartifacts").resolve().as_uri()
    return mlflow.create_experiment(experiment, artifact_location=location)
