"""The results table in the shape of the paper's Table 7: methods x benchmarks plus the average,
each cell mean ± standard error over repeats (accuracy %), with $ per question."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from conductor.evaluation.stats import MeanSE, mean_se
from conductor.simulation import SIMULATED_BANNER


@dataclass(frozen=True)
class RepeatScore:
    """One method on one benchmark in one repeat: what the warehouse's per-repeat query returns."""

    method: str
    benchmark: str
    repeat: int
    questions: int
    correct: int
    cost_usd: float | None  # None: some call's price is unknown (never counted as $0)

    @property
    def accuracy(self) -> float:
        return self.correct / self.questions if self.questions else 0.0


@dataclass(frozen=True)
class Cell:
    accuracy: MeanSE
    usd_per_question: float | None  # None: unknown


def usd_per_question(scores: Sequence[RepeatScore]) -> float | None:
    """$ per question over these scores; None (unknown) as soon as one of them has an unknown cost."""
    costs = [s.cost_usd for s in scores]
    questions = sum(s.questions for s in scores)
    if any(c is None for c in costs):
        return None
    return sum(c for c in costs if c is not None) / questions if questions else 0.0


def cells(scores: Sequence[RepeatScore]) -> dict[tuple[str, str], Cell]:
    """(method, benchmark) -> mean ± SE of accuracy over repeats, and mean $ per question."""
    groups: dict[tuple[str, str], list[RepeatScore]] = {}
    for s in scores:
        groups.setdefault((s.method, s.benchmark), []).append(s)
    out = {}
    for key, rs in groups.items():
        out[key] = Cell(mean_se([r.accuracy for r in rs]), usd_per_question(rs))
    return out


def _pct(m: MeanSE) -> str:
    return f"{100 * m.mean:.2f}" + ("" if math.isnan(m.se) else f" ± {100 * m.se:.2f}")


def average(scores: Sequence[RepeatScore], method: str, benchmarks: Sequence[str]) -> MeanSE:
    """The method's average over benchmarks, per repeat, then mean ± SE over repeats (as the paper's avg)."""
    by_repeat: dict[int, list[float]] = {}
    for s in scores:
        if s.method == method and s.benchmark in benchmarks:
            by_repeat.setdefault(s.repeat, []).append(s.accuracy)
    return mean_se([sum(v) / len(v) for _, v in sorted(by_repeat.items()) if len(v) == len(benchmarks)] or [0.0])


def results_markdown(scores: Sequence[RepeatScore], *, simulated: bool) -> str:
    """Methods (rows) x benchmarks (columns) + avg + $/question, as markdown."""
    methods = list(dict.fromkeys(s.method for s in scores))
    benchmarks = sorted({s.benchmark for s in scores})
    table = cells(scores)
    repeats = len({s.repeat for s in scores})
    head = ["method", *benchmarks, "avg", "$/question"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in methods:
        row = [m] + [_pct(table[(m, b)].accuracy) if (m, b) in table else "–" for b in benchmarks]
        costs = [table[(m, b)].usd_per_question for b in benchmarks if (m, b) in table]
        usd = "unknown" if any(c is None for c in costs) else f"{sum(costs) / len(costs):.4f}" if costs else "–"  # type: ignore[arg-type]
        row += [_pct(average(scores, m, benchmarks)), usd]
        lines.append("| " + " | ".join(row) + " |")
    caption = (f"Accuracy % (mean ± standard error over {repeats} repeat{'s' if repeats != 1 else ''});"
               " $/question averaged over benchmarks.")
    if simulated:
        caption = f"{SIMULATED_BANNER}. " + caption
    return caption + "\n\n" + "\n".join(lines) + "\n"
