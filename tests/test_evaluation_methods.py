"""The baselines as Methods, run through the real executor over the simulated pool."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from conductor.data.synthetic import generate_bank
from conductor.evaluation.baselines import REFLECT_ROUNDS
from conductor.evaluation.methods import MethodSpecError, method_from_spec
from conductor.executor import RunOptions
from conductor.solve import solve_many
from conductor.types import Task
from conductor.workers.registry import BuildContext

REPO = Path(__file__).resolve().parent.parent


def _run(spec: str, pool_file: Path, problems: list, **kw: object) -> list:
    method = method_from_spec(spec, pool_file, problems=problems, **kw)  # type: ignore[arg-type]

    async def go() -> list:
        async with method.open_pool(BuildContext(problems=problems)) as pool:
            return await solve_many([Task.of(p) for p in problems], pool, method.planner, options=RunOptions(config=method.execution))

    return asyncio.run(go())


def _worker_calls(trace) -> list[str]:  # noqa: ANN001
    return [s.worker_id for s in trace.steps]


def test_moa_makes_one_call_per_worker_and_one_aggregation(fast_pool: Path) -> None:
    problems = [p for p in generate_bank(40, seed=3) if p.domain != "code"][:12]
    traces = _run("moa", fast_pool, problems)
    ids = [w["id"] for w in yaml.safe_load(fast_pool.read_text())["workers"]]
    for t in traces:
        assert t.parse_status == "ok", t.parse_error
        calls = _worker_calls(t)
        assert len(calls) == len(ids) + 1  # 4 proposers + 1 aggregator on local.yaml (8 on the paper's 7)
        assert sorted(calls[:-1]) == sorted(ids)
        assert t.steps[-1].reads == list(range(len(ids)))


def test_moa_on_the_paper_pool_is_eight_calls() -> None:
    method = method_from_spec("moa", REPO / "deployments" / "pools" / "paper-sim.yaml")
    assert method.execution.max_steps == 8


def test_reflect_makes_its_rounds_each_reading_the_last(fast_pool: Path) -> None:
    problems = [p for p in generate_bank(20, seed=4) if p.domain == "math"][:4]
    traces = _run("reflect:sim-small", fast_pool, problems)
    for t in traces:
        assert t.parse_status == "ok", t.parse_error
        # the paper's 5 rounds, literally: an answer, then 5 critique-and-revise steps
        assert REFLECT_ROUNDS == 5 and _worker_calls(t) == ["sim-small"] * 6
        assert [s.reads for s in t.steps] == [[]] + [[i] for i in range(5)]


def test_budget_is_five_samples_and_a_vote(fast_pool: Path) -> None:
    problems = [p for p in generate_bank(20, seed=5) if p.domain == "choice"][:3]
    for t in _run("budget:sim-coder", fast_pool, problems):
        assert _worker_calls(t) == ["sim-coder"] * 6
        assert t.steps[-1].reads == [0, 1, 2, 3, 4]


def test_single_worker_accuracy_matches_its_configured_skill(fast_pool: Path) -> None:
    # >= 500 simulated problems of the text domains; code needs the sandbox, and its skill is checked the same way
    problems = [p for p in generate_bank(1100, seed=11) if p.domain in ("math", "choice")]
    assert len(problems) >= 500
    skills = yaml.safe_load(fast_pool.read_text())["workers"][1]["options"]["skills"]  # sim-coder
    traces = _run("single:sim-coder", fast_pool, problems)
    for domain in ("math", "choice"):
        got = [t.verdict.correct for t, p in zip(traces, problems) if p.domain == domain]
        acc = sum(got) / len(got)
        # binomial SE at n=200 is ~0.033; 3 SE plus the calibration's own error
        assert abs(acc - skills[domain]) < 0.1, (domain, acc, skills[domain])


def test_oracle_picks_the_best_worker_per_domain(fast_pool: Path) -> None:
    problems = [p for p in generate_bank(40, seed=6) if p.domain in ("math", "choice")]
    traces = _run("oracle", fast_pool, problems)
    best = {"math": "sim-mathematician", "choice": "sim-generalist"}
    for t, p in zip(traces, problems):
        assert _worker_calls(t) == [best[p.domain]]


def test_random_is_valid_and_seeded(fast_pool: Path) -> None:
    problems = [p for p in generate_bank(40, seed=7) if p.domain != "code"][:20]
    a = _run("random", fast_pool, problems, seed=1)
    b = _run("random", fast_pool, problems, seed=1)
    assert all(t.parse_status == "ok" for t in a)
    assert [_worker_calls(t) for t in a] == [_worker_calls(t) for t in b]
    assert len({len(t.steps) for t in a}) > 1  # not one fixed shape


def test_bad_specs_say_what_is_wrong(fast_pool: Path, tmp_path: Path) -> None:
    with pytest.raises(MethodSpecError, match="no worker 'gpt-9'"):
        method_from_spec("single:gpt-9", fast_pool)
    with pytest.raises(MethodSpecError, match="unknown method"):
        method_from_spec("magic", fast_pool)
    with pytest.raises(MethodSpecError, match="needs registry"):
        method_from_spec("conductor:models:/conductor@champion", fast_pool)
    with pytest.raises(MethodSpecError, match="not a model directory"):
        method_from_spec(f"conductor:{tmp_path}", fast_pool)
    resolved = []
    with pytest.raises(MethodSpecError, match="not a model directory"):
        method_from_spec("conductor:models:/conductor@champion", fast_pool,
                         resolve_model=lambda uri: resolved.append(uri) or tmp_path)
    assert resolved == ["models:/conductor@champion"]


def test_oracle_refuses_a_real_pool(tmp_path: Path) -> None:
    pool = tmp_path / "real.yaml"
    pool.write_text(yaml.safe_dump({"name": "real", "workers": [
        {"id": "gpt", "provider": "openai", "model": "gpt-5", "options": {}}]}))
    with pytest.raises(MethodSpecError, match="only in simulation"):
        method_from_spec("oracle", pool)


def test_router_learns_who_is_good_at_what(fast_pool: Path) -> None:
    from conductor.evaluation.router import RouterPlanner

    # a clean signal: worker a is right on every "alpha" question, b on every "beta" one
    questions = [f"alpha question {i}" for i in range(20)] + [f"beta question {i}" for i in range(20)]
    outcomes = {"a": [True] * 20 + [False] * 20, "b": [False] * 20 + [True] * 20, "c": [False] * 40}
    router = RouterPlanner.fit(questions, outcomes)
    assert max(router.scores("another alpha question"), key=router.scores("another alpha question").get) == "a"
    assert max(router.scores("beta again"), key=router.scores("beta again").get) == "b"
    assert router.scores("x")["c"] == 0.0


def test_router_method_trains_on_the_train_split_and_routes(fast_pool: Path) -> None:
    from conductor.data.synthetic import split_bank

    train, heldout = split_bank(generate_bank(400, seed=12))
    train = [p for p in train if p.domain in ("math", "choice")][:80]
    problems = [p for p in heldout if p.domain in ("math", "choice")][:20]
    method = method_from_spec("router", fast_pool, problems=problems, train_problems=train)
    assert method.name == "router@local-simulated"
    traces = _run_method(method, problems)
    assert all(t.parse_status == "ok" and len(t.steps) == 1 for t in traces)


def _run_method(method, problems: list) -> list:  # noqa: ANN001
    async def go() -> list:
        async with method.open_pool(BuildContext(problems=problems)) as pool:
            return await solve_many([Task.of(p) for p in problems], pool, method.planner, options=RunOptions(config=method.execution))

    return asyncio.run(go())
