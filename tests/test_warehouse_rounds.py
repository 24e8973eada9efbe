"""v_rounds (warehouse/schema/m014_rounds.sql): outcomes per recursion depth, from real executor
traces written to a real DuckDB file: a later round that re-plans, one that keeps the answer, and
one refused for running more steps than the round it reads."""

from __future__ import annotations

import pytest

from conductor.data.schema import Problem
from conductor.executor import RunOptions, execute
from conductor.planners import ScriptedPlanner
from conductor.types import Task
from conductor.verify.verdict import Verdict
from conductor.workflow import Workflow, render
from tests.scripted import ScriptedWorker, pool_of, spec
from warehouse import TraceStore

TASK = Task.of(Problem(id="p1", source="test", domain="freeform", question="What is 6 times 7?", answer="42"))


def wf(ids, subtasks, access) -> Workflow:  # noqa: ANN001
    return Workflow(model_id=tuple(ids), subtasks=tuple(subtasks), access_list=tuple(access))


@pytest.fixture
def rounds(tmp_path):
    a = ScriptedWorker(spec("a"), reply=lambda m: "a answered", cost=0.01)
    b = ScriptedWorker(spec("b"), reply=lambda m: "b answered", cost=0.02)
    pool = pool_of(a, b, conductor=True)
    first = wf([0, 2], ["try", "review"], [(), (0,)])  # the Conductor step reads one step: one allowed
    replies = [render(wf([1], ["check it"], [("prev",)])),            # re-plans: one check by b
               "model_id = []\nsubtasks = []\naccess_list = []",      # keeps a's answer
               render(wf([1, 1], ["x", "y"], [(), ("prev", 0)]))]     # two steps: refused
    traces = []

    async def run_all():
        for i, reply in enumerate(replies):
            trace = await execute(first, TASK, pool, RunOptions(run_id="run-r"), planner=ScriptedPlanner([reply]))
            trace.verdict = Verdict(correct=i != 1)  # the question's final answer, graded
            traces.append(trace)

    import asyncio
    asyncio.run(run_all())
    with TraceStore(tmp_path / "w.duckdb") as store:
        store.write_traces(traces)
        yield {r["depth"]: r for r in store.query("SELECT * FROM v_rounds WHERE run_id = 'run-r'").to_pylist()}


def test_v_rounds_counts_what_each_depth_did_and_spent(rounds) -> None:
    top, later = rounds[0], rounds[1]
    assert (top["rounds"], top["planned"], top["kept"], top["unparsed"]) == (3, 3, 0, 0)
    assert top["worker_calls"] == 3 and top["cost_usd"] == pytest.approx(0.03)  # a, three times
    assert top["graded"] == 3 and top["accuracy"] == pytest.approx(2 / 3)
    # depth 1: one re-plan (b checks, $0.02), one kept answer, one refused (2 steps > 1 read)
    assert (later["rounds"], later["planned"], later["kept"], later["unparsed"]) == (3, 1, 1, 1)
    assert later["mean_steps"] == pytest.approx(0.5)  # 1 and 0 over the two that parsed
    assert later["worker_calls"] == 1 and later["cost_usd"] == pytest.approx(0.02)
    assert later["graded"] == 1 and later["accuracy"] == 0.0  # only the unparsed round has a verdict: wrong
