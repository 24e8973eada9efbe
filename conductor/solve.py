"""Solve tasks end to end: the planner writes a workflow, the executor runs it, the verifier
grades the answer, and the trace gets its reward."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence

from pydantic import BaseModel

from conductor.data.schema import Problem
from conductor.executor import RunOptions, plan_and_run
from conductor.planners import Planner
from conductor.reward import reward_of
from conductor.trace import Trace
from conductor.types import Task
from conductor.verify import Verdict, averify
from conductor.workers.pool import Pool

Verifier = Callable[[Problem, str | None], Verdict | Awaitable[Verdict]]


async def score(trace: Trace, task: Task, verifier: Verifier | None = averify) -> Trace:
    """Set the verdict (when a workflow ran and the task has a Problem to grade against) and
    the reward. A verifier that crashes gives a recorded wrong verdict, never an exception."""
    if trace.workflow is not None and task.reference is not None and verifier is not None:
        try:
            verdict = verifier(task.reference, trace.answer)
            trace.verdict = await verdict if inspect.isawaitable(verdict) else verdict
        except Exception as exc:  # noqa: BLE001 - one question's failure, recorded on it
            trace.verdict = Verdict(correct=False, reason=f"verifier failed: {type(exc).__name__}: {exc}",
                                    method="error")
    trace.reward = reward_of(trace)
    return trace


async def solve(
    task: Task,
    pool: Pool,
    planner: Planner,
    options: RunOptions | None = None,
    *,
    verifier: Verifier | None = averify,
) -> Trace:
    """One question: `plan_and_run`, then `score`."""
    trace = await plan_and_run(task, pool, planner, options)
    return await score(trace, task, verifier)


def failed_trace(task: Task, pool: Pool, run_id: str | None, exc: BaseException) -> Trace:
    """The record of a question whose solving crashed outside any one call (a bug): kept, so a
    run never loses the question, with reward 0."""
    return Trace.for_task(task, pool.ids, run_id=run_id, parse_status="internal_error",
                          parse_error=f"{type(exc).__name__}: {exc}", reward=0.0)


async def solve_many(
    tasks: Sequence[Task],
    pool: Pool,
    planner: Planner,
    options: RunOptions | None = None,
    *,
    verifier: Verifier | None = averify,
    on_done: Callable[[Trace], None] | None = None,
    seed: int = 0,
) -> list[Trace]:
    """Solve many tasks concurrently (at most `options.config.questions_in_flight` at once,
    counting a question's calls, not its grading; each worker's own limit still applies). Traces
    come back in the order of `tasks`, one per task: a failure is recorded on its question and
    never ends the run. Question `i` draws from its own Random, seeded from `seed` and `i`
    (`options.rng` is not shared between questions)."""
    options = options or RunOptions()
    run_id = options.run_id
    gate = asyncio.Semaphore(options.config.questions_in_flight)

    async def one(i: int, task: Task) -> Trace:
        # The slot covers the question's calls only: its grading (math-verify, a code run in the
        # sandbox) happens after the next question has started, not on the question's clock.
        async with gate:
            try:
                trace = await plan_and_run(task, pool, planner, options.seeded(seed * 1_000_003 + i))
            except Exception as exc:  # noqa: BLE001 - see failed_trace
                trace = failed_trace(task, pool, run_id, exc)
                if on_done is not None:
                    on_done(trace)
                return trace
        try:
            trace = await score(trace, task, verifier)
        except Exception as exc:  # noqa: BLE001 - see failed_trace
            trace = failed_trace(task, pool, run_id, exc)
        if on_done is not None:
            on_done(trace)
        return trace

    return list(await asyncio.gather(*(one(i, t) for i, t in enumerate(tasks))))


class GroupSummary(BaseModel):
    """How a set of traces did, for a command that has no warehouse (`conductor solve`): one
    row per benchmark (source), from each trace's own usage. Runs recorded in the warehouse are
    summarised by its views instead."""

    group: str
    n: int
    correct: int
    mean_reward: float
    parsed: int
    calls: int
    tokens: int
    cost_usd: float | None
    wall_s: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0


def summarize(traces: Sequence[Trace]) -> list[GroupSummary]:
    """One row per source; the last row, `all`, covers every trace."""
    by: dict[str, list[Trace]] = {}
    for trace in traces:
        by.setdefault(trace.source, []).append(trace)
    if len(by) > 1 or not by:
        by["all"] = list(traces)
    rows = []
    for name, ts in by.items():
        costs = [t.usage.cost_usd for t in ts]
        rows.append(GroupSummary(
            group=name, n=len(ts), correct=sum(bool(t.verdict and t.verdict.correct) for t in ts),
            mean_reward=sum(t.reward or 0.0 for t in ts) / len(ts) if ts else 0.0,
            parsed=sum(t.parse_status == "ok" for t in ts), calls=sum(t.calls for t in ts),
            tokens=sum(t.usage.tokens for t in ts),
            cost_usd=None if None in costs else sum(c for c in costs if c is not None),
            wall_s=sum(t.wall_s for t in ts),
        ))
    return rows
