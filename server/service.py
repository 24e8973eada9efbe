"""What a request does once admitted: ask the planner for a workflow over the pool, run it,
and record the trace (staged for the warehouse, counted in the metrics)."""

from __future__ import annotations

import asyncio
import logging
from contextvars import copy_context
from dataclasses import dataclass

from conductor.config import ExecutionConfig
from conductor.effort import Effort
from conductor.executor import RunOptions, plan_and_run
from conductor.planners import Planner
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.pool import Pool, PoolError
from server.config import ServeConfig
from server.catalog import Catalog
from server.guards import Limits
from server.metrics import Metrics
from server.progress import Event, watch
from server.recording import TraceStager
from server.schemas import ApiError
from warehouse.records import Run

log = logging.getLogger("conductor.serve")


@dataclass(frozen=True)
class Job:
    """One admitted request, as the service runs it."""

    question: str
    max_usd: float | None
    key_id: str
    planner: Planner
    # the request's pool (`Service.pool_without`); None: the server's
    pool: Pool | None = None
    # the level the request asked for, stated in the Conductor's prompt (None: none stated)
    effort: Effort | None = None


class Service:
    def __init__(self, config: ServeConfig, pool: Pool, catalog: Catalog, run: Run) -> None:
        self.config, self.run = config, run
        self.pool, self.catalog = pool, catalog
        self.metrics = Metrics()
        self.limits = Limits(config.requests_per_minute, config.burst, config.concurrency_per_key)
        self.stager = TraceStager(config.staging_dir, config.flush_interval_s)
        self.in_flight: set[asyncio.Task[Trace]] = set()
        self._executions: dict[float | None, ExecutionConfig] = {}

    def execution_for(self, max_usd: float | None) -> ExecutionConfig:
        """The execution settings with the request's budget: the lowest of its `max_usd`, the
        server's cap and the settings' own. One copy per distinct budget, made once (the executor
        only reads it), not one per request."""
        caps = [c for c in (max_usd, self.config.max_usd_cap, self.config.execution.max_usd_per_question)
                if c is not None]
        cap = min(caps) if caps else None
        found = self._executions.get(cap)
        if found is None:
            if len(self._executions) > 1024:  # clients choosing ever new budgets: start over
                self._executions.clear()
            found = self._executions[cap] = self.config.execution.model_copy(update={"max_usd_per_question": cap})
        return found

    def pool_without(self, exclude: list[str]) -> Pool:
        """The pool less the workers a request opts out of (the same workers, slots and breakers);
        an unknown id is a 400."""
        if not exclude:
            return self.pool
        try:
            return self.pool.without(exclude)
        except PoolError as exc:
            raise ApiError(400, f"invalid request: conductor.{exc}", param="conductor.exclude") from None

    async def _solve(self, job: Job) -> Trace:
        task = Task.adhoc(job.question, source="serve")
        pool = job.pool if job.pool is not None else self.pool
        try:
            async with asyncio.timeout(self.config.request_timeout_s):
                options = RunOptions(config=self.execution_for(job.max_usd), run_id=self.run.run_id, effort=job.effort)
                return await plan_and_run(task, pool, job.planner, options)
        except TimeoutError:
            # The calls made so far are lost with the cancelled run; the request itself is kept.
            return Trace.for_task(task, pool.ids, run_id=self.run.run_id,
                                  stop_reason=f"request timed out after {self.config.request_timeout_s:g}s",
                                  wall_s=self.config.request_timeout_s)

    def start(self, job: Job, events: asyncio.Queue[Event] | None = None) -> asyncio.Task[Trace]:
        """Start solving in its own task, which records the trace and frees the key's slot when it
        ends, whether or not the client is still there to read the answer."""
        ctx = copy_context()
        ctx.run(watch, events)
        task = asyncio.get_running_loop().create_task(self._solve(job), context=ctx)
        self.in_flight.add(task)
        task.add_done_callback(lambda t: self._finished(t, job.key_id))
        return task

    def _finished(self, task: asyncio.Task[Trace], key_id: str) -> None:
        self.in_flight.discard(task)
        self.limits.release(key_id)
        if task.cancelled():
            return
        if (exc := task.exception()) is not None:
            log.error("request failed: %s: %s", type(exc).__name__, exc)
            return
        trace = task.result()
        self.stager.add(trace)
        self.metrics.observe_trace(trace)

    async def drain(self) -> None:
        """Let requests in flight finish (their traces are recorded), then stage what is left."""
        if self.in_flight:
            await asyncio.wait(list(self.in_flight), timeout=self.config.request_timeout_s)
        await self.stager.stop()

