"""The seam between training and the executor: one Conductor completion in, one scored Trace
out (`run_plan`, then the verifier and the 0 / 0.5 / 1 reward)."""

from __future__ import annotations

from conductor.data.schema import Problem
from conductor.executor import Round, RunOptions, run_plan
from conductor.planners import Planner
from conductor.prompts import PriorStep
from conductor.solve import score
from conductor.trace import Trace
from conductor.types import Message, Task
from conductor.workers.pool import Pool


async def rollout(
    text: str,
    problem: Problem,
    pool: Pool,
    options: RunOptions,
    *,
    messages: list[Message],
    planner: Planner | None = None,
    within: Round | None = None,
) -> Trace:
    """Parse `text` as the Conductor's answer to `messages`, run it over `pool`, verify it.

    `planner` answers re-planning steps (a workflow step whose worker is the Conductor itself);
    `within` places a second round under the first (its depth and parent trace)."""
    task = Task.of(problem)
    trace = await run_plan(text, task, pool, options, planner=planner, messages=messages, within=within)
    return await score(trace, task)


def prior_steps(first: Trace) -> list[PriorStep]:
    """A round's steps as the next round sees them (its prompt, and its steps reading "prev")."""
    steps = first.workflow.steps if first.workflow is not None else ()
    return [
        PriorStep(index=s.index, worker=s.worker_id, subtask=s.subtask, response=s.output or f"[{s.status}: {s.error}]",
                  reads=tuple(s.reads), reads_prior=steps[s.index].reads_prior if s.index < len(steps) else False)
        for s in first.steps
    ]
