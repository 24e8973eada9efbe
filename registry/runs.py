"""A training run as an MLflow run: the config as params, per-step metrics, curve PNGs, a table
of sample workflows, and the model registered as a new `conductor` version (alias challenger)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mlflow

from registry.models import CHALLENGER, RegisteredVersion, log_and_register
from registry.store import use_store

_MAX_PARAM = 6000  # MLflow's limit on a param value
CURVES = ("reward", "reward_std", "format_rate", "accuracy", "calls_per_rollout", "usd_per_rollout", "usd_total")


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


def plot_curves(history: Sequence[Mapping[str, float]], eval_history: Sequence[Mapping[str, float]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in CURVES if any(n in row for row in history)]
    fig, axes = plt.subplots(len(names) + bool(eval_history), 1, figsize=(7, 2.2 * (len(names) + 1)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        rows = [r for r in history if name in r]
        ax.plot([r["step"] for r in rows], [r[name] for r in rows])
        ax.set_ylabel(name, fontsize=8)
    if eval_history:
        ax = axes[-1, 0]
        ax.plot([r["step"] for r in eval_history], [r["eval_accuracy"] for r in eval_history], marker="o")
        ax.set_ylabel("held-out accuracy", fontsize=8)
    axes[-1, 0].set_xlabel("step")
    fig.suptitle("Conductor GRPO (simulated pool)" , fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


@dataclass(frozen=True)
class LoggedRun:
    run_id: str
    experiment_id: str
    model: RegisteredVersion | None


class TrainingRun:
    """`with TrainingRun(params) as run: run.log_step(row) ...; run.finish(...)`.

    `log_step` takes the trainer's per-step logs (reward mean/std, format rate, accuracy, calls
    and $ per rollout) as they come, so a crashed run keeps its curve so far."""

    def __init__(self, params: Mapping[str, Any], *, run_name: str | None = None, tracking_uri: str | None = None,
                 tags: Mapping[str, str] | None = None) -> None:
        self.params, self.run_name, self.tracking_uri = params, run_name, tracking_uri
        self.tags = dict(tags or {})
        self.run_id = ""
        self.experiment_id = ""

    def __enter__(self) -> TrainingRun:
        self.experiment_id = use_store(self.tracking_uri)
        run = mlflow.start_run(experiment_id=self.experiment_id, run_name=self.run_name, tags=self.tags)
        self.run_id = run.info.run_id
        mlflow.log_params(flat_params(self.params))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
        mlflow.end_run(status="FAILED" if exc_type else "FINISHED")

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
        summary: Mapping[str, float] = {},
        alias: str = CHALLENGER,
    ) -> LoggedRun:
        """Curves, held-out metrics, sample workflows, summary; then log and register the model."""
        for row in eval_history:
            mlflow.log_metrics({metric_key(k): v for k, v in row.items() if k != "step"}, step=int(row["step"]))
        if summary:
            mlflow.log_metrics({metric_key(k): float(v) for k, v in summary.items()})
        with tempfile.TemporaryDirectory() as tmp:
            if history or eval_history:
                mlflow.log_artifact(str(plot_curves(history, eval_history, Path(tmp) / "curves.png")), "plots")
        if samples:
            columns = sorted({k for s in samples for k in s})
            mlflow.log_table({c: [str(s.get(c, "")) for s in samples] for c in columns}, artifact_file="sample_workflows.json")
        model = log_and_register(model_dir, alias=alias) if model_dir is not None else None
        return LoggedRun(run_id=self.run_id, experiment_id=self.experiment_id, model=model)
