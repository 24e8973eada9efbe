"""An evaluation as an MLflow run (experiment `conductor-evaluation`): the config as params, one
metric per method x benchmark (accuracy, mean over repeats) plus each method's average and
$ per question, the results table and cost table as text, and the plots as artifacts.

Metric keys: `accuracy/<benchmark>/<method>`, `accuracy_avg/<method>`,
`usd_per_question/<method>` (method names sanitised to MLflow's key characters)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import mlflow

from registry.runs import ended_run, flat_params, metric_key
from registry.store import tracking_uri, use_store

if TYPE_CHECKING:
    from conductor.evaluation.report import EvaluationReport

EXPERIMENT = "conductor-evaluation"


@dataclass(frozen=True)
class LoggedEvaluation:
    run_id: str
    experiment_id: str
    tracking_uri: str
    artifact_uri: str

    @property
    def runs_uri(self) -> str:
        return f"runs:/{self.run_id}"



def evaluation_metrics(scores: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Metrics from the per-repeat scores (rows of `v_repeat_scores`): accuracy per method x
    benchmark averaged over repeats, each method's average over benchmarks, $ per question (only
    where every call's price is known)."""
    acc: dict[tuple[str, str], list[float]] = {}
    usd: dict[str, list[float | None]] = {}
    questions: dict[str, int] = {}
    for r in scores:
        q = int(r["questions"])
        acc.setdefault((r["method"], r["benchmark"]), []).append(int(r["correct"]) / q if q else 0.0)
        known = r.get("cost_known") is not False and r["cost_usd"] is not None
        usd.setdefault(r["method"], []).append(float(r["cost_usd"]) if known else None)
        questions[r["method"]] = questions.get(r["method"], 0) + q
    out: dict[str, float] = {}
    per_method: dict[str, list[float]] = {}
    for (method, bench), values in acc.items():
        mean = sum(values) / len(values)
        out[metric_key(f"accuracy/{bench}/{method}")] = mean
        per_method.setdefault(method, []).append(mean)
    for method, means in per_method.items():
        out[metric_key(f"accuracy_avg/{method}")] = sum(means) / len(means)
        # A method with a call of unknown price gets no $ metric: a partial sum would read as its cost.
        if all(u is not None for u in usd[method]):
            out[metric_key(f"usd_per_question/{method}")] = sum(u for u in usd[method] if u is not None) / max(
                1, questions[method])
    return out


def open_evaluation_store(uri: str | None = None) -> str:
    """The evaluation experiment's id, made if need be: the slow first part of `log_evaluation`
    in a fresh process (importing MLflow, making or checking its SQLite tables: seconds), which
    a flow can do while its calls run."""
    return use_store(uri or tracking_uri(), experiment=EXPERIMENT)


def prepare_evaluation_store() -> None:
    """What a flow can do while its calls run, so that `log_evaluation` does not wait for it after
    them: import MLflow (importing this module does) and, for a store on this machine (SQLite or
    files), make or check its tables and the experiment. A tracking server is not contacted: an
    unreachable one would hold the caller through MLflow's HTTP retries (minutes)."""
    uri = tracking_uri()
    if urlparse(uri).scheme in ("", "file", "sqlite"):
        open_evaluation_store(uri)


def log_evaluation(evaluation_id: str, *, params: Mapping[str, Any], scores: Sequence[Mapping[str, Any]],
                   report: EvaluationReport, uri: str | None = None) -> LoggedEvaluation:
    """One finished MLflow run for the evaluation; returns where it is."""
    simulated = report.simulated
    uri = uri or tracking_uri()
    experiment_id = open_evaluation_store(uri)
    name = f"evaluation-{evaluation_id[:8]}" + ("-simulated" if simulated else "")
    with ended_run(experiment_id=experiment_id, run_name=name) as run:
        mlflow.set_tags({"conductor.evaluation_id": evaluation_id, "conductor.simulated": str(simulated).lower(),
                         "conductor.kind": "evaluation"})
        mlflow.log_params(flat_params(dict(params)))
        mlflow.log_metrics(evaluation_metrics(scores))
        mlflow.log_text(report.table_markdown, "results.md")
        mlflow.log_text(report.costs_markdown, "costs.md")
        for path in report.plots:
            mlflow.log_artifact(str(path), artifact_path="plots")
        return LoggedEvaluation(run.info.run_id, experiment_id, uri, run.info.artifact_uri)
