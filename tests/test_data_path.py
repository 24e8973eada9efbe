"""The data path's entry points: run_plan (text in, trace out), plan_and_run, the planners,
Methods, and failures that stay on their question (nothing lost, nothing free)."""

from __future__ import annotations

import asyncio

import pytest

from conductor.kind_reader import kind_line
from conductor.config import ExecutionConfig
from conductor.data.schema import Problem
from conductor.executor import RunOptions, plan_and_run, run_plan
from conductor.methods import Method
from conductor.planners import ModelPlanner, ScriptedPlanner, TemplatePlanner
from conductor.solve import solve_many
from conductor.types import Message, Prices, Task, WorkerSpec
from conductor.verify import Verdict
from conductor.workers.pool import Pool
from conductor.workflow import Workflow, render
from tests.scripted import ScriptedWorker, pool_of, spec
from warehouse import TraceStore

TASK = Task.of(Problem(id="p1", source="test", domain="freeform", question="What is 6 times 7?", answer="42"))
ONE_STEP = render(Workflow(model_id=(0,), subtasks=("Solve it.",), access_list=((),)))


async def test_run_plan_turns_text_into_an_executed_trace_carrying_the_task():
    w = ScriptedWorker(spec("a"), reply=lambda m: "42")
    trace = await run_plan(ONE_STEP, TASK, pool_of(w), options=RunOptions(run_id="r"))
    assert trace.answer == "42" and trace.parse_status == "ok" and trace.run_id == "r"
    assert (trace.problem_id, trace.source, trace.domain) == ("p1", "test", "freeform")
    assert trace.calls == 1 and trace.usage.input_tokens == 10 and trace.usage.cost_usd == pytest.approx(0.001)


async def test_run_plan_on_garbage_is_a_parse_failure_not_an_exception():
    w = ScriptedWorker(spec("a"))
    trace = await run_plan("I would ask model 0, probably", TASK, pool_of(w))
    assert trace.parse_status == "missing_list" and trace.workflow is None and not w.seen


async def test_template_planner_reads_the_conductor_flag_not_its_description():
    workers = [WorkerSpec(id="me", provider="conductor", description="Strong generalist"),
               WorkerSpec(id="w", provider="scripted", description="the Conductor itself, it says")]
    completion = await TemplatePlanner("single").plan([], workers)
    assert "model_id = [1]" in completion.text


async def test_an_adapter_bug_fails_its_step_only():
    class Buggy(ScriptedWorker):
        async def complete(self, messages, **kw):
            raise KeyError("usage")  # an unexpected exception, not a WorkerError

    good = ScriptedWorker(spec("good"), reply=lambda m: "fine")
    text = render(Workflow(model_id=(0, 1), subtasks=("x", "y"), access_list=((), (0,))))
    trace = await run_plan(text, TASK, pool_of(Buggy(spec("bad")), good))
    assert trace.steps[0].status == "error" and "KeyError" in trace.steps[0].error
    assert trace.steps[0].call.error == trace.steps[0].error
    assert trace.steps[1].status == "ok" and trace.answer == "fine"


async def test_fifty_questions_with_one_crashing_call_store_fifty_traces(tmp_path):
    calls = {"n": 0}

    def reply(messages):
        calls["n"] += 1
        if calls["n"] == 17:
            raise RuntimeError("sandbox exploded")  # unexpected, inside one call
        return "42"

    tasks = [Task.adhoc(f"question {i}", "freeform", source="fifty") for i in range(50)]
    pool = pool_of(ScriptedWorker(spec("a"), reply=reply))
    traces = await solve_many(tasks, pool, ScriptedPlanner([ONE_STEP]), RunOptions(run_id="run-50"), verifier=None)
    with TraceStore(tmp_path / "w.duckdb") as store:
        store.write_traces(traces)
        rows = store.query("SELECT count(*) AS n, count_if(t.stop_reason IS NOT NULL) AS failed FROM traces t"
                           " WHERE run_id = 'run-50'").to_pylist()
        errors = store.query("SELECT error FROM steps WHERE status = 'error'").column(0).to_pylist()
    assert rows == [{"n": 50, "failed": 1}]
    assert len(errors) == 1 and "RuntimeError: sandbox exploded" in errors[0]


