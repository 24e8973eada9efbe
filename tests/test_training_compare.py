"""The oracle's strategy baselines (benchmarks/learning.py's rows): every step on the domain's
oracle worker, shaped as named, over a simulated pool whose workers are each always right in
one domain and always wrong in the other."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
import yaml

from conductor.shapes import shape_of
from conductor.training.compare import ORACLE_STRATEGIES, attempts_text, baselines, oracle_strategy, selection_problems
from conductor.training.problems import bank_splits
from conductor.workers.simulated.instructions import on_topic_instruction


def _worker(id_: str, math: float, choice: float) -> dict:
    return {"id": id_, "provider": "simulated", "model": id_, "description": id_, "prices": {"input": 1.0, "output": 1.0},
            "options": {"skills": {"math": math, "choice": choice, "freeform": 0.5, "code": 0.5}, "refine": 1.0,
                        "latency_ms": {"median": 1, "sigma": 0.0}, "output_tokens": {"median": 50}}}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    pool = tmp_path_factory.mktemp("pool") / "two.yaml"
    # Worker 0 knows only choice, worker 1 only math: the oracle routes each domain to the other one.
    pool.write_text(yaml.safe_dump({"name": "two", "workers": [_worker("knowy", 0.0, 1.0), _worker("mathy", 1.0, 0.0)]}))
    test = bank_splits().test
    problems = [p for p in test if p.domain == "math"][:4] + [p for p in test if p.domain == "choice"][:4]
    return baselines(problems, pool, latency_scale=0.0)


EXPECTED = {"oracle + self-verify": ("verify_refine", 2), "oracle + 3 attempts + aggregator": ("fan_out_aggregate", 4),
            "oracle + 4 attempts + aggregator": ("fan_out_aggregate", 5)}


@pytest.mark.parametrize("strategy", sorted(EXPECTED))
def test_each_oracle_strategy_runs_every_step_on_the_domains_oracle_worker(base, strategy: str) -> None:
    assert base.oracle_workers == {"math": 1, "choice": 0}
    result = oracle_strategy(base, strategy)
    assert result.accuracy == 1.0 and result.format_rate == 1.0
    shape, n = EXPECTED[strategy]
    for row, trace in zip(base.rows, result.traces):
        oracle = {"math": "mathy", "choice": "knowy"}[row.problem.domain]
        assert shape_of(trace) == shape and [s.worker_id for s in trace.steps] == [oracle] * n
        # The wording a strategy-aware oracle writes: the simulator's own instruction per role.
        last = "verify" if strategy.endswith("self-verify") else "combine"
        assert trace.workflow.subtasks == (on_topic_instruction(row.problem),) * (n - 1) + (
            on_topic_instruction(row.problem, last),)
        assert list(trace.steps[-1].reads) == list(range(n - 1))


def test_an_aggregator_needs_two_attempts() -> None:
    with pytest.raises(ValueError, match="at least 2 attempts"):
        attempts_text(0, bank_splits().test[0], 1)
    assert set(ORACLE_STRATEGIES) == set(EXPECTED)


def test_a_comparators_wording_is_picked_off_the_rows_it_is_scored_on() -> None:
    """`selection_problems`: as many training-split problems as the held-out rows, spread evenly
    over the domains, none of them a held-out one (a wording picked on the rows it is scored on is
    biased upward)."""
    splits = bank_splits()
    held_out = splits.test[:40]
    picked = selection_problems(held_out)
    assert len(picked) == len(held_out)
    assert {p.id for p in picked} <= {p.id for p in splits.train}
    assert not {p.id for p in picked} & {p.id for p in held_out}
    assert sorted(collections.Counter(p.domain for p in picked).values()) == [10, 10, 10, 10]
