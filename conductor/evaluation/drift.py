"""Drift of a worker between two nights: its accuracy alone, the share of its call attempts that
failed, and its latency, tonight against the previous night (docs/nightly.md, "Worker drift").

A figure (the mean for accuracy and failures, the median call for latency) has *moved* when
the percentile-bootstrap interval of (tonight - previous night),
resampling each night's questions, attempts or calls independently, excludes 0 on the worse side
(accuracy down, failures or latency up) and the change is at least the figure's `min_change`:
a statistically clear and practically meaningful change. A worker with a moved figure is flagged.
Plain functions over plain values: the warehouse reads and the Prefect tasks are elsewhere."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from conductor.simulation import simulated_note

Metric = Literal["accuracy", "failure_rate", "latency_s"]
# which way is worse: accuracy falls, failures and latency rise
WORSE: dict[Metric, int] = {"accuracy": -1, "failure_rate": 1, "latency_s": 1}
# latency compares the median call: a few slow calls (a loaded machine, a cold cache) are not a
# swapped model; the rates compare means
STATISTIC: dict[Metric, str] = {"accuracy": "mean", "failure_rate": "mean", "latency_s": "median"}


@dataclass(frozen=True)
class DriftConfig:
    confidence: float = 0.99  # the bootstrap interval; 3 figures x every worker are tested each night
    resamples: int = 4000
    seed: int = 0
    # the smallest change worth flagging per figure (latency in seconds: a loaded machine's jitter
    # is not a swapped model)
    min_change: Mapping[str, float] = field(
        default_factory=lambda: {"accuracy": 0.05, "failure_rate": 0.05, "latency_s": 0.5})


@dataclass(frozen=True)
class WorkerSamples:
    """One worker's night: per question of its single:<worker> method, right or not; per call
    attempt, failed or not; per call, seconds."""

    correct: Sequence[bool] = ()
    failed: Sequence[bool] = ()
    latency_s: Sequence[float] = ()

    def of(self, metric: Metric) -> Sequence[float]:
        return {"accuracy": self.correct, "failure_rate": self.failed, "latency_s": self.latency_s}[metric]


@dataclass(frozen=True)
class Shift:
    """One figure of one worker, previous night -> tonight, with the bootstrap interval of the change."""

    worker_id: str
    metric: Metric
    before: float
    after: float
    low: float  # interval of (after - before)
    high: float
    n_before: int
    n_after: int
    confidence: float
    moved: bool

    @property
    def change(self) -> float:
        return self.after - self.before

    def text(self) -> str:
        scale, unit = (1.0, " s") if self.metric == "latency_s" else (100.0, " pts")
        return (f"{self.worker_id} {self.metric}: {scale * self.before:.2f} -> {scale * self.after:.2f} "
                f"({scale * self.change:+.2f}{unit}, {self.confidence:.0%} interval "
                f"[{scale * self.low:+.2f}, {scale * self.high:+.2f}]{unit}, n={self.n_before}/{self.n_after})")


def bootstrap_change(before: Sequence[float], after: Sequence[float], *, resamples: int = 4000,
                     confidence: float = 0.99, seed: int = 0, statistic: str = "mean") -> tuple[float, float, float]:
    """(stat(after) - stat(before), low, high) with stat the mean or the median: the percentile
    bootstrap interval of the change, resampling each sample with replacement on its own (the
    nights need not hold the same items)."""
    if not len(before) or not len(after):
        raise ValueError("bootstrap_change needs values on both nights")
    stat = {"mean": np.mean, "median": np.median}[statistic]
    a, b = np.asarray(after, dtype=float), np.asarray(before, dtype=float)
    rng = np.random.default_rng(seed)
    diffs = (stat(a[rng.integers(0, len(a), size=(resamples, len(a)))], axis=1)
             - stat(b[rng.integers(0, len(b), size=(resamples, len(b)))], axis=1))
    tail = (1 - confidence) / 2
    low, high = np.quantile(diffs, [tail, 1 - tail])
    return float(stat(a) - stat(b)), float(low), float(high)


def shift(worker_id: str, metric: Metric, before: Sequence[float], after: Sequence[float],
          config: DriftConfig) -> Shift:
    statistic = STATISTIC[metric]
    change, low, high = bootstrap_change(before, after, resamples=config.resamples, confidence=config.confidence,
                                         seed=config.seed, statistic=statistic)
    stat = {"mean": np.mean, "median": np.median}[statistic]
    worse = WORSE[metric]
    beyond = high < 0 if worse < 0 else low > 0  # the whole interval on the worse side of 0
    moved = beyond and abs(change) >= config.min_change.get(metric, 0.0)
    return Shift(worker_id=worker_id, metric=metric, before=float(stat(before)), after=float(stat(after)),
                 low=low, high=high, n_before=len(before), n_after=len(after), confidence=config.confidence,
                 moved=moved)


def worker_shifts(before: Mapping[str, WorkerSamples], after: Mapping[str, WorkerSamples],
                  config: DriftConfig | None = None) -> list[Shift]:
    """Every figure of every worker present on both nights with values on both (a worker new
    tonight, or a figure with no values on one night, is not compared)."""
    config = config or DriftConfig()
    out = []
    for worker_id in sorted(set(before) & set(after)):
        for metric in WORSE:
            b, a = before[worker_id].of(metric), after[worker_id].of(metric)
            if len(b) and len(a):
                out.append(shift(worker_id, metric, b, a, config))
    return out


def flagged(shifts: Sequence[Shift]) -> list[str]:
    """The workers with a moved figure, in order."""
    return sorted({s.worker_id for s in shifts if s.moved})


def drift_markdown(shifts: Sequence[Shift], tonight: str, previous: str | None, simulated: bool) -> str:
    """The artifact: which workers moved, then every figure compared."""
    label = simulated_note(simulated)
    if previous is None:
        return f"# Worker drift{label}\n\nEvaluation {tonight}: no earlier night to compare with.\n"
    moved = flagged(shifts)
    head = (f"# Worker drift{label}\n\nEvaluation {tonight} against {previous}: "
            + (f"**{len(moved)} worker(s) moved: {', '.join(moved)}**" if moved else "no worker moved") + ".\n\n")
    rows = ["| worker | figure | previous | tonight | change | interval | moved |", "|---|---|---|---|---|---|---|"]
    for s in shifts:
        scale = 1.0 if s.metric == "latency_s" else 100.0
        rows.append(f"| {s.worker_id} | {s.metric} | {scale * s.before:.2f} | {scale * s.after:.2f} | "
                    f"{scale * s.change:+.2f} | [{scale * s.low:+.2f}, {scale * s.high:+.2f}] | "
                    f"{'**yes**' if s.moved else 'no'} |")
    if not shifts:
        return head
    return (head + "\n".join(rows) + "\n\nAccuracy and failure rate in points, latency in seconds; "
            f"{shifts[0].confidence:.0%} bootstrap intervals of tonight - previous.\n")