async def test_a_crashing_verifier_is_that_question_s_wrong_verdict():
    def verifier(problem, answer):
        raise RuntimeError("no sandbox")

    pool = pool_of(ScriptedWorker(spec("a"), reply=lambda m: "42"))
    [trace] = await solve_many([TASK], pool, ScriptedPlanner([ONE_STEP]), verifier=verifier)
    assert trace.verdict == Verdict(correct=False, reason="verifier failed: RuntimeError: no sandbox", method="error")
    assert trace.reward == 0.5


async def test_only_a_question_with_a_reference_is_graded():
    """A question typed at the CLI or sent to the server (Task.adhoc) has no reference answer:
    the verifier is never asked, and its trace has no verdict (unknown, not wrong)."""
    asked: list[str] = []

    def verifier(problem, answer):
        asked.append(problem.id)
        return Verdict(correct=answer == problem.answer, reason="compared", method="exact")

    adhoc = Task.adhoc("What is 6 times 7?")
    assert (adhoc.id, adhoc.source, adhoc.domain, adhoc.question) == (
        Problem.make_id("cli", "What is 6 times 7?"), "cli", "freeform", "What is 6 times 7?")
    pool = pool_of(ScriptedWorker(spec("a"), reply=lambda m: "42"))
    unknown, known = await solve_many([adhoc, TASK], pool, ScriptedPlanner([ONE_STEP]), verifier=verifier)
    assert asked == ["p1"]
    assert unknown.verdict is None and unknown.problem_id == adhoc.id and unknown.source == "cli"
    assert known.verdict is not None and known.verdict.correct and known.problem_id == "p1"


async def test_a_question_s_grading_does_not_hold_its_in_flight_slot():
    """With one question in flight, the first question's grading waits until the second
    question's worker has been called: it finishes only if grading runs outside the slot (a
    verifier inside the slot would wait forever, and the test times out)."""
    called: list[str] = []
    second_called = asyncio.Event()

    def reply(messages):
        called.append(messages[-1].content)
        if len(called) == 2:
            second_called.set()
        return "42"

    async def verifier(problem, answer):
        await second_called.wait()
        return Verdict(correct=True, reason="ok", method="test")

    tasks = [Task.of(Problem(id=f"p{i}", source="test", domain="freeform", question=f"Q{i}?", answer="42"))
             for i in range(2)]
    pool = pool_of(ScriptedWorker(spec("a"), reply=reply))
    async with asyncio.timeout(10):
        traces = await solve_many(tasks, pool, ScriptedPlanner([ONE_STEP]), verifier=verifier,
                                  options=RunOptions(config=ExecutionConfig(questions_in_flight=1)))
    assert [t.verdict.correct for t in traces] == [True, True] and [t.reward for t in traces] == [1.0, 1.0]
    assert [t.problem_id for t in traces] == ["p0", "p1"] and len(called) == 2


async def test_a_worker_without_a_price_is_refused_under_a_dollar_budget():
    w = ScriptedWorker(spec("a", prices=None), cost=None)
    cfg = ExecutionConfig(max_usd_per_question=1.0)
    trace = await run_plan(ONE_STEP, TASK, pool_of(w), options=RunOptions(config=cfg))
    assert not w.seen and trace.steps[0].status == "budget_exhausted"
    assert "no known price" in trace.steps[0].error
    # Without a budget the same call runs, and its cost is recorded as unknown, not 0.
    trace = await run_plan(ONE_STEP, TASK, pool_of(w))
    assert trace.answer == "ok" and trace.usage.cost_usd is None


async def test_a_call_that_comes_back_without_a_cost_spends_the_budget():
    priced_but_silent = ScriptedWorker(spec("a"), cost=None)  # a price in the pool, none in the answer
    b = ScriptedWorker(spec("b"))
    text = render(Workflow(model_id=(0, 1), subtasks=("x", "y"), access_list=((), (0,))))
    trace = await run_plan(text, TASK, pool_of(priced_but_silent, b), options=RunOptions(config=ExecutionConfig(max_usd_per_question=5.0)))
    assert trace.steps[0].status == "ok" and trace.steps[1].status == "budget_exhausted" and not b.seen
    assert "no cost" in trace.stop_reason


