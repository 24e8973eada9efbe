"""The nightly pipeline (`make run`, `conductor nightly`, the 02:00 UTC deployment) and the
champion evaluation (the 06:00 UTC deployment).

`nightly_flow` (Prefect name `conductor-nightly`), in order:
1. curation (cached, `curation_flow`);
2. training for `steps` GRPO steps (`training_flow`), resuming from the champion when one
   exists, else from the SFT warm start; registered as `conductor@challenger`;
3. evaluation of the challenger and the champion (the template baseline while there is no
   champion) and the baselines on the same held-out problems (`evaluation_flow`);
4. cost accounting (`nightly_costs_flow`);
5. the promotion gate (`promotion_flow`: registry/promotion.py's gate, recorded in MLflow and
   as a `promotions` row);
6. a summary (Prefect artifacts and the returned `NightlySummary`).

Every stage is a flow of its own with typed parameters. Work that must not be done twice in one
night (training + registration, the evaluation, the gate) runs as a task cached on the night's
`run_key` and its inputs, with its result persisted under $CONDUCTOR_HOME, so a rerun after a
failure or a kill reuses what completed and redoes only the rest."""

from __future__ import annotations

from typing import Any, Literal

from prefect import flow
from pydantic import BaseModel

NIGHTLY_FLOW = "conductor-nightly"
CHAMPION_EVAL_FLOW = "conductor-champion-eval"

GateMethod = Literal["bootstrap", "mcnemar"]


class NightlySummary(BaseModel):
    """What a nightly run decided and where to look."""

    run_key: str
    profile: str
    simulated: bool
    challenger_version: str
    champion_version_before: str | None
    champion_version_after: str | None
    compared_with: str  # "v3" (the champion) or "template:..." (the baseline)
    promoted: bool
    reason: str
    promotion_id: str
    evaluation_id: str
    accuracy: dict[str, float]  # method -> held-out accuracy
    usd_per_question: dict[str, float]
    usd_spent: float  # training + evaluation, this night
    mlflow_run_id: str
    model_uri: str
    out_dir: str


@flow(name=NIGHTLY_FLOW, log_prints=True)
def nightly_flow(
    profile: str = "local",
    steps: int = 2,
    chunk_steps: int = 1,
    seed: int = 0,
    pool_file: str | None = None,
    heldout_problems: int = 24,
    baselines: list[str] | None = None,
    margin: float = 0.0,
    confidence: float = 0.95,
    cost_bound: float = 0.10,
    gate_method: GateMethod = "bootstrap",
    training_overrides: dict[str, Any] | None = None,
    concurrency: int = 4,
    run_key: str | None = None,
    db_path: str | None = None,
) -> NightlySummary:
    """Curate -> train `steps` GRPO steps -> evaluate challenger vs champion (or the template
    baseline) and `baselines` on `heldout_problems` held-out problems -> costs -> gate -> summary.
    `run_key` names the night (default: today's UTC date): a rerun with the same key reuses the
    stages that completed."""
    raise NotImplementedError


@flow(name=CHAMPION_EVAL_FLOW, log_prints=True)
def champion_eval_flow(
    profile: str = "local",
    seed: int = 0,
    pool_file: str | None = None,
    heldout_problems: int = 24,
    baselines: list[str] | None = None,
    concurrency: int = 4,
    db_path: str | None = None,
) -> dict[str, Any]:
    """Evaluate the current champion (the template baseline when there is none) and `baselines`
    on the held-out problems; returns the evaluation id and accuracy per method."""
    raise NotImplementedError
