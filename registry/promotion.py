"""The promotion gate: a challenger version becomes `champion` only when it beats the champion
(or, with no champion yet, a baseline such as the template planner) on the same held-out
problems by `margin` with confidence, and costs at most (1 + cost_bound) x the champion's $ per
question. Every alias move (gate, --force, rollback) is recorded on the model version in MLflow
(tags and description) and returned as a `Decision` the caller writes to the warehouse.

The gate takes plain data: per-question correctness and $ for each side, paired by question id
(dicts) or by position (lists). Computing them is the evaluation library's job."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from conductor.evaluation.stats import paired_bootstrap
from conductor.stops import signals_held

CHAMPION = "champion"
HISTORY_TAG = "champion_history"  # registered-model tag: JSON list of champion versions, oldest first


class Outcomes(BaseModel):
    """One side's per-question results: correct (bool) and cost ($, None when some call of the
    question had no known price), keyed by question id."""

    correct: dict[str, bool]
    cost_usd: dict[str, float | None]

    @field_validator("correct", "cost_usd", mode="before")
    @classmethod
    def _keyed(cls, value: Any) -> Any:
        if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            return {str(i): v for i, v in enumerate(value)}
        return value

    @property
    def accuracy(self) -> float:
        return sum(self.correct.values()) / len(self.correct) if self.correct else float("nan")

    @property
    def usd_per_question(self) -> float | None:
        """Mean $ per question; None (unknown) when any question's $ is, never a mean counting it as $0."""
        costs = list(self.cost_usd.values())
        if any(c is None for c in costs):
            return None
        return math.fsum(costs) / len(costs) if costs else float("nan")  # type: ignore[arg-type]


class GateConfig(BaseModel):
    margin: float = Field(0.0, description="Accuracy the challenger must win by (0.02 = 2 points).")
    confidence: float = Field(0.95, description="Confidence of the paired comparison.")
    cost_bound: float = Field(0.10, description="x: challenger $/question <= champion's x (1 + x).")
    cost_bound_vs_baseline: bool = Field(
        False, description="Also hold the first challenger (no champion yet) to the cost bound against the "
        "baseline it is compared with. Off: the bound guards against cost creep over a deployed champion, and "
        "a baseline (a template planner) is not one; the first night's figures still show both $/question.")
    method: Literal["bootstrap", "mcnemar"] = Field(
        "bootstrap", description="bootstrap (paired, lower bound > margin) or mcnemar.")
    resamples: int = 10_000
    seed: int = 0


class Decision(BaseModel):
    promotion_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    model_name: str = "conductor"
    challenger_version: str
    champion_version: str | None = None  # the champion when decided (None: none yet)
    baseline: str | None = None  # what the challenger was compared with when there was no champion
    promoted: bool
    forced: bool = False
    action: Literal["gate", "force", "rollback"] = "gate"
    reason: str
    decided_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    figures: dict[str, Any] = Field(default_factory=dict)

    def promotion_row(self) -> dict[str, Any]:
        """The `promotions` row (warehouse columns); the rest goes into `metrics`."""
        return {
            "promotion_id": self.promotion_id, "model_name": self.model_name,
            "challenger_version": self.challenger_version, "champion_version": self.champion_version,
            "promoted": self.promoted, "reason": self.reason, "decided_at": self.decided_at,
            "metrics": self.figures | {"action": self.action, "forced": self.forced, "baseline": self.baseline},
        }


class Margin(BaseModel):
    """The challenger's held-out accuracy minus another method's on the same questions, with the
    paired bootstrap's one-sided lower bound at the gate's confidence."""

    diff: float
    low: float

    def text(self) -> str:
        """`+0.102 [+0.031]`: the difference [its lower bound]."""
        return f"{self.diff:+.3f} [{self.low:+.3f}]"


def challenger_margin(challenger: Outcomes, other: Outcomes, c: GateConfig) -> Margin | None:
    """The challenger minus `other` on the questions both answered (None when they share none),
    with the gate's resamples, confidence and seed."""
    ids = sorted(set(challenger.correct) & set(other.correct))
    if not ids:
        return None
    diff = paired_bootstrap([float(challenger.correct[i]) for i in ids], [float(other.correct[i]) for i in ids],
                            resamples=c.resamples, confidence=2 * c.confidence - 1, seed=c.seed)
    return Margin(diff=diff.diff, low=diff.low)


