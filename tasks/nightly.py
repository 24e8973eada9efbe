"""The nightly pipeline's own steps as Prefect tasks, thin over conductor/, registry/ and
warehouse/: the held-out problems, the champion and its model directory, the paired outcomes of
an evaluation, the gate (decided once per challenger), the `promotions` and `nightly` rows, and
the artifacts of the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import task
from prefect.artifacts import (create_image_artifact, create_link_artifact, create_markdown_artifact,
                               create_table_artifact)
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from conductor.training.problems import bank_splits, take_per_domain
from registry import nightly as reg
from registry.promotion import Decision, GateConfig, Outcomes, gate
from tasks.traces import warehouse_file
from warehouse import nightly as wh
from warehouse.lifecycle import run_here
from warehouse.records import Promotion, Run
from warehouse.store import TraceStore


@task(name="heldout-problems", cache_policy=NO_CACHE)
def heldout_problems(n: int, seed: int, out_dir: str) -> str:
    """`n` problems of the generated bank's held-out split (spread over the domains; never
    trained or selected on), written as a Problem JSONL the evaluation reads. Same n and seed,
    same problems."""
    if n < 1:
        raise ValueError(f"heldout_problems must be at least 1 (got {n})")
    problems = take_per_domain(bank_splits().test, n, seed=seed)
    path = Path(out_dir) / f"heldout-{n}-seed{seed}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(p.model_dump_json() + "\n" for p in problems))
    tmp.replace(path)
    return str(path)


@task(name="current-champion", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5])
def current_champion() -> str | None:
    return reg.champion()


@task(name="model-directory", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5])
def model_directory(version: str, root: str) -> str:
    """The local directory of a registered version (downloaded once under `root`)."""
    return str(reg.model_dir(version, root))


@task(name="question-outcomes", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5])
def question_outcomes(evaluation_id: str, db_path: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    with TraceStore(warehouse_file(db_path), read_only=True) as store:
        return wh.question_outcomes(store, evaluation_id)


@task(name="spend", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5])
def spend(run_ids: list[str], db_path: str | None = None) -> float | None:
    with TraceStore(warehouse_file(db_path), read_only=True) as store:
        return wh.spend(store, run_ids)


class GateInputs(BaseModel):
    """What the promotion gate compares: the challenger and the champion (or the baseline, when
    `champion_version` is None) on one evaluation's problems."""

    challenger_version: str
    challenger_spec: str
    champion_spec: str
    champion_version: str | None = None
    gate: GateConfig = GateConfig()
    evaluation_id: str = ""


@task(name="promotion-gate", cache_policy=NO_CACHE)
def decide_once(inputs: GateInputs, challenger: dict[str, Any], champion: dict[str, Any]) -> Decision:
    """The gate on the paired outcomes, unless this version already has a gate decision recorded
    (a rerun after a kill between the alias move and the end of the run): then that one."""
    recorded = reg.recorded_decision(inputs.challenger_version)
    if recorded is not None:
        return recorded
    return gate(inputs.challenger_version, Outcomes.model_validate(challenger), Outcomes.model_validate(champion),
                champion_version=inputs.champion_version, baseline=inputs.champion_spec, config=inputs.gate)


@task(name="record-promotion", cache_policy=NO_CACHE, retries=3, retry_delay_seconds=[1, 5, 20])
def record_promotion(decision: Decision, evaluation_id: str, db_path: str | None = None) -> str:
    """The decision as a `promotions` row (an upsert by promotion id: a retry writes it once)."""
    row = Promotion.from_decision(decision).model_copy(
        update={"challenger_eval_id": evaluation_id, "champion_eval_id": evaluation_id})
    with TraceStore(warehouse_file(db_path)) as store:
        store.write_promotions([row])
    return decision.promotion_id


def nightly_run(run_id: str, params: dict[str, Any]) -> Run:
    """A night's `running` row (its RunLifecycle writes it and its end)."""
    return run_here(run_id, "nightly", method="conductor-nightly", params=params)


class Tables(BaseModel):
    """The summary's tables: one row per method (and the decision), and $ by method and benchmark."""

    summary: list[dict[str, Any]]
    costs: list[dict[str, Any]]


class Artifacts(BaseModel):
    """What a night publishes as Prefect artifacts: its title (every artifact's description), the
    tables, the Table-7-style results, the links and the images (name -> URL)."""

    title: str
    tables: Tables
    results_markdown: str
    links: dict[str, str] = {}
    images: dict[str, str] = {}


@task(name="publish-summary", cache_policy=NO_CACHE)
def publish(artifacts: Artifacts) -> None:
    """The summary table, the Table-7-style results, the cost table, the links and the images
    (the strategies over training), as Prefect artifacts of the running flow (keys are stable,
    so the UI shows each one's history)."""
    title = artifacts.title
    create_table_artifact(key="nightly-summary", table=artifacts.tables.summary, description=title)
    create_markdown_artifact(key="nightly-results", markdown=artifacts.results_markdown, description=title)
    create_table_artifact(key="nightly-costs", table=artifacts.tables.costs or [{"note": "no calls recorded"}],
                          description=f"{title}: $ by method and benchmark")
    for name, url in artifacts.links.items():
        if url:
            create_link_artifact(key=f"nightly-{name.replace('_', '-')}", link=url, link_text=name.replace("_", " "),
                                 description=title)
    for name, url in artifacts.images.items():
        create_image_artifact(image_url=url, key=f"nightly-{name.replace('_', '-')}", description=title)
