"""A virtual clock for tests that check how long code chose to wait, without waiting."""

from __future__ import annotations

import asyncio


class VirtualTime:
    """Stands in for a module's `asyncio` and `time`: `asyncio.sleep(d)` records d, moves the
    virtual clock on by d and only yields; `time.monotonic()`/`perf_counter()` read that clock.
    A test then asserts how long the code chose to wait, with no wall-clock bound (or wait)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else is the real asyncio
        return getattr(asyncio, name)

    async def sleep(self, delay: float, result=None):  # noqa: ANN001, ANN201
        self.slept.append(delay)
        self.now += delay
        await asyncio.sleep(0)
        return result

    def monotonic(self) -> float:
        return self.now

    perf_counter = monotonic
