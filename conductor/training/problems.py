"""Where training gets its problems (a seam: the generated bank of issue 9/10 replaces
`local_problems` when it lands; everything else takes a `list[Problem]`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from conductor.data.loaders import load_source
from conductor.data.schema import Problem
from conductor.data.sources import EVAL_SOURCES, TRAIN_SOURCES


def local_problems(role: str = "train") -> list[Problem]:
    """The shipped sample rows of the train (or eval) sources; rows a loader rejects are skipped
    (the samples include a deliberately malformed one)."""
    sources = TRAIN_SOURCES if role == "train" else EVAL_SOURCES
    return [p for spec in sources for p in load_source(spec.name, on_error="skip").problems]


def split_problems(problems: Sequence[Problem], held_out: float, *, seed: int = 0) -> tuple[list[Problem], list[Problem]]:
    """(train, held-out), by a seeded hash of each problem id, stratified per domain so every
    domain has held-out rows; the same problems and seed always give the same split."""
    train: list[Problem] = []
    test: list[Problem] = []
    by_domain: dict[str, list[Problem]] = {}
    for p in problems:
        by_domain.setdefault(p.domain, []).append(p)
    for group in by_domain.values():
        ranked = sorted(group, key=lambda p: hashlib.sha256(f"{seed}:{p.id}".encode()).hexdigest())
        n_test = round(len(ranked) * held_out)
        if held_out > 0 and len(ranked) > 1:
            n_test = max(1, n_test)
        test += ranked[:n_test]
        train += ranked[n_test:]
    return train, test
