"""What the nightly's stages produce and what its summary shows: typed values the nightly flow
(flows/nightly.py) returns and caches, and the cost table's row and $ wording."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from flows.evaluation import EvalResult
from registry.promotion import Decision, Margin
from tasks.training import Registered


class Trained(Registered):
    """The training stage's result: the registered challenger and where it started from."""

    champion_before: str | None  # the champion when the night began (None: none yet)
    started_from: str  # "champion v3" or "SFT warm start"


class Costs(BaseModel):
    """The cost stage's result: $ by method and benchmark, and the totals. A figure is None
    (unknown) when some call in it has no known price; it is never counted as $0."""

    rows: list[dict[str, Any]]
    usd_evaluation: float | None
    usd_training: float | None

    @property
    def usd_spent(self) -> float | None:
        """Training and evaluation together (unknown when either is)."""
        if self.usd_training is None or self.usd_evaluation is None:
            return None
        return self.usd_training + self.usd_evaluation


def dollars(usd: float | None) -> str:
    """`$0.0123`, or `unknown` for a figure with a call of unknown price."""
    return "unknown" if usd is None else f"${usd:.4f}"


COST_COLUMNS = ("method", "benchmark", "questions", "correct", "cost_usd", "usd_per_question", "usd_per_correct")


def cost_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row of the cost table from a `costs_by_benchmark` row. Its $ figures are None (unknown)
    when some call's price is unknown (`cost_known` false): their sums count only the known ones."""
    out = {k: row[k] for k in COST_COLUMNS if k in row}
    if row.get("cost_known") is False:
        out |= dict.fromkeys(("cost_usd", "usd_per_question", "usd_per_correct"), None)
    return out


class Stages(BaseModel):
    """What the stages of one night produced."""

    trained: Trained
    evaluated: EvalResult
    costs: Costs
    decision: Decision


class NightRef(BaseModel):
    """Which night: its key, its `nightly` warehouse run, its Prefect flow run, its profile."""

    run_key: str
    nightly_run_id: str
    flow_run_id: str
    profile: str


class Scores(BaseModel):
    """Held-out accuracy and $ per question by method label ("challenger v2", "champion v1", ...),
    and the challenger's margin over each other method."""

    accuracy: dict[str, float]
    usd_per_question: dict[str, float | None]  # None: some question's $ is unknown
    questions: int
    challenger_margin: dict[str, Margin] = Field(default_factory=dict)


class Report(BaseModel):
    """What the summary shows beyond the stages' results."""

    scores: Scores
    compared_with: str  # "v3" (the champion) or "template:..." (the baseline)
    champion_version_after: str | None  # the champion after the gate
    links: dict[str, str]
    results_markdown: str


class NightlySummary(Stages):
    """What a nightly run decided and where to look: the stages' results, which night, and what
    its summary showed."""

    night: NightRef
    report: Report


class ChampionEval(BaseModel):
    """The champion evaluation's result: the evaluation, and the champion's part in it."""

    evaluated: EvalResult
    champion_version: str | None  # None: no champion yet, the template baseline was evaluated
    spec: str  # the method spec evaluated as the champion
    accuracy: dict[str, float]  # method spec -> held-out accuracy
