"""Prompt rows for GRPO: a problem, the workers offered to the Conductor (the full pool, or a
seeded random subset in shuffled order), whether the row recurses, the effort level its prompt
states (drawn per row when the run trains effort levels), and the rendered prompt."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from datasets import Dataset

from conductor.data.schema import Problem
from conductor.effort import Effort
from conductor.kind_reader import read_kinds
from conductor.prompts import conductor_messages
from conductor.types import WorkerSpec
from conductor.workers.pool import Pool, read_pool_file
from conductor.workers.registry import CONDUCTOR_PROVIDER, BuildContext
from conductor.workflow import DEFAULT_MAX_STEPS

CONDUCTOR_ID = "conductor"
CONDUCTOR_SPEC = WorkerSpec(id=CONDUCTOR_ID, provider=CONDUCTOR_PROVIDER)


def training_pool(pool_file: str | Path, problems: Sequence[Problem], *, latency_scale: float = 1.0,
                  repeat: int = 0) -> Pool:
    """The pool file's workers plus the Conductor itself (offered only on recursion rows).
    Simulated workers get `problems` as their bank, so they know the gold answers, and wait
    `latency_scale` times their drawn latency (real workers are not affected). `repeat` r gives
    the simulated workers an evaluation's r-th repeat's dice (`PoolFile.for_repeat`)."""
    whole = read_pool_file(pool_file).for_repeat(repeat)
    specs = [s for s in whole.workers if s.provider != CONDUCTOR_PROVIDER]
    return Pool.from_specs([*specs, CONDUCTOR_SPEC], BuildContext(problems=list(problems), latency_scale=latency_scale))


@dataclass(frozen=True)
class PoolSampling:
    """How each row's offered pool is drawn."""

    randomized: bool = False
    k_min: int = 2
    k_max: int | None = None
    recursion_fraction: float = 0.0
    # the effort levels a row draws one of, uniformly (its prompt states it; the reward charges
    # its calls at that level's rate); empty: rows state no level, as before effort existed
    efforts: tuple[Effort, ...] = ()
    # randomized pools only: the share of rows offered one bad worker (a pool-file worker with a
    # `behaviour` other than honest, docs/simulated.md) at a random position; otherwise bad workers
    # are never offered. Off by default; a pool without bad workers draws exactly as before.
    bad_worker_fraction: float = 0.0


@dataclass(frozen=True)
class PromptRow:
    problem: Problem
    pool_ids: tuple[str, ...]  # as offered, in order ("Model 0" first)
    recursion: bool
    effort: Effort | None = None

    def offered(self, pool: Pool) -> Pool:
        return pool.offer(list(self.pool_ids))


def offered_ids(worker_ids: Sequence[str], rng: random.Random, sampling: PoolSampling) -> list[str]:
    """The full pool in file order, or k (uniform in k_min..k_max) of its workers, shuffled."""
    ids = list(worker_ids)
    if not sampling.randomized:
        return ids
    k_max = min(sampling.k_max or len(ids), len(ids))
    k_min = max(1, min(sampling.k_min, k_max))
    return rng.sample(ids, rng.randint(k_min, k_max))


def build_rows(
    problems: Sequence[Problem], pool: Pool, sampling: PoolSampling, *, seed: int = 0
) -> list[PromptRow]:
    """One row per problem; the same seed gives the same pools, recursion rows and effort levels.
    The levels come from their own Random: a run with effort rows offers the same pools as one
    without."""
    # Each row's prompt states its task's kind (conductor/kind_reader.py): read them all in one batch
    # now, which the prompts then find already read (one at a time, 2,000 rows cost 8 s).
    read_kinds(p.task_text for p in problems)
    rng = random.Random(seed)
    effort_rng = random.Random(f"effort-{seed}")
    workers = [s.id for s in pool.specs if s.provider != CONDUCTOR_PROVIDER]
    bad = [s.id for s in pool.specs if s.id in workers and s.options.get("behaviour", "honest") != "honest"]
    honest = [w for w in workers if w not in bad] if sampling.randomized else workers
    rows = []
    for problem in problems:
        ids = offered_ids(honest, rng, sampling)
        if sampling.randomized and bad and sampling.bad_worker_fraction and rng.random() < sampling.bad_worker_fraction:
            ids.insert(rng.randint(0, len(ids)), rng.choice(bad))  # under its own plausible name and description
        recursion = rng.random() < sampling.recursion_fraction
        if recursion:
            ids.append(CONDUCTOR_ID)
        effort = effort_rng.choice(sampling.efforts) if sampling.efforts else None
        rows.append(PromptRow(problem=problem, pool_ids=tuple(ids), recursion=recursion, effort=effort))
    return rows


def row_messages(row: PromptRow, pool: Pool, *, examples: bool, max_steps: int = DEFAULT_MAX_STEPS):
    return conductor_messages(row.problem.task_text, row.offered(pool).specs, examples=examples, max_steps=max_steps,
                              effort=row.effort)


def to_dataset(rows: Sequence[PromptRow], pool: Pool, *, examples: bool, max_steps: int = DEFAULT_MAX_STEPS) -> Dataset:
    """A TRL prompt dataset (conversational `prompt`); the other columns reach the reward function."""
    return Dataset.from_list(
        [
            {
                "prompt": [m.model_dump(include={"role", "content"}) for m in row_messages(row, pool, examples=examples, max_steps=max_steps)],
                "problem": row.problem.model_dump_json(),
                "pool_ids": list(row.pool_ids),
                "recursion": row.recursion,
                "effort": None if row.effort is None else str(row.effort),
            }
            for row in rows
        ]
    )
