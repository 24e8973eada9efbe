"""What the nightly pipeline asks the registry: the champion, a version's local model directory,
whether every alias points at a fully registered version, a gate decision already recorded on a
version (so a rerun never decides twice), and the MLflow UI's addresses."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from urllib.parse import urlencode

import mlflow
from mlflow.exceptions import MlflowException

from registry.models import resolve_model_uri
from registry.promotion import CHAMPION, Decision
from registry.store import REGISTERED_MODEL, tracking_uri, use_store

MLFLOW_UI_URL = os.environ.get("CONDUCTOR_MLFLOW_UI_URL", "http://127.0.0.1:5000")


def _client(uri: str | None = None) -> mlflow.MlflowClient:
    use_store(uri)
    return mlflow.MlflowClient()


def aliases(name: str = REGISTERED_MODEL, *, uri: str | None = None) -> dict[str, str]:
    """alias -> version ({} when the model is not registered yet)."""
    client = _client(uri)
    try:
        return {a: str(v) for a, v in client.get_registered_model(name).aliases.items()}
    except MlflowException:
        return {}


def champion(name: str = REGISTERED_MODEL, *, uri: str | None = None) -> str | None:
    return aliases(name, uri=uri).get(CHAMPION)


def model_dir(version: str, root: str | Path, name: str = REGISTERED_MODEL, *, uri: str | None = None) -> Path:
    """The local model directory of `name` version `version`, downloaded once under `root`, and
    reached through `root/v<version>` (so a planner loaded from it is named after the version)."""
    link = Path(root) / f"v{version}"
    if (link / "config.json").is_file():
        return link
    use_store(uri)
    local = resolve_model_uri(f"models:/{name}/{version}", Path(root) / f".download-v{version}")
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink():
        link.unlink()
    link.symlink_to(local.resolve(), target_is_directory=True)
    return link


def recorded_decision(version: str, name: str = REGISTERED_MODEL, *, uri: str | None = None) -> Decision | None:
    """The gate decision already recorded on `version` (its `gate.*` tags), if any."""
    tags = _client(uri).get_model_version(name, version).tags
    if tags.get("gate.action") != "gate" or not tags.get("gate.promotion_id"):
        return None
    figures = json.loads(tags.get("gate.figures") or "{}")
    return Decision(promotion_id=tags["gate.promotion_id"], model_name=name, challenger_version=str(version),
                    champion_version=tags.get("gate.champion_version") or None,
                    baseline=tags.get("gate.baseline") or None, promoted=tags.get("gate.decision") == "promoted",
                    action="gate", reason=tags.get("gate.reason", ""),
                    decided_at=datetime.fromisoformat(tags["gate.decided_at"]), figures=figures)


def ui_links(version: str, run_id: str, name: str = REGISTERED_MODEL, *, base: str = MLFLOW_UI_URL,
             uri: str | None = None) -> dict[str, str]:
    """The MLflow UI pages of the model version and of its training run (`mlflow ui` on `base`)."""
    experiment = _client(uri).get_run(run_id).info.experiment_id if run_id else ""
    return {
        "model_version": f"{base}/#/models/{name}/versions/{version}",
        "training_run": f"{base}/#/experiments/{experiment}/runs/{run_id}" if run_id else "",
        "store": tracking_uri(),
    }


def artifact_url(run_id: str, path: str, *, base: str = MLFLOW_UI_URL) -> str:
    """A run's artifact as the MLflow server on `base` serves it (its `/get-artifact` route): an
    image URL the Prefect UI can show while `conductor ui` (or `mlflow ui`) runs there."""
    return f"{base}/get-artifact?{urlencode({'path': path, 'run_uuid': run_id})}"