def mcnemar_p(wins: int, losses: int) -> float:
    """Exact one-sided McNemar p-value: P(X >= wins), X ~ Binomial(wins + losses, 1/2)."""
    n = wins + losses
    if n == 0:
        return 1.0
    return math.fsum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n


def decide(challenger_version: str, challenger: Outcomes, champion: Outcomes, *, config: GateConfig = GateConfig(),
           champion_version: str | None = None, baseline: str | None = None, model_name: str = "conductor") -> Decision:
    """The gate's rule on plain data (no MLflow)."""
    ids = sorted(challenger.correct)
    if set(ids) != set(champion.correct) or set(ids) != set(challenger.cost_usd) or set(ids) != set(champion.cost_usd):
        raise ValueError("the gate needs both sides' outcomes and costs on the same questions")
    if not ids:
        raise ValueError("the gate needs at least one question")
    a = [float(challenger.correct[i]) for i in ids]
    b = [float(champion.correct[i]) for i in ids]
    diff = paired_bootstrap(a, b, resamples=config.resamples, confidence=2 * config.confidence - 1, seed=config.seed)
    # A two-sided interval at 2c - 1 has the one-sided lower bound at confidence c.
    wins = sum(x > y for x, y in zip(a, b))
    losses = sum(x < y for x, y in zip(a, b))
    p = mcnemar_p(wins, losses)
    if config.method == "bootstrap":
        better = diff.low > config.margin
        evidence = f"bootstrap lower bound {diff.low:+.4f} {'>' if better else '<='} margin {config.margin:+.4f}"
    else:
        better = p < 1 - config.confidence and diff.diff > config.margin
        evidence = f"McNemar p={p:.4g} (wins {wins}, losses {losses}), diff {diff.diff:+.4f} vs margin {config.margin:+.4f}"
    usd_c, usd_k = challenger.usd_per_question, champion.usd_per_question
    if usd_c is None or usd_k is None:
        # The cost bound cannot be checked on an unknown $, and an unknown $ is never taken as $0:
        # the challenger is kept out until its costs (and the champion's) are known.
        limit, cheap = None, False
        unknown = " and ".join(side for side, usd in (("challenger", usd_c), ("champion", usd_k)) if usd is None)
        cost = f"$/question unknown for the {unknown} (a call of unknown price): the cost bound cannot be checked"
    elif champion_version is None and not config.cost_bound_vs_baseline:
        limit, cheap = None, True
        cost = f"${usd_c:.6f}/q vs the baseline's ${usd_k:.6f}/q (no champion yet: the cost bound guards a champion)"
    else:
        limit = usd_k * (1 + config.cost_bound)
        cheap = usd_c <= limit + 1e-12
        cost = f"${usd_c:.6f}/q {'<=' if cheap else '>'} ${limit:.6f}/q (champion ${usd_k:.6f} x {1 + config.cost_bound:g})"
    promoted = better and cheap
    against = f"v{champion_version}" if champion_version else f"baseline {baseline or '?'}"
    verdict = ("promoted" if promoted else "not better" if not better
               else "too expensive" if limit is not None else "cost unknown")
    figures = {
        "method": config.method, "margin": config.margin, "confidence": config.confidence, "cost_bound": config.cost_bound,
        "n": len(ids), "challenger_accuracy": challenger.accuracy, "champion_accuracy": champion.accuracy,
        "diff": diff.diff, "low": diff.low, "high": diff.high, "mcnemar_p": p, "wins": wins, "losses": losses,
        "challenger_usd_per_question": usd_c, "champion_usd_per_question": usd_k, "usd_limit": limit,
    }
    return Decision(model_name=model_name, challenger_version=str(challenger_version), champion_version=champion_version,
                    baseline=None if champion_version else baseline, promoted=promoted,
                    reason=f"{verdict} vs {against}: {evidence}; {cost}", figures=figures)


# MLflow side ---------------------------------------------------------------------------------

def _client(tracking_uri: str | None = None):  # noqa: ANN202
    import mlflow

    from registry.store import use_store

    use_store(tracking_uri)
    return mlflow.MlflowClient()


