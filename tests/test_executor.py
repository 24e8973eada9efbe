"""The executor: what each worker sees, DAG scheduling, budgets, retries, timeouts, recursion."""

from __future__ import annotations

import asyncio
import random

import pytest

from conductor.config import ExecutionConfig
from conductor.data.schema import Problem
from conductor.executor import RunOptions, execute, plan_and_run, run_plan
from conductor.planners import ScriptedPlanner
from conductor.prompts import PriorStep, conductor_messages, step_message
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.base import WorkerError
from conductor.workers.calling import CallPolicy
from conductor.workflow import ALL, Workflow, render
from tests.scripted import ScriptedWorker, pool_of, rate_limited, spec

PROBLEM = Problem(id="p1", source="test", domain="freeform", question="What is 6 times 7?", answer="42")
TASK = Task.of(PROBLEM)
FAST = dict(backoff_base_s=0.0, backoff_max_s=0.0)


def wf(ids, subtasks, access) -> Workflow:
    return Workflow(model_id=tuple(ids), subtasks=tuple(subtasks), access_list=tuple(access))


def echo(name: str):
    return lambda messages: f"{name} answered"


async def test_each_worker_sees_task_the_steps_it_reads_and_its_instruction():
    a = ScriptedWorker(spec("a"), reply=echo("a"))
    b = ScriptedWorker(spec("b"), reply=echo("b"))
    c = ScriptedWorker(spec("c"), reply=echo("c"))
    workflow = wf([0, 1, 2], ["solve", "estimate", "check step 0"], [(), (), (0,)])
    trace = await execute(workflow, TASK, pool_of(a, b, c))
    assert a.seen[0].messages == step_message(PROBLEM.question, [], "solve")
    assert b.seen[0].messages == step_message(PROBLEM.question, [], "estimate")
    expected = step_message(PROBLEM.question, [PriorStep(0, "a", "solve", "a answered")], "check step 0")
    assert c.seen[0].messages == expected
    assert len(expected) == 1 and "estimate" not in expected[0].content  # step 1 not shared
    assert trace.answer == "c answered"
    assert [s.status for s in trace.steps] == ["ok", "ok", "ok"]


async def test_all_access_shares_every_earlier_step_in_order():
    ws = [ScriptedWorker(spec(n), reply=echo(n)) for n in "abc"]
    await execute(wf([0, 1, 2], ["x", "y", "z"], [(), (), ALL]), TASK, pool_of(*ws))
    content = ws[2].seen[0].messages[0].content
    assert content.index("a answered") < content.index("b answered") < content.index("# Your instruction\nz")


async def test_independent_steps_run_concurrently():
    barrier = asyncio.Barrier(3)  # deadlocks unless all three attempts are in flight together
    ws = [ScriptedWorker(spec(n), barrier=barrier) for n in "abc"]
    agg = ScriptedWorker(spec("agg"))
    workflow = wf([0, 1, 2, 3], ["1", "2", "3", "merge"], [(), (), (), ALL])
    trace = await asyncio.wait_for(execute(workflow, TASK, pool_of(*ws, agg)), timeout=5)
    first_finish = min(s.finished_at_s for s in trace.steps[:3])
    assert all(s.started_at_s <= first_finish for s in trace.steps[:3])
    assert trace.steps[3].started_at_s >= max(s.finished_at_s for s in trace.steps[:3])


async def test_chain_waits_for_what_it_reads():
    ws = [ScriptedWorker(spec(n), delay_s=0.01) for n in "ab"]
    trace = await execute(wf([0, 1], ["x", "y"], [(), (0,)]), TASK, pool_of(*ws))
    assert trace.steps[1].started_at_s >= trace.steps[0].finished_at_s


async def test_worker_concurrency_limit_is_respected():
    w = ScriptedWorker(spec("a", concurrency=1), delay_s=0.01)
    await execute(wf([0, 0, 0], ["1", "2", "3"], [(), (), ()]), TASK, pool_of(w))
    assert len(w.seen) == 3 and w.max_active == 1


async def test_retryable_errors_are_retried_and_counted():
    w = ScriptedWorker(spec("a"), failures=[rate_limited(), WorkerError("503", retryable=True, status=503)])
    trace = await execute(wf([0], ["x"], [()]), TASK, pool_of(w), options=RunOptions(config=ExecutionConfig(**FAST)))
    assert trace.steps[0].status == "ok" and trace.steps[0].call.usage.retries == 2
    assert len(w.seen) == 3


