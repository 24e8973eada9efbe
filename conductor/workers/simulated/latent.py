"""Difficulty and ability: a two-level item-response model.

Each problem has a difficulty z_p ~ N(0, 1) shared by every worker (so hard problems beat
everyone more often and errors correlate). A worker sees z_wp = sqrt(s) z_p + sqrt(1 - s) e_wp,
s = `difficulty_share`, e_wp its own N(0, 1) draw, so z_wp is N(0, 1) too. Then

    P(solve) = logistic(a (theta - z_wp) - w (1 - Q))

with a = `discrimination`, Q the instruction's quality (instructions.py) and w its weight. The
ability theta is solved at init so that, with Q = 1, the mean over z ~ N(0, 1) is the
configured skill.
"""

from __future__ import annotations

import hashlib
import math
import re
from functools import lru_cache
from statistics import NormalDist
from typing import Any

from conductor.data.schema import Problem

_NORMAL = NormalDist()
# Quantiles of N(0, 1) on a fine grid: the expectation over difficulty is a plain average.
_GRID = 4000
_Z_GRID = tuple(_NORMAL.inv_cdf((i + 0.5) / _GRID) for i in range(_GRID))
_EPS = 1e-6


def logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def unit(*parts: Any) -> float:
    """A stable uniform in (0, 1) from the parts (blake2b; the same on every machine and run)."""
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(str(p).encode())
        h.update(b"\x1f")
    return (int.from_bytes(h.digest(), "big") + 0.5) / 2**64


# Labels some sources carry: a label picks a band of quantiles, the hash places the problem in it.
_LABEL_BANDS = {"easy": (0.0, 1 / 3), "medium": (1 / 3, 2 / 3), "hard": (2 / 3, 1.0)}
_LEVEL = re.compile(r"^\s*(?:level\s*)?([1-5])\s*$", re.IGNORECASE)


def difficulty_quantile(problem: Problem) -> float:
    """Where the problem sits in the difficulty distribution, in (0, 1) (higher is harder).

    `meta["difficulty"]` as a number in [0, 1] is used as is; as "easy"/"medium"/"hard" (LiveCodeBench)
    it picks a third; MATH's `meta["level"]` 1-5 picks a fifth. Otherwise, and within a band, a stable
    hash of the problem id decides."""
    u = unit("difficulty", problem.id)
    given = problem.meta.get("difficulty")
    if isinstance(given, (int, float)) and not isinstance(given, bool) and 0.0 <= given <= 1.0:
        return min(max(float(given), _EPS), 1 - _EPS)
    band = _LABEL_BANDS.get(given.strip().lower()) if isinstance(given, str) else None
    level = _LEVEL.match(str(problem.meta.get("level", "")))
    if band is None and level:
        n = int(level.group(1))
        band = ((n - 1) / 5, n / 5)
    if band is not None:
        return band[0] + (band[1] - band[0]) * u
    return u


def problem_difficulty(problem: Problem) -> float:
    """z_p, the difficulty every worker shares."""
    return _NORMAL.inv_cdf(difficulty_quantile(problem))


def worker_difficulty(problem: Problem, worker_key: str, share: float) -> float:
    """z_wp: the shared difficulty mixed with this worker's own draw for the problem."""
    own = _NORMAL.inv_cdf(unit("own-difficulty", worker_key, problem.id))
    return math.sqrt(share) * problem_difficulty(problem) + math.sqrt(1.0 - share) * own


@lru_cache(maxsize=4096)
def ability(skill: float, discrimination: float) -> float:
    """theta such that the mean of logistic(a (theta - z)) over z ~ N(0, 1) is `skill` (bisection).
    Skills of exactly 0 or 1 give -inf / +inf (never / always right)."""
    if skill <= 0.0:
        return -math.inf
    if skill >= 1.0:
        return math.inf
    lo, hi = -30.0, 30.0
    for _ in range(80):
        mid = (lo + hi) / 2
        mean = sum(logistic(discrimination * (mid - z)) for z in _Z_GRID[::4]) / (_GRID // 4)
        lo, hi = (mid, hi) if mean < skill else (lo, mid)
    return (lo + hi) / 2


def p_solve(theta: float, z: float, discrimination: float, quality: float, weight: float,
            budget_bonus: float = 0.0) -> float:
    """P(a right answer) for one attempt; `budget_bonus` (logits) is what a token budget above the
    constrained one adds (`budget_doublings`)."""
    if math.isinf(theta):
        return 1.0 if theta > 0 else 0.0
    return logistic(discrimination * (theta - z) - weight * (1.0 - quality) + budget_bonus)


# The paper's constrained budget (4096 output tokens per call): skills are calibrated at it.
BASE_BUDGET = 4096
MAX_BUDGET_DOUBLINGS = 4.0


def budget_doublings(max_tokens: int | None) -> float:
    """How many doublings of the constrained budget a call's token budget is: 0 at or below 4096
    (or when the call states none), 3 at 32768, at most 4."""
    if not max_tokens or max_tokens <= BASE_BUDGET:
        return 0.0
    return min(MAX_BUDGET_DOUBLINGS, math.log2(max_tokens / BASE_BUDGET))
