"""Solving as a Prefect task: a thin wrapper over `conductor.solve.solve_many`."""

from __future__ import annotations

import asyncio

from prefect import task
from prefect.cache_policies import NO_CACHE

from conductor.data.schema import Problem
from conductor.methods import Method
from conductor.solve import solve_many
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.registry import BuildContext


async def _solve(problems: list[Problem], method: Method, run_id: str, seed: int) -> list[Trace]:
    async with method.open_pool(BuildContext(problems=problems)) as pool:
        return await solve_many([Task.of(p) for p in problems], pool, method.planner, config=method.execution,
                                run_id=run_id, seed=seed)


# No task retries: every worker call already retries, and a rerun of the whole task would pay
# for every call again. NO_CACHE: a solve is an experiment, not a pure function of its inputs.
@task(name="solve-problems", cache_policy=NO_CACHE, task_run_name="solve-{run_id}")
def solve_problems(problems: list[Problem], method: Method, run_id: str, seed: int = 0) -> list[Trace]:
    return asyncio.run(_solve(problems, method, run_id, seed))
