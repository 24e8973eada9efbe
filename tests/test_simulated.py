"""The simulated pool as a Worker: deterministic, in each domain's exact format, graded by the real
verifiers, budget-aware, retried, and usable from pool files (statistics: test_simulated_model.py)."""

from __future__ import annotations

import pytest

from conductor.config import ExecutionConfig
from conductor.data.bank import sample_problems
from conductor.data.schema import Problem, TestCase
from conductor.executor import RunOptions, execute
from conductor.planners import TemplatePlanner
from conductor.workers.pricing import lookup
from conductor.prompts import PriorStep, step_message
from conductor.solve import solve_many
from conductor.verify import verify
from conductor.types import Prices, Task, WorkerSpec
from conductor.workers.pool import Pool, PoolError
from conductor.workers.registry import BuildContext
from conductor.workers.simulated import (
    extract_answer,
    gold_answer,
    is_right,
    on_topic_instruction,
    render_answer,
    wrong_answers,
)
from conductor.workflow import Workflow
from tests.sim_helpers import FAST, decide, sim
from tests.sim_problems import make_problems


def math_problems(n: int) -> list[Problem]:
    return [Problem(id=f"m{i}", source="t", domain="math", question=f"What is {i} + {i}?", answer=str(2 * i))
            for i in range(n)]


async def ask(worker, problem, instruction=None, context=()):
    instruction = on_topic_instruction(problem) if instruction is None else instruction
    return await worker.complete(step_message(problem.question, list(context), instruction))


async def test_deterministic_for_a_seed_and_call_content():
    ps = math_problems(30)
    w1, w2 = sim(problems=ps, skills={"math": 0.5}), sim(problems=ps, skills={"math": 0.5})
    out1 = [(await ask(w1, p)).text for p in ps]
    out2 = [(await ask(w2, p)).text for p in reversed(ps)][::-1]  # order of calls does not matter
    assert out1 == out2
    w3 = sim(problems=ps, skills={"math": 0.5}, seed=7)
    assert [(await ask(w3, p)).text for p in ps] != out1


async def test_repeated_identical_calls_are_fresh_samples():
    ps = math_problems(200)
    w = sim(problems=ps, skills={"math": 0.5})
    first = [extract_answer(p, (await ask(w, p)).text) for p in ps]
    second = [extract_answer(p, (await ask(w, p)).text) for p in ps]
    assert 20 < sum(a != b for a, b in zip(first, second)) < 180


async def test_answers_are_in_each_domains_format_and_the_real_verifier_agrees():
    problems = sample_problems() + make_problems(12, seed=3)
    for skill in (1.0, 0.0):
        w = sim(problems=problems, skills={d: skill for d in ("math", "choice", "freeform", "code")})
        for p in problems:
            if gold_answer(p) is None:
                continue
            out = (await ask(w, p)).text
            if p.domain == "math":
                assert "\\boxed{" in out
            elif p.domain == "code":
                assert "```python\n" in out
            else:
                assert "Answer: " in out
            assert verify(p, out).correct is (skill == 1.0), (p.id, out)


def test_wrong_programs_really_fail_and_are_varied():
    code = [p for p in sample_problems() + make_problems(8, seed=3) if p.domain == "code"]
    assert code
    varied = 0
    for p in code:
        wrongs = wrong_answers(p)
        varied += len(wrongs) > 1
        for program in wrongs:
            assert not verify(p, render_answer(p, program)).correct, (p.id, program)
    assert varied >= len(code) // 2


def test_the_data_sets_own_wrong_solutions_and_distractors_are_used():
    ps = make_problems(5, seed=3)
    code = next(p for p in ps if p.domain == "code" and "wrong_solutions" in p.meta)
    assert {w for w in wrong_answers(code)} == {w.strip() for w in code.meta["wrong_solutions"]}
    math = next(p for p in ps if p.domain == "math" and p.id.endswith("-1"))
    assert set(wrong_answers(math)) == set(math.meta["distractors"])


