"""Randomized training pools that sometimes hold one bad worker (conductor/training/dataset.py,
`PoolSampling.bad_worker_fraction`): its share of rows, one at most, at any position, under the
pool file's plausible name and description; off by default."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool
from conductor.training.grpo import sampling_of
from conductor.training.sft_data import sft_examples
from conductor.training.warm import warm_sampling
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


def share_with_bad(rows) -> float:  # noqa: ANN001
    return sum(bool(BAD & set(r.pool_ids)) for r in rows) / len(rows)


def test_the_training_config_field_reaches_the_warm_start_and_grpo_rows(tmp_path) -> None:  # noqa: ANN001
    problems = make_problems(600, seed=2, domains=("math", "choice"))
    pool = training_pool("deployments/pools/bad-sim.yaml", problems)
    cfg = local_profile(tmp_path, pool_file="deployments/pools/bad-sim.yaml", randomized_pools=True, pool_k_min=1,
                        pool_k_max=2, bad_worker_fraction=0.4)
    bound = 4.5 * math.sqrt(0.4 * 0.6 / len(problems))
    for sampling in (sampling_of(cfg), warm_sampling(cfg)):  # GRPO's rows, the warm start's rows
        assert abs(share_with_bad(build_rows(problems, pool, sampling, seed=3)) - 0.4) <= bound
    # the warm start's examples show them: a bad worker's description in about that share of prompts
    described = [s.description for s in pool.specs if s.id in BAD]
    examples = sft_examples(problems, pool, warm_sampling(cfg), copies=1, seed=3)
    shown = sum(any(d in "\n".join(m["content"] for m in e["prompt"]) for d in described) for e in examples)
    assert abs(shown / len(examples) - 0.4) <= bound
    default = local_profile(tmp_path, pool_file="deployments/pools/bad-sim.yaml", randomized_pools=True)
    assert share_with_bad(build_rows(problems, pool, sampling_of(default), seed=3)) == 0


def test_a_share_without_randomized_pools_or_outside_0_to_1_is_refused_when_the_config_is_built(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match="bad_worker_fraction needs randomized_pools"):
        local_profile(tmp_path, bad_worker_fraction=0.5)
    with pytest.raises(ValueError, match=r"bad_worker_fraction must be between 0 and 1 \(got 1.5\)"):
        local_profile(tmp_path, randomized_pools=True, bad_worker_fraction=1.5)