def current_champion(client, name: str = "conductor") -> str | None:  # noqa: ANN001
    aliases = client.get_registered_model(name).aliases
    return str(aliases[CHAMPION]) if CHAMPION in aliases else None


def _history(client, name: str) -> list[str]:  # noqa: ANN001
    return json.loads(client.get_registered_model(name).tags.get(HISTORY_TAG, "[]"))


def _record(client, decision: Decision) -> None:  # noqa: ANN001
    """Tags and a description line on the challenger version: the decision and its figures."""
    name, version = decision.model_name, decision.challenger_version
    outcome = "promoted" if decision.promoted else "rejected"
    tags = {
        "gate.decision": outcome, "gate.action": decision.action, "gate.reason": decision.reason[:5000],
        "gate.promotion_id": decision.promotion_id, "gate.champion_version": decision.champion_version or "",
        "gate.baseline": decision.baseline or "",
        "gate.decided_at": decision.decided_at.isoformat(), "gate.figures": json.dumps(decision.figures, default=str)[:5000],
    }
    for key, value in tags.items():
        client.set_model_version_tag(name, version, key, value)
    old = client.get_model_version(name, version).description or ""
    line = f"[{decision.decided_at:%Y-%m-%d %H:%M}Z] {decision.action}: {outcome}; {decision.reason}"
    client.update_model_version(name, version, description=(old + "\n" + line).strip())


def _move(client, decision: Decision) -> None:  # noqa: ANN001
    name = decision.model_name
    client.set_registered_model_alias(name, CHAMPION, decision.challenger_version)
    history = _history(client, name) + [decision.challenger_version]
    client.set_registered_model_tag(name, HISTORY_TAG, json.dumps(history))


def gate(challenger_version: str, challenger: Outcomes, champion: Outcomes, *, champion_version: str | None = None,
         baseline: str = "template", config: GateConfig = GateConfig(), name: str = "conductor",
         tracking_uri: str | None = None) -> Decision:
    """Decide, move `champion` if promoted, record in MLflow. `champion_version` must be the
    current champion (None when there is none: then `champion` holds the baseline's outcomes)."""
    client = _client(tracking_uri)
    client.get_model_version(name, str(challenger_version))  # it must exist
    current = current_champion(client, name)
    if current != (str(champion_version) if champion_version is not None else None):
        raise ValueError(f"champion outcomes are for {champion_version!r} but the champion is {current!r}")
    decision = decide(str(challenger_version), challenger, champion, config=config, champion_version=current,
                      baseline=baseline, model_name=name)
    _apply(client, decision)
    return decision


def _apply(client, decision: Decision) -> None:  # noqa: ANN001
    """Move `champion` (if promoted) and record the decision, whole: a Ctrl-C or SIGTERM that
    arrives meanwhile waits for the last write, so a rerun finds the decision with its alias
    (or neither), never an alias moved with no decision to say why."""
    with signals_held():
        if decision.promoted:
            _move(client, decision)
        _record(client, decision)


def force(version: str, *, name: str = "conductor", tracking_uri: str | None = None) -> Decision:
    """Move `champion` to `version` without the gate; recorded with reason "forced"."""
    client = _client(tracking_uri)
    client.get_model_version(name, str(version))
    decision = Decision(model_name=name, challenger_version=str(version), champion_version=current_champion(client, name),
                        promoted=True, forced=True, action="force", reason="forced")
    _apply(client, decision)
    return decision


def rollback(*, name: str = "conductor", tracking_uri: str | None = None) -> Decision:
    """Move `champion` back to the previous champion (by the recorded history); recorded."""
    client = _client(tracking_uri)
    current = current_champion(client, name)
    history = _history(client, name)
    while history and history[-1] == current:
        history.pop()
    if current is None or not history:
        raise ValueError(f"no previous champion to roll back to (champion: {current!r})")
    previous = history[-1]
    decision = Decision(model_name=name, challenger_version=previous, champion_version=current, promoted=True,
                        action="rollback", reason=f"rollback from v{current} to v{previous}")
    with signals_held():  # the alias, the history and the record, whole (as `_apply`)
        client.set_registered_model_alias(name, CHAMPION, previous)
        client.set_registered_model_tag(name, HISTORY_TAG, json.dumps(history))
        _record(client, decision)
    return decision