def test_nested_boxed_answers_are_extracted():
    p = Problem(id="n", source="t", domain="math", question="sin 60?", answer="\\frac{\\sqrt{3}}{2}")
    assert extract_answer(p, render_answer(p, "\\frac{\\sqrt{3}}{2}")) == "\\frac{\\sqrt{3}}{2}"
    assert is_right(p, extract_answer(p, "so $\\boxed{\\frac{\\sqrt{3}}{2}}$"))


def test_a_right_program_with_its_trailing_newline_counts_as_right_when_seen():
    p = Problem(id="c", source="t", domain="code", question="Print A+B.",
                tests=[TestCase(input="1 2\n", output="3\n")],
                meta={"reference_solution": "a, b = map(int, input().split())\nprint(a + b)\n\n"})
    shown = render_answer(p, p.reference_solution)
    assert extract_answer(p, shown) == gold_answer(p)
    checker = sim(problems=[p], skills={"code": 0.0}, slip=0.0)
    d = decide(checker, p, on_topic_instruction(p, "verify"), [("Write it.", shown)])
    assert d.role == "review" and d.right


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
    trace = await execute(Workflow(model_id=(0,), subtasks=("Solve.",), access_list=((),)), Task.of(p), pool, options=RunOptions(config=cfg))
    assert trace.steps[0].status == "ok" and trace.answer and extract_answer(p, trace.answer) == p.answer


def test_bad_options_fail_with_a_clear_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nworkers:\n  - id: w\n    provider: simulated\n    options:\n"
                   "      skills: {maths: 0.5}\n")
    with pytest.raises((PoolError, ValueError), match="unknown domain"):
        Pool.load(bad, BuildContext(problems=[]))
    bad.write_text("name: bad\nworkers:\n  - id: w\n    provider: simulated\n    options:\n      weak_at: {x: 1}\n")
    with pytest.raises((PoolError, ValueError), match="weak_at"):
        Pool.load(bad, BuildContext(problems=[]))


def test_paper_sim_has_the_papers_seven_workers_priced_from_the_table():
    pool = Pool.load("deployments/pools/paper-sim.yaml", BuildContext(problems=[]))
    assert pool.ids == ["gpt-5", "claude-sonnet-4", "gemini-2.5-pro", "deepseek-r1-distill-qwen-32b",
                        "gemma-3-27b-it", "qwen3-32b-thinking", "qwen3-32b-direct"]
    for spec in pool.specs[:3]:
        assert spec.prices is None and lookup(spec.model) is not None  # priced by conductor/pricing.py
    assert all(spec.prices is not None for spec in pool.specs[3:])


async def test_the_local_pool_solves_the_sample_set():
    problems = sample_problems()
    pool = Pool.load("deployments/pools/local.yaml", BuildContext(problems=problems))
    traces = await solve_many([Task.of(p) for p in problems], pool, TemplatePlanner("fanout"))
    assert len(traces) == len(problems) and all(t.parse_status == "ok" for t in traces)
    assert all(t.reward in (0.5, 1.0) for t in traces)
    assert 0 < sum(t.reward == 1.0 for t in traces) < len(traces)
    assert all(t.calls == 5 and t.usage.cost_usd > 0 for t in traces)


async def test_a_review_step_in_a_real_workflow_reads_the_earlier_answer():
    p = math_problems(1)[0]
    pool = Pool.from_specs(
        [WorkerSpec(id="bad", provider="simulated", options={**FAST, "skills": {"math": 0.0}}),
         WorkerSpec(id="good", provider="simulated", options={**FAST, "skills": {"math": 1.0}, "refine": 1.0})],
        BuildContext(problems=[p]))
    wf = Workflow(model_id=(0, 1), subtasks=(on_topic_instruction(p), on_topic_instruction(p, "verify")),
                  access_list=((), "all"))
    trace = await execute(wf, Task.of(p), pool)
    assert extract_answer(p, trace.steps[0].output) != p.answer
    assert extract_answer(p, trace.answer) == p.answer


