"""A training run as an MLflow run: the config as params, per-step metrics, curve PNGs, a table
of sample workflows, and the model registered as a new `conductor` version (alias challenger).
Tagged `conductor.kind` training and `conductor.simulated`, as evaluation runs are."""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mlflow

from conductor.stops import is_stop
from registry.models import CHALLENGER, RegisteredVersion, log_and_register
from registry.store import REGISTERED_MODEL, use_store

_MAX_PARAM = 6000  # MLflow's limit on a param value


def flat_params(config: Mapping[str, Any]) -> dict[str, str]:
    """Every config field as a string param (None and empty values kept: they are choices too)."""
    out = {}
    for key, value in config.items():
        text = json.dumps(value, default=str) if isinstance(value, (dict, list, tuple)) else str(value)
        out[key] = text[:_MAX_PARAM]
    return out


def metric_key(name: str) -> str:
    """MLflow keys allow letters, digits, `_-./ `; TRL's names use `/` already."""
    return "".join(c if c.isalnum() or c in "_-./ " else "_" for c in name)


def run_status(exc: BaseException | None) -> str:
    """How an MLflow run ends: FINISHED, KILLED when stopped from outside (Ctrl-C, SIGTERM:
    conductor/stops.py), FAILED on an error."""
    if exc is None:
        return "FINISHED"
    return "KILLED" if is_stop(exc) else "FAILED"


@contextlib.contextmanager
def ended_run(**start: Any) -> Iterator[mlflow.ActiveRun]:
    """`mlflow.start_run(**start)`, ended with `run_status` (MLflow's own `with` ends a run
    stopped by Ctrl-C FAILED)."""
    run = mlflow.start_run(**start)
    try:
        yield run
    except BaseException as exc:
        mlflow.end_run(status=run_status(exc))
        raise
    mlflow.end_run(status=run_status(None))


STRATEGIES_PLOT = "plots/strategies.png"  # the run's "strategies over training" artifact
# Tags a training run with the model directory it registered (`model_key`), so that a rerun after
# a stop between the registration and the end of its stage finds that version instead of
# registering the same model a second time.
MODEL_KEY_TAG = "conductor.model_key"


def model_key(model_dir: str | Path) -> str:
    """The model directory as it is on disk: its path and each file's name, size and mtime (not
    the bytes: a 7B model's weights would take minutes to hash). Training the directory again
    rewrites its files, and so gives another key."""
    root = Path(model_dir).resolve()
    digest = hashlib.sha256(str(root).encode())
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        st = f.stat()
        digest.update(f"{f.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def registered_run(key: str, *, tracking_uri: str | None = None) -> LoggedRun | None:
    """The finished training run that registered the model with this `model_key`, or None. Its
    version is named by number (`models:/conductor/N`): the challenger alias may have moved since."""
    experiment_id = use_store(tracking_uri)
    client = mlflow.MlflowClient()
    runs = client.search_runs([experiment_id], filter_string=f"tags.`{MODEL_KEY_TAG}` = '{key}'"
                              " and attributes.status = 'FINISHED'", max_results=1)
    for run in runs:
        versions = client.search_model_versions(f"name='{REGISTERED_MODEL}' and run_id='{run.info.run_id}'")
        if versions:
            v = versions[0]
            plots = tuple(a.path for a in client.list_artifacts(run.info.run_id, "plots"))
            return LoggedRun(run_id=run.info.run_id, experiment_id=experiment_id, plots=plots,
                             model=RegisteredVersion(name=REGISTERED_MODEL, version=str(v.version), alias="",
                                                     model_uri=f"models:/{REGISTERED_MODEL}/{v.version}"))
    return None


@dataclass(frozen=True)
class LoggedRun:
    run_id: str
    experiment_id: str
    model: RegisteredVersion | None
    plots: tuple[str, ...] = ()  # artifact paths of the plots logged (plots/curves.png, STRATEGIES_PLOT)


class TrainingRun:
    """`with TrainingRun(params, simulated=...) as run: run.log_step(row) ...; run.finish(...)`.

    `log_step` takes the trainer's per-step logs (reward mean/std, format rate, accuracy, calls
    and $ per rollout) as they come, so a crashed run keeps its curve so far."""

    def __init__(self, params: Mapping[str, Any], *, simulated: bool, run_name: str | None = None,
                 tracking_uri: str | None = None, tags: Mapping[str, str] | None = None) -> None:
        self.params, self.run_name, self.tracking_uri, self.simulated = params, run_name, tracking_uri, simulated
        self.tags = {"conductor.kind": "training", "conductor.simulated": str(simulated).lower(), **(tags or {})}
        self.run_id = ""
        self.experiment_id = ""

    def __enter__(self) -> TrainingRun:
        self.experiment_id = use_store(self.tracking_uri)
        run = mlflow.start_run(experiment_id=self.experiment_id, run_name=self.run_name, tags=self.tags)
        self.run_id = run.info.run_id
        mlflow.log_params(flat_params(self.params))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
        mlflow.end_run(status=run_status(exc))

    def log_step(self, row: Mapping[str, float]) -> None:
        step = int(row.get("step", 0))
        mlflow.log_metrics({metric_key(k): float(v) for k, v in row.items() if k != "step"}, step=step)

    def finish(
        self,
        model_dir: str | Path | None,
        *,
        history: Sequence[Mapping[str, float]] = (),
        eval_history: Sequence[Mapping[str, float]] = (),
        samples: Sequence[Mapping[str, Any]] = (),
        summary: Mapping[str, float | None] = {},
        alias: str = CHALLENGER,
    ) -> LoggedRun:
        """Curves, held-out metrics, sample workflows, summary; then log and register the model.
        When the steps logged `shape_share/<domain>/<shape>` (the reward does), the strategies
        over training too (`STRATEGIES_PLOT`)."""
        from conductor.evaluation.plots import shares_from_metrics, strategies_over_training, training_history

        for row in eval_history:
            mlflow.log_metrics({metric_key(k): v for k, v in row.items() if k != "step"}, step=int(row["step"]))
        # An unknown figure (None: a run that never evaluated has no best accuracy) is not logged:
        # a metric of 0 would read as "evaluated, and got nothing right".
        known = {metric_key(k): float(v) for k, v in summary.items() if v is not None}
        if known:
            mlflow.log_metrics(known)
        plots: list[str] = []
        with tempfile.TemporaryDirectory() as tmp:
            if history or eval_history:
                curves = training_history(history, eval_history, Path(tmp) / "curves.png", simulated=self.simulated)
                mlflow.log_artifact(str(curves), "plots")
                plots.append(f"plots/{curves.name}")
            shares = shares_from_metrics(history)
            if shares:
                strategies = strategies_over_training(shares, Path(tmp) / Path(STRATEGIES_PLOT).name,
                                                      simulated=self.simulated, run=self.run_id)
                mlflow.log_artifact(str(strategies), "plots")
                plots.append(STRATEGIES_PLOT)
        if samples:
            columns = sorted({k for s in samples for k in s})
            mlflow.log_table({c: [str(s.get(c, "")) for s in samples] for c in columns}, artifact_file="sample_workflows.json")
        model = log_and_register(model_dir, alias=alias) if model_dir is not None else None
        return LoggedRun(run_id=self.run_id, experiment_id=self.experiment_id, model=model, plots=tuple(plots))
