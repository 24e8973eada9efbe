"""The simulated pool: deterministic, skill-shaped, refine-aware, budget-aware."""

from __future__ import annotations

import pytest

from conductor.config import ExecutionConfig
from conductor.data.bank import sample_problems
from conductor.data.schema import Problem
from conductor.executor import execute
from conductor.prompts import PriorStep, step_message
from conductor.solve import solve_many
from conductor.planners import TemplatePlanner
from conductor.types import Task
from conductor.types import Prices, WorkerSpec
from conductor.workers.pool import Pool
from conductor.workers.registry import BuildContext
from conductor.workers.simulated import ProblemBank, SimulatedWorker, extract_answer, render_answer
from conductor.workflow import Workflow

FAST = {"latency_ms": {"median": 1}, "output_tokens": {"median": 100}}


def sim(worker_id="w", problems=(), **options) -> SimulatedWorker:
    opts = {**FAST, **options}
    spec = WorkerSpec(id=worker_id, provider="simulated", prices=Prices(input=1, output=2), options=opts)
    return SimulatedWorker(spec, ProblemBank(problems))


def math_problems(n: int) -> list[Problem]:
    return [Problem(id=f"m{i}", source="t", domain="math", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(n)]


async def ask(worker, problem, instruction="Solve it.", context=()):
    return await worker.complete(step_message(problem.question, list(context), instruction))


async def n_right(worker, problems, instruction="Solve it.", contexts=None) -> int:
    right = 0
    for i, p in enumerate(problems):
        ctx = [contexts[i]] if contexts else []
        right += extract_answer(p, (await ask(worker, p, instruction, ctx)).text) == p.answer
    return right


async def test_deterministic_for_a_seed_and_call_content():
    ps = math_problems(30)
    w1, w2 = sim(problems=ps, skills={"math": 0.5}), sim(problems=ps, skills={"math": 0.5})
    out1 = [(await ask(w1, p)).text for p in ps]
    out2 = [(await ask(w2, p)).text for p in reversed(ps)][::-1]  # order of calls does not matter
    assert out1 == out2
    w3 = sim(problems=ps, skills={"math": 0.5}, seed=7)
    assert [(await ask(w3, p)).text for p in ps] != out1


@pytest.mark.parametrize("skill", [0.2, 0.8])
async def test_accuracy_follows_skill(skill):
    ps = math_problems(400)
    w = sim(problems=ps, skills={"math": skill})
    right = [extract_answer(p, (await ask(w, p)).text) == p.answer for p in ps]
    assert abs(sum(right) / len(ps) - skill) < 0.07


async def test_weakness_lowers_the_odds():
    ps = math_problems(300)
    w = sim(problems=ps, skills={"math": 0.8}, weak_at={"proof": 0.25})
    normal = await n_right(w, ps)
    weak = await n_right(w, ps, "Write a proof.")
    assert weak < normal * 0.5


async def test_refine_corrects_a_wrong_answer_with_its_probability():
    ps = math_problems(200)
    wrong = [PriorStep(0, "x", "Solve it.", render_answer(p, "999")) for p in ps]
    fixer = sim(problems=ps, skills={"math": 0.0}, refine=1.0)
    lazy = sim(problems=ps, skills={"math": 1.0}, refine=0.0)
    fixed = [extract_answer(p, (await ask(fixer, p, "Verify the answer above.", [c])).text) for p, c in zip(ps, wrong)]
    kept = [extract_answer(p, (await ask(lazy, p, "Verify the answer above.", [c])).text) for p, c in zip(ps, wrong)]
    assert all(f == p.answer for f, p in zip(fixed, ps))
    assert all(k == "999" for k in kept)  # a plausible wrong answer: it repeats what it saw


async def test_seeing_a_right_answer_helps():
    ps = math_problems(300)
    right = [PriorStep(0, "x", "Solve it.", render_answer(p, p.answer)) for p in ps]
    w = sim(problems=ps, skills={"math": 0.4})
    alone = await n_right(w, ps)
    helped = await n_right(w, ps, "Check the answer above.", right)
    assert helped > alone + 60


async def test_choice_and_code_answers_in_their_format():
    bank = sample_problems()
    choice = next(p for p in bank if p.domain == "choice")
    code = next(p for p in bank if p.domain == "code")
    w = sim(problems=bank, skills={"choice": 1.0, "code": 1.0})
    assert extract_answer(choice, (await ask(w, choice)).text) == choice.answer
    assert extract_answer(code, (await ask(w, code)).text) == code.reference_solution.strip()
    bad = sim(problems=bank, skills={"choice": 0.0})
    assert extract_answer(choice, (await ask(bad, choice)).text) in set("ABCD") - {choice.answer}


async def test_token_budget_cuts_off_the_answer():
    p = math_problems(1)[0]
    w = sim(problems=[p], skills={"math": 1.0}, output_tokens={"median": 3000})
    out = await w.complete(step_message(p.question, [], "Solve."), max_tokens=500)
    assert out.finish_reason == "length" and out.usage.output_tokens == 500 and extract_answer(p, out.text) is None
    assert out.usage.cost_usd == pytest.approx((out.usage.input_tokens * 1 + 500 * 2) / 1e6)


async def test_unknown_question_gets_a_non_answer():
    out = await sim().complete(step_message("Who are you?", [], "Answer."))
    assert "could not find" in out.text


async def test_rate_limits_are_retried_by_the_executor():
    p = math_problems(1)[0]
    spec = WorkerSpec(id="flaky", provider="simulated", options={**FAST, "skills": {"math": 1.0}, "fail_rate": 0.6})
    pool = Pool.from_specs([spec], BuildContext(problems=[p]))
    cfg = ExecutionConfig(max_retries=10, backoff_base_s=0, backoff_max_s=0)
    trace = await execute(Workflow(model_id=(0,), subtasks=("Solve.",), access_list=((),)), Task.of(p), pool, config=cfg)
    assert trace.steps[0].status == "ok" and trace.answer and extract_answer(p, trace.answer) == p.answer


async def test_the_local_pool_solves_the_sample_set():
    problems = sample_problems()
    pool = Pool.load("deployments/pools/local.yaml", BuildContext(problems=problems))
    traces = await solve_many([Task.of(p) for p in problems], pool, TemplatePlanner("fanout"))
    assert len(traces) == len(problems) and all(t.parse_status == "ok" for t in traces)
    assert all(t.reward in (0.5, 1.0) for t in traces)
    assert 0 < sum(t.reward == 1.0 for t in traces) < len(traces) + 1
    assert all(t.calls == 5 and t.usage.cost_usd > 0 for t in traces)