@pytest.mark.parametrize("problem", [
    Problem(id="a", source="s", domain="math", question="No answer given?"),
    Problem(id="b", source="s", domain="choice", question="No choices?", answer="C"),
    Problem(id="c", source="s", domain="freeform", question="Odd gold?", answer="  {}\\boxed{x}  "),
    Problem(id="d", source="s", domain="code", question="No reference, no tests?"),
    Problem(id="e", source="s", domain="code", question="Unparseable reference?", meta={"reference_solution": "def ("}),
    Problem(id="f", source="s", domain="math", question="Distractors of odd types?", answer="3",
            meta={"distractors": [3, None, "", "3.0", 4], "difficulty": "impossible", "level": "Level 9"}),
])
async def test_any_problem_in_the_schema_gets_an_answer_in_its_format(problem):
    for skill in (0.0, 1.0):
        w = sim(problems=[problem], skills={problem.domain: skill})
        out = await ask(w, problem)
        assert out.text and "could not find" not in out.text
        seen = [PriorStep(0, "x", "Solve.", out.text)]
        again = await ask(w, problem, on_topic_instruction(problem, "verify"), seen)
        assert again.text
    if problem.id == "f":  # "3.0" is the gold answer written differently: never offered as wrong
        assert "3.0" not in wrong_answers(problem) and "3" not in wrong_answers(problem)


def test_problems_sharing_an_id_do_not_share_wrong_answers():
    a = Problem(id="same", source="s", domain="math", question="A?", answer="5", meta={"distractors": ["6", "7"]})
    b = Problem(id="same", source="s", domain="math", question="B?", answer="6", meta={"distractors": ["5", "8"]})
    assert set(wrong_answers(a)) == {"6", "7"}
    assert "6" not in wrong_answers(b)


async def test_latency_scale_changes_the_wait_and_nothing_else(monkeypatch):
    """Training builds the pool with latency_scale 0: the workers must answer exactly as at scale 1."""
    import conductor.workers.simulated.worker as worker_module

    real_sleep = worker_module.asyncio.sleep
    waits: list[float] = []

    async def recording_sleep(seconds: float) -> None:
        waits.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(worker_module.asyncio, "sleep", recording_sleep)
    ps = math_problems(20)
    spec = WorkerSpec(id="w", provider="simulated", prices=Prices(input=1, output=2),
                      options={"skills": {"math": 0.5}, "latency_ms": {"median": 300, "sigma": 0.5}, "fail_rate": 0.2})
    runs = {}
    for scale in (1.0, 0.5, 0.0):
        waits.clear()
        worker = Pool.from_specs([spec], BuildContext(problems=ps, latency_scale=scale)).worker("w")
        outs = []
        for p in ps:
            try:
                c = await ask(worker, p)
                outs.append((c.text, c.usage.output_tokens, c.usage.cost_usd))
            except Exception as e:  # the simulated 429s must fall on the same calls too
                outs.append(("429", str(e), None))
        runs[scale] = (outs, list(waits))
    assert runs[0.5][0] == runs[1.0][0] == runs[0.0][0]
    assert any(o[0] == "429" for o in runs[1.0][0]) and len(set(runs[1.0][1])) > 10  # drawn, not fixed
    assert runs[0.5][1] == pytest.approx([w / 2 for w in runs[1.0][1]])
    assert runs[0.0][1] == [0.0] * len(ps)
    with pytest.raises(ValueError, match="latency_scale"):
        Pool.from_specs([spec], BuildContext(problems=ps, latency_scale=-1))


def test_the_simulators_seeds_are_the_same_from_version_to_version():
    """Every simulated draw is seeded by `_digest`: the same parts must give the same seed in every
    version, or every simulated figure in docs/ stops being reproducible. Pinned values (computed
    with the original per-part blake2b updates, before the digest was made one update)."""
    from conductor.workers.simulated.worker import _digest

    assert _digest(7, "sim-generalist", "What is 2+2?") == 2756618667183991362
    assert _digest() == 16476032584258269876
    assert _digest(None, ["a", 1], 0.5) == 11409750108273948061