async def test_retries_are_bounded():
    w = ScriptedWorker(spec("a"), failures=[rate_limited() for _ in range(5)])
    cfg = ExecutionConfig(max_retries=2, **FAST)
    trace = await execute(wf([0], ["x"], [()]), TASK, pool_of(w), options=RunOptions(config=cfg))
    step = trace.steps[0]
    assert step.status == "error" and "after 2 retries" in step.error
    assert len(w.seen) == 3 and trace.answer is None and "final step error" in trace.stop_reason


async def test_non_retryable_errors_fail_at_once():
    w = ScriptedWorker(spec("a"), failures=[WorkerError("401 bad key for a", retryable=False, status=401)])
    trace = await execute(wf([0], ["x"], [()]), TASK, pool_of(w), options=RunOptions(config=ExecutionConfig(**FAST)))
    assert len(w.seen) == 1 and trace.steps[0].call.usage.retries == 0
    assert "401" in trace.steps[0].error


async def test_timeouts_are_retried_then_fail():
    w = ScriptedWorker(spec("a"), delay_s=10)
    cfg = ExecutionConfig(timeout_s=0.05, max_retries=1, **FAST)
    trace = await execute(wf([0], ["x"], [()]), TASK, pool_of(w), options=RunOptions(config=cfg))
    assert len(w.seen) == 2
    assert trace.steps[0].status == "error" and "timed out after 0.05s" in trace.steps[0].error


def test_backoff_honours_retry_after_and_caps():
    policy = CallPolicy(backoff_base_s=0.1, backoff_max_s=5.0)
    rng = random.Random(0)
    assert all(policy.backoff(a, None, rng) <= min(5.0, 0.1 * 2**a) for a in range(10))
    assert policy.backoff(0, 3.0, rng) >= 3.0
    assert policy.backoff(0, 60.0, rng) == 5.0  # a server asking for a minute is capped


async def test_output_token_budget_is_passed_to_workers():
    w = ScriptedWorker(spec("a", max_tokens=2000, temperature=0.2))
    cfg = ExecutionConfig(max_output_tokens=256)
    await execute(wf([0], ["x"], [()]), TASK, pool_of(w), options=RunOptions(config=cfg))
    assert w.seen[0].max_tokens == 256 and w.seen[0].temperature == 0.2


async def test_dollar_budget_stops_new_calls():
    ws = [ScriptedWorker(spec(n), cost=0.01) for n in "abc"]
    cfg = ExecutionConfig(max_usd_per_question=0.015)
    trace = await execute(wf([0, 1, 2], ["x", "y", "z"], [(), (0,), (1,)]), TASK, pool_of(*ws), options=RunOptions(config=cfg))
    assert [s.status for s in trace.steps] == ["ok", "ok", "budget_exhausted"]
    assert len(ws[2].seen) == 0
    assert "dollar budget" in trace.stop_reason and trace.answer is None
    assert trace.usage.cost_usd == pytest.approx(0.02)


async def test_step_budget_is_enforced_for_code_built_workflows():
    w = ScriptedWorker(spec("a"))
    trace = await execute(wf([0] * 4, "abcd", [()] * 4), TASK, pool_of(w), options=RunOptions(config=ExecutionConfig(max_steps=3)))
    assert trace.parse_status == "too_many_steps" and not w.seen and trace.steps == []


async def test_failed_step_continue_policy_shows_the_failure_downstream():
    bad = ScriptedWorker(spec("bad"), failures=[WorkerError("400 bad request", retryable=False, status=400)])
    good = ScriptedWorker(spec("good"), reply=echo("good"))
    trace = await execute(wf([0, 1], ["x", "y"], [(), (0,)]), TASK, pool_of(bad, good))
    assert [s.status for s in trace.steps] == ["error", "ok"]
    assert "[step 0 produced no response: bad: 400 bad request]" in good.seen[0].messages[0].content
    assert trace.answer == "good answered"


async def test_failed_step_stop_policy_skips_the_rest():
    bad = ScriptedWorker(spec("bad"), failures=[WorkerError("400", retryable=False)])
    later = ScriptedWorker(spec("later"), delay_s=0.05)
    cfg = ExecutionConfig(on_step_failure="stop")
    trace = await execute(wf([0, 1, 1], ["x", "y", "z"], [(), (0,), (1,)]), TASK, pool_of(bad, later), options=RunOptions(config=cfg))
    assert [s.status for s in trace.steps] == ["error", "skipped", "skipped"]
    assert not later.seen and trace.answer is None and trace.stop_reason.startswith("step 0 error")