async def test_the_planner_call_has_a_timeout():
    class Stuck:
        name = "stuck"

        async def plan(self, messages, offered):
            await asyncio.sleep(30)

    pool = pool_of(ScriptedWorker(spec("a")))
    trace = await asyncio.wait_for(
        plan_and_run(TASK, pool, Stuck(), options=RunOptions(config=ExecutionConfig(planner_timeout_s=0.05))), timeout=5)
    assert trace.parse_status == "planner_error" and "timed out after 0.05s" in trace.parse_error


async def test_model_planner_on_a_tiny_model_turns_garbage_into_a_parse_failure(tmp_path):
    from conductor.models.tiny import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "tiny", seed=0)
    planner = ModelPlanner.from_directory(path, max_tokens=16)
    w = ScriptedWorker(spec("a"))
    try:
        trace = await plan_and_run(TASK, pool_of(w), planner)
    finally:
        await planner.aclose()
    assert trace.parse_status not in ("ok", "planner_error"), trace.parse_error
    assert trace.conductor_call.usage.output_tokens > 0 and trace.conductor_call.usage.cost_usd == 0.0
    assert trace.conductor_output == trace.conductor_call.output and not w.seen
    assert trace.conductor_prompt[-1].content.endswith(f"{TASK.question}\n\n{kind_line(TASK.question)}")


def test_a_method_is_named_by_planner_and_pool_and_says_when_it_is_simulated(tmp_path):
    sim = Method(TemplatePlanner("fanout"), "deployments/pools/local.yaml")
    assert (sim.name, sim.simulated) == ("template-fanout@local-simulated", True)
    real = Method(TemplatePlanner("single"), "deployments/pools/paper.yaml")
    assert (real.name, real.simulated) == ("template-single@paper", False)
    mixed = tmp_path / "mine.yaml"
    mixed.write_text("workers:\n  - {id: a, provider: openai, model: gpt-5}\n"
                     "  - {id: s, provider: simulated, model: s}\n")
    assert Method(TemplatePlanner("single"), mixed).name == "template-single@mine-simulated"
    assert Method(TemplatePlanner("single"), mixed, offer=("a",)).name == "template-single@mine"
    with pytest.raises(TypeError, match="not a Planner"):
        Method(object(), mixed)


def test_prompt_messages_are_plain_values():
    assert Message(role="user", content="x") == Message(role="user", content="x")
    assert Pool([WorkerSpec(id="c", provider="conductor")], {}).is_conductor(0)
    assert Prices(input=1, output=2).cost(1_000_000, 0) == 1.0


async def test_a_bug_outside_any_call_still_leaves_one_trace_per_question():
    class ReturnsNothing:
        name = "buggy"

        async def plan(self, messages, offered):
            return None  # not a Completion: plan_and_run itself fails on it

    tasks = [Task.adhoc(f"q{i}") for i in range(3)]
    traces = await solve_many(tasks, pool_of(ScriptedWorker(spec("a"))), ReturnsNothing(), verifier=None)
    assert [t.problem_id for t in traces] == [t.id for t in tasks]
    assert all(t.parse_status == "internal_error" and "AttributeError" in t.parse_error and t.reward == 0.0
               for t in traces)


def test_local_models_load_concurrently_in_one_process(tmp_path) -> None:
    """Two Conductor versions evaluated side by side load on their own worker threads at once:
    without one load at a time, transformers left weights on the meta device."""
    import threading

    from conductor.models.tiny import build_tiny_causal_lm
    from conductor.workers.local import LocalOptions, LocalWorker

    dirs = [build_tiny_causal_lm(tmp_path / f"m{i}", hidden_size=16, seed=i) for i in range(2)]
    workers = [LocalWorker(WorkerSpec(id=f"w{i}", provider="local", model=str(d)), LocalOptions())
               for i, d in enumerate(dirs * 3)]
    errors: list[BaseException] = []

    def load(w: LocalWorker) -> None:
        try:
            w._load()
        except BaseException as exc:  # noqa: BLE001 - the test reports what any thread raised
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(w,)) for w in workers]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    assert all(not p.is_meta for w in workers for p in w._model.parameters())
