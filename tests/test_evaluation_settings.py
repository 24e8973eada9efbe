"""`constrained` vs `unconstrained`: the unconstrained setting lifts the token (and so reasoning)
budget of every call from 4096 to 32768, and the simulated pool answers that in the documented,
modest way (docs/simulated.md, "The token budget"): +budget_gain logits per doubling above 4096
(3 doublings: +0.3 by default) and budget_tokens x doublings more output tokens (x2.5)."""

from __future__ import annotations

import asyncio
import math
import statistics
from pathlib import Path

import pytest

from conductor.data.synthetic import generate_bank
from conductor.evaluation.methods import SETTING_OUTPUT_TOKENS, method_from_spec
from conductor.executor import RunOptions
from conductor.solve import solve_many
from conductor.types import Task
from conductor.workers.registry import BuildContext
from conductor.workers.simulated.latent import budget_doublings, logistic



def _run(spec: str, pool_file: Path, problems: list, setting: str) -> list:
    method = method_from_spec(spec, pool_file, problems=problems, setting=setting)  # type: ignore[arg-type]

    async def go() -> list:
        async with method.open_pool(BuildContext(problems=problems)) as pool:
            return await solve_many([Task.of(p) for p in problems], pool, method.planner, options=RunOptions(config=method.execution))

    return asyncio.run(go())


def test_the_budget_response_is_the_documented_formula() -> None:
    assert budget_doublings(None) == budget_doublings(4096) == budget_doublings(1000) == 0.0
    assert budget_doublings(32768) == pytest.approx(3.0) and budget_doublings(10**9) == 4.0
    from conductor.types import WorkerSpec
    from conductor.workers.simulated.worker import ProblemBank, SimulatedWorker

    p = next(p for p in generate_bank(20, seed=2) if p.domain == "math")
    w = SimulatedWorker(WorkerSpec(id="w", provider="simulated", max_tokens=32768,
                                   options={"skills": {"math": 0.6}}), ProblemBank([p]))
    base, lifted = w.p_solve(p, "solve it", 4096), w.p_solve(p, "solve it", 32768)
    assert w.p_solve(p, "solve it") == base
    assert math.log(lifted / (1 - lifted)) - math.log(base / (1 - base)) == pytest.approx(0.3)
    assert logistic(0.0) == 0.5


def test_unconstrained_is_a_bigger_budget_that_helps_modestly_and_costs_more(fast_pool: Path) -> None:
    assert SETTING_OUTPUT_TOKENS == {"constrained": 4096, "unconstrained": 32768}
    problems = [p for p in generate_bank(1100, seed=12) if p.domain in ("math", "choice")]
    assert len(problems) >= 500
    con = _run("single:sim-coder", fast_pool, problems, "constrained")
    unc = _run("single:sim-coder", fast_pool, problems, "unconstrained")
    right_c = [t.verdict.correct for t in con]
    right_u = [t.verdict.correct for t in unc]
    # same draws, higher P(solve): every question right under the small budget stays right
    assert all(u for c, u in zip(right_c, right_u) if c)
    gain = (sum(right_u) - sum(right_c)) / len(problems)
    # the model's expectation, question by question, with the instruction the baseline gave
    from conductor.workers.pool import read_pool_file
    from conductor.workers.simulated.worker import ProblemBank, SimulatedWorker

    spec = next(w for w in read_pool_file(fast_pool).workers if w.id == "sim-coder")
    worker = SimulatedWorker(spec, ProblemBank(problems))
    deltas = [worker.p_solve(p, t.steps[0].subtask, 32768) - worker.p_solve(p, t.steps[0].subtask, 4096)
              for p, t in zip(problems, con)]
    expected = sum(deltas) / len(problems)
    se = math.sqrt(sum(d * (1 - d) for d in deltas)) / len(problems)
    assert 0.01 < expected < 0.06  # modest: a few points
    assert abs(gain - expected) < 3 * se + 1e-9, (gain, expected, se)
    tokens_c = statistics.median(t.usage.output_tokens for t in con)
    tokens_u = statistics.median(t.usage.output_tokens for t in unc)
    assert tokens_u / tokens_c == pytest.approx(2.5, rel=0.1)  # 1 + 0.5 x 3 doublings
    assert sum(t.usage.cost_usd for t in unc) > 2 * sum(t.usage.cost_usd for t in con)
