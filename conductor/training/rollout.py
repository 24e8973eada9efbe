"""The seam between training and the executor: one Conductor completion in, one scored Trace
out. When `conductor.executor.run_plan` lands, `rollout` becomes a one-line call to it."""

from __future__ import annotations

import random

from conductor.config import ExecutionConfig
from conductor.data.schema import Problem
from conductor.executor import Planner, plan_and_execute
from conductor.planners import ScriptedPlanner
from conductor.solve import score
from conductor.trace import Trace
from conductor.workers.base import Message
from conductor.workers.pool import Pool


async def rollout(
    text: str,
    problem: Problem,
    pool: Pool,
    config: ExecutionConfig,
    *,
    messages: list[Message],
    planner: Planner | None = None,
    run_id: str | None = None,
    rng: random.Random | None = None,
    depth: int = 0,
    parent_trace_id: str | None = None,
    allow_empty: bool = False,
) -> Trace:
    """Parse `text` as the Conductor's answer to `messages`, run it over `pool`, verify it.

    `planner` answers re-planning steps (a workflow step whose worker is the Conductor); its
    first answer must be `text` itself. Default: a planner that only ever answers `text`.
    """
    trace = await plan_and_execute(
        problem,
        pool,
        planner or ScriptedPlanner([text]),
        config=config,
        messages=messages,
        run_id=run_id,
        rng=rng,
        depth=depth,
        parent_trace_id=parent_trace_id,
        allow_empty=allow_empty,
    )
    return await score(trace, problem)
