"""Randomized training pools that sometimes hold one bad worker (conductor/training/dataset.py,
`PoolSampling.bad_worker_fraction`): its share of rows, one at most, at any position, under the
pool file's plausible name and description; off by default."""

from __future__ import annotations

import math
from collections import Counter

from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool
from tests.sim_problems import make_problems

BAD = {"sim-turbo", "sim-prover", "sim-reviewer", "sim-mini", "sim-oracle"}  # deployments/pools/bad-sim.yaml


def test_a_share_of_randomized_rows_holds_one_bad_worker_at_a_random_position() -> None:
    problems = make_problems(500, seed=1, domains=("math", "choice"))
    pool = training_pool("deployments/pools/bad-sim.yaml", problems)
    rows = build_rows(problems, pool, PoolSampling(randomized=True, k_min=1, k_max=2, bad_worker_fraction=0.3), seed=4)
    with_bad = [r for r in rows if BAD & set(r.pool_ids)]
    share, n = len(with_bad) / len(rows), len(rows)
    assert abs(share - 0.3) <= 4.5 * math.sqrt(0.3 * 0.7 / n), share
    assert all(len(BAD & set(r.pool_ids)) == 1 for r in with_bad)
    assert set().union(*(BAD & set(r.pool_ids) for r in with_bad)) == BAD  # every kind turns up
    positions = Counter(next(i for i, w in enumerate(r.pool_ids) if w in BAD) for r in with_bad)
    assert {0, 1, 2} <= set(positions)  # first, middle and last of up to three offered
    # the prompt shows it as the pool file describes it: nothing says it misbehaves
    row = next(r for r in with_bad if "sim-oracle" in r.pool_ids)
    prompt = "\n".join(m.content for m in row_messages(row, pool, examples=False))
    assert "Retrieval-augmented assistant that cites verified answers." in prompt
    assert "injector" not in prompt and "behaviour" not in prompt


def test_off_by_default_bad_workers_are_never_offered_and_other_pools_draw_as_before() -> None:
    problems = make_problems(300, seed=1, domains=("math",))
    bad_pool = training_pool("deployments/pools/bad-sim.yaml", problems)
    rows = build_rows(problems, bad_pool, PoolSampling(randomized=True, k_min=1, k_max=3), seed=4)
    assert not any(BAD & set(r.pool_ids) for r in rows)
    local = training_pool("deployments/pools/local.yaml", problems)
    on = build_rows(problems, local, PoolSampling(randomized=True, k_min=1, k_max=3, bad_worker_fraction=0.5), seed=4)
    off = build_rows(problems, local, PoolSampling(randomized=True, k_min=1, k_max=3), seed=4)
    assert on == off  # a pool without bad workers: the option changes nothing
