"""Statistics of an evaluation: mean ± standard error over repeats, and a paired bootstrap
confidence interval of the difference between two methods on the same problems."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MeanSE:
    mean: float
    se: float
    n: int  # repeats (or samples) the mean is over

    def __str__(self) -> str:
        return f"{100 * self.mean:.2f} ± {100 * self.se:.2f}"


def mean_se(values: Sequence[float]) -> MeanSE:
    """Mean and standard error (sample sd / sqrt(n), ddof=1) of per-repeat figures. One value
    has no spread to estimate: its SE is NaN, not 0 (a single repeat is not certain)."""
    n = len(values)
    if n == 0:
        raise ValueError("mean_se of no values")
    mean = math.fsum(values) / n
    if n == 1:
        return MeanSE(mean, float("nan"), 1)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return MeanSE(mean, math.sqrt(var / n), n)


def repeat_accuracies(outcomes: Mapping[int, Sequence[bool]]) -> list[float]:
    """Accuracy of each repeat from {repeat: [correct per question]}."""
    return [sum(map(bool, v)) / len(v) for _, v in sorted(outcomes.items()) if len(v)]


@dataclass(frozen=True)
class PairedDiff:
    diff: float  # mean(a) - mean(b)
    low: float
    high: float
    n: int
    confidence: float

    def __str__(self) -> str:
        return f"{100 * self.diff:+.2f} [{100 * self.low:+.2f}, {100 * self.high:+.2f}] ({self.confidence:.0%} CI, n={self.n})"


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, resamples: int = 10_000, confidence: float = 0.95,
                     seed: int = 0) -> PairedDiff:
    """Percentile bootstrap CI of mean(a - b), resampling problems (pairs) with replacement.
    `a[i]` and `b[i]` must be the two methods' scores on the same problem i."""
    if len(a) != len(b):
        raise ValueError(f"paired_bootstrap needs scores on the same problems: {len(a)} vs {len(b)}")
    if not a:
        raise ValueError("paired_bootstrap of no problems")
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), size=(resamples, len(d)))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return PairedDiff(float(d.mean()), float(low), float(high), len(d), confidence)
