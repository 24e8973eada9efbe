"""The Conductor's own generation cost, counted in its Method's cost.

Two ways to price it (docs/evaluation.md, "Costs"):
- an endpoint's token price: `Prices` given to the model planner (`ModelPlanner(prices=...)`);
- a self-hosted model's $/GPU-hour: generation wall time x rate. `GpuHourPlanner` wraps a
  planner, lets one generation run at a time (a local model generates one at a time anyway, so
  nothing is lost) and times it inside that turn, so waiting for the GPU is not billed twice;
  the Completion's `cost_usd` is then `seconds x usd_per_gpu_hour / 3600`.
The executor records the planner's Completion as the trace's `conductor` call, so the cost lands
in `calls` (role `conductor`) and in every figure computed from them."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Sequence

from conductor.types import Message, WorkerSpec
from conductor.workers.base import Completion


class GpuHourPlanner:
    """A planner whose every plan costs its generation time at `usd_per_gpu_hour`."""

    def __init__(self, inner: object, usd_per_gpu_hour: float) -> None:
        if usd_per_gpu_hour < 0:
            raise ValueError(f"usd_per_gpu_hour must be >= 0, got {usd_per_gpu_hour}")
        self.inner = inner
        self.usd_per_gpu_hour = float(usd_per_gpu_hour)
        self.name = getattr(inner, "name", type(inner).__name__)
        # one lock per event loop (an asyncio.Lock is bound to the loop it first waits in)
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def cost_of(self, seconds: float) -> float:
        return seconds * self.usd_per_gpu_hour / 3600.0

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        lock = self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with lock:
            t0 = time.perf_counter()
            completion = await self.inner.plan(messages, offered)  # type: ignore[attr-defined]
            seconds = time.perf_counter() - t0
        completion.usage.latency_s = seconds
        completion.usage.cost_usd = self.cost_of(seconds)
        return completion

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