def _recursive_pool():
    a = ScriptedWorker(spec("a"), reply=echo("a"))
    b = ScriptedWorker(spec("b"), reply=echo("b"))
    return a, b, pool_of(a, b, conductor=True)


async def test_recursion_replans_and_the_child_answer_is_the_step_output():
    a, b, pool = _recursive_pool()
    replan = render(wf([1], ["redo it carefully"], [()]))
    planner = ScriptedPlanner([replan])
    trace = await execute(wf([0, 2], ["try", "review"], [(), (0,)]), TASK, pool, RunOptions(run_id="r"),
                          planner=planner)
    step = trace.steps[1]
    assert step.status == "ok" and step.output == "b answered" and trace.answer == "b answered"
    child = step.child
    assert child.parent_trace_id == trace.trace_id and child.depth == 1
    assert trace.run_id == child.run_id == "r"  # the options reach every round of the question
    prompt = planner.prompts[0][-1].content
    assert "# Earlier workflow\nStep 0: Model 0, attempt: a answered\n" in prompt
    assert [t.depth for t in trace.rounds()] == [0, 1]
    assert trace.calls == 3  # a, the re-plan, b


async def test_empty_replan_keeps_the_previous_answer():
    a, b, pool = _recursive_pool()
    planner = ScriptedPlanner(["model_id = []\nsubtasks = []\naccess_list = []"])
    trace = await execute(wf([0, 2], ["try", "review"], [(), (0,)]), TASK, pool, planner=planner)
    assert trace.answer == "a answered" and not b.seen
    assert trace.steps[1].child.workflow.is_empty


async def test_recursion_depth_is_limited():
    a, b, pool = _recursive_pool()
    # the re-plan asks for the Conductor again: at depth 1 with a limit of 1 that step fails
    # (the Conductor step reads two steps, so its re-plan may run two: a later round runs no more
    # steps than the round it reads)
    first = wf([0, 0, 2], ["try", "try again", "review"], [(), (), (0, 1)])
    planner = ScriptedPlanner([render(wf([0, 2], ["again", "review again"], [(), (0,)]))])
    trace = await execute(first, TASK, pool, planner=planner)
    inner = trace.steps[2].child.steps[1]
    assert inner.status == "error" and "recursion depth limit (1)" in inner.error
    assert len(planner.prompts) == 1
    deeper = ScriptedPlanner([render(wf([0, 2], ["again", "review again"], [(), (0,)])), "model_id=[]\nsubtasks=[]\naccess_list=[]"])
    trace = await execute(
        first, TASK, pool, planner=deeper,
        options=RunOptions(config=ExecutionConfig(max_recursion_depth=2)),
    )
    assert len(deeper.prompts) == 2 and trace.answer == "a answered"
    assert [t.depth for t in trace.rounds()] == [0, 1, 2]


async def test_recursion_without_a_planner_is_a_failed_step():
    a, b, pool = _recursive_pool()
    trace = await execute(wf([0, 2], ["try", "review"], [(), (0,)]), TASK, pool)
    assert trace.steps[1].status == "error" and "recursion" in trace.steps[1].error


async def test_unparseable_replan_is_recorded():
    a, b, pool = _recursive_pool()
    trace = await execute(wf([0, 2], ["try", "r"], [(), (0,)]), TASK, pool, planner=ScriptedPlanner(["no idea"]))
    assert trace.steps[1].status == "error" and "unparseable" in trace.steps[1].error
    assert trace.steps[1].child.parse_status == "missing_list"


async def test_plan_and_run_records_parse_errors_as_values():
    w = ScriptedWorker(spec("a"))
    pool = pool_of(w)
    msgs = conductor_messages(PROBLEM.question, pool.specs)
    trace = await plan_and_run(TASK, pool, ScriptedPlanner(["model_id = [5]\nsubtasks=['x']\naccess_list=[[]]"]), messages=msgs)
    assert trace.parse_status == "unknown_worker" and trace.workflow is None and not w.seen
    assert trace.conductor_output.startswith("model_id") and trace.conductor_prompt == msgs


async def test_planner_exception_is_recorded_not_raised():
    class Broken:
        async def plan(self, messages, offered):
            raise RuntimeError("CUDA out of memory")

    pool = pool_of(ScriptedWorker(spec("a")))
    trace = await plan_and_run(TASK, pool, Broken(), messages=conductor_messages("q", pool.specs))
    assert trace.parse_status == "planner_error" and "CUDA out of memory" in trace.parse_error


