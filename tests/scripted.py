"""A Worker whose behaviour a test scripts: replies, failures, delays; it records every call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from conductor.types import Message, Prices, Usage, WorkerSpec

from conductor.workers.base import Completion, WorkerError
from conductor.workers.pool import Pool


@dataclass
class Seen:
    messages: list[Message]
    max_tokens: int | None
    temperature: float | None


@dataclass
class ScriptedWorker:
    spec: WorkerSpec
    reply: Callable[[list[Message]], str] = lambda m: "ok"
    delay_s: float = 0.0
    failures: list[Exception] = field(default_factory=list)  # raised in order, then replies
    cost: float | None = 0.001
    barrier: asyncio.Barrier | None = None
    seen: list[Seen] = field(default_factory=list)
    active: int = 0
    max_active: int = 0
    closed: bool = False

    async def complete(self, messages, *, max_tokens=None, temperature=None) -> Completion:
        self.seen.append(Seen(messages, max_tokens, temperature))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.barrier is not None:
                await self.barrier.wait()
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            if self.failures:
                raise self.failures.pop(0)
            return Completion(text=self.reply(messages), usage=Usage(input_tokens=10, output_tokens=5, cost_usd=self.cost))
        finally:
            self.active -= 1

    async def aclose(self) -> None:
        self.closed = True


def spec(worker_id: str, **kw) -> WorkerSpec:
    kw.setdefault("prices", Prices(input=1.0, output=1.0))
    return WorkerSpec(id=worker_id, provider="scripted", model=worker_id, **kw)


def pool_of(*workers: ScriptedWorker, conductor: bool = False) -> Pool:
    specs = [w.spec for w in workers]
    if conductor:
        specs.append(WorkerSpec(id="conductor", provider="conductor"))
    return Pool(specs, {w.spec.id: w for w in workers})


def rate_limited(retry_after: float | None = 0.0) -> WorkerError:
    return WorkerError("429 too many requests", retryable=True, status=429, retry_after=retry_after)
