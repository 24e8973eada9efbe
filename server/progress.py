"""Live progress of a request, without changing the executor: the pool's workers and the
planner are wrapped once, and each reports to the queue of the request it is working for.

The request's queue is held in a ContextVar: asyncio tasks copy their context when created, so
every step task the executor starts for a request sees that request's queue, and nothing else's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from conductor.planners import Planner
from conductor.types import Message, WorkerSpec
from conductor.workers.base import Completion, Worker, WorkerError
from conductor.workers.pool import Pool
from conductor.workflow import ParseError, parse

Event = dict[str, Any]
current_events: ContextVar[asyncio.Queue[Event] | None] = ContextVar("current_events", default=None)


def report(event: Event) -> None:
    queue = current_events.get()
    if queue is not None:
        queue.put_nowait(event)


class ReportingWorker:
    """A worker that reports each attempt's start and end (a retried call reports each try)."""

    def __init__(self, inner: Worker) -> None:
        self.inner = inner
        self.spec = inner.spec

    async def complete(self, messages: list[Message], *, max_tokens: int | None = None,
                       temperature: float | None = None) -> Completion:
        report({"event": "call_started", "worker": self.spec.id})
        t0 = time.perf_counter()
        try:
            done = await self.inner.complete(messages, max_tokens=max_tokens, temperature=temperature)
        except WorkerError as exc:
            report({"event": "call_failed", "worker": self.spec.id, "error": str(exc)[:300],
                    "retryable": exc.retryable})
            raise
        report({"event": "call_finished", "worker": self.spec.id, "latency_s": round(time.perf_counter() - t0, 4),
                "output_tokens": done.usage.output_tokens})
        return done

    async def aclose(self) -> None:
        await self.inner.aclose()


def reporting_pool(pool: Pool) -> Pool:
    """The same workers, each wrapped to report; slots come fresh from the specs (the original
    pool object is not used afterwards)."""
    workers = {s.id: ReportingWorker(pool.worker(s.id)) for s in pool.specs if not s.is_conductor}
    return Pool(pool.specs, workers)  # type: ignore[arg-type]


class ReportingPlanner:
    """A planner that reports the workflow it wrote (parsed over the offered pool)."""

    def __init__(self, inner: Planner) -> None:
        self.inner = inner
        self.name = inner.name

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        done = await self.inner.plan(messages, offered)
        if current_events.get() is None:
            return done  # nobody is streaming this request: skip the parse
        parsed = parse(done.text, [s.id for s in offered], allow_empty=True)
        if isinstance(parsed, ParseError):
            report({"event": "workflow", "parse_error": str(parsed)[:300]})
        else:
            report({"event": "workflow", "steps": [
                {"index": s.index, "worker": offered[s.worker].id, "subtask": s.subtask, "reads": list(s.reads)}
                for s in parsed.steps]})
        return done

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