async def test_trace_round_trips_through_json():
    a, b, pool = _recursive_pool()
    planner = ScriptedPlanner([render(wf([1], ["redo"], [()]))])
    trace = await execute(wf([0, 2], ["try", "review"], [(), ALL]), TASK, pool, planner=planner)
    again = Trace.model_validate_json(trace.model_dump_json())
    assert again == trace
    assert again.workflow.access_list == ((), ALL)


async def test_unknown_price_marks_totals_not_free():
    w = ScriptedWorker(spec("a"), cost=None)
    trace = await execute(wf([0], ["x"], [()]), TASK, pool_of(w))
    assert trace.steps[0].call.usage.cost_usd is None and trace.usage.cost_usd is None


async def test_one_by_one_mode_runs_steps_in_order():
    ws = [ScriptedWorker(spec(n), delay_s=0.01) for n in "abc"]
    trace = await execute(wf([0, 1, 2], "xyz", [(), (), ()]), TASK, pool_of(*ws), options=RunOptions(config=ExecutionConfig(parallel=False)))
    for earlier, later in zip(trace.steps, trace.steps[1:]):
        assert later.started_at_s >= earlier.finished_at_s


async def test_leaving_a_pool_closes_its_workers():
    ws = [ScriptedWorker(spec(n)) for n in "ab"]
    async with pool_of(*ws) as pool:
        await execute(wf([0, 1], "xy", [(), (0,)]), TASK, pool)
        assert not any(w.closed for w in ws)
    assert all(w.closed for w in ws)


async def test_a_second_round_step_reading_prev_sees_the_first_rounds_full_responses():
    a, b, pool = _recursive_pool()
    # round 2: a fresh attempt by a (reads nothing), then b compares it with the whole first round
    replan = render(wf([0, 1], ["one more", "compare all"], [(), ("prev", 0)]))
    planner = ScriptedPlanner([replan])
    # (round 1 runs two steps before the re-plan, so round 2 may run two)
    trace = await execute(wf([0, 0, 2], ["try", "try again", "rethink"], [(), (), (0, 1)]), TASK, pool, planner=planner)
    child = trace.steps[2].child
    assert child.parse_status == "ok" and child.workflow.steps[1].reads_prior
    fresh, compare = a.seen[2].messages[-1].content, b.seen[0].messages[-1].content
    assert "# Earlier steps" not in fresh  # the new attempt reads nothing
    # b reads round 1's step 0 (its whole response, marked as the earlier round's) and round 2's step 0
    assert "## Step 0: instruction\n(earlier round) try\n## Step 0: response\na answered" in compare
    assert compare.index("(earlier round) try") < compare.index("## Step 0: instruction\none more")
    assert trace.answer == "b answered" and trace.calls == 5  # a, a, the re-plan, a, b


async def test_prev_in_a_first_round_is_a_parse_error_and_calls_nobody():
    a, b, pool = _recursive_pool()
    text = render(wf([0], ["x"], [("prev",)]))
    trace = await run_plan(text, TASK, pool)
    assert trace.parse_status == "invalid_access" and "first round" in trace.parse_error and not a.seen
    # a re-plan whose Conductor step read nothing has no earlier round either
    planner = ScriptedPlanner([text])
    trace = await execute(wf([2], ["plan again"], [()]), TASK, pool, planner=planner)
    assert trace.steps[0].child.parse_status == "invalid_access" and not a.seen


async def test_every_round_charges_the_questions_one_budget():
    a = ScriptedWorker(spec("a"), reply=echo("a"), cost=0.01)
    b = ScriptedWorker(spec("b"), reply=echo("b"), cost=0.01)
    pool = pool_of(a, b, conductor=True)
    # round 1 spends 0.03 (a three times); round 2 (three steps, as many as it reads) asks for three:
    # the third finds 0.05 of 0.045 spent (its own budget would allow it)
    replan = render(wf([1, 1, 0], ["x", "y", "z"], [("prev",), (0,), (1,)]))
    cfg = ExecutionConfig(max_usd_per_question=0.045)
    first = wf([0, 0, 0, 2], ["try", "try", "try", "again"], [(), (), (), (0, 1, 2)])
    trace = await execute(first, TASK, pool, RunOptions(config=cfg), planner=ScriptedPlanner([replan]))
    child = trace.steps[3].child
    assert [s.status for s in child.steps] == ["ok", "ok", "budget_exhausted"]
    assert len(b.seen) == 2 and len(a.seen) == 3
