"""Calling a worker: per-attempt timeout, bounded retries with exponential backoff and jitter
(honouring a server's Retry-After), the pool's concurrency slot and the worker's circuit breaker
(conductor/workers/breaker.py). The one retry loop of the project: adapters turn SDK failures
into WorkerError and never retry themselves."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from conductor.types import Message

from conductor.workers.base import Completion, Worker, WorkerError
from conductor.workers.breaker import Breaker, BreakerPolicy


@dataclass(frozen=True)
class CallPolicy:
    timeout_s: float | None = None  # None: the worker's own timeout_s
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    breaker: BreakerPolicy = BreakerPolicy()

    def backoff(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Full jitter on an exponential schedule; a server's Retry-After is a floor."""
        delay = rng.uniform(0, min(self.backoff_max_s, self.backoff_base_s * 2**attempt))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.backoff_max_s))
        return delay


class CallFailed(Exception):
    """A call that failed for good: after its retries, or at once for a non-retryable error."""

    def __init__(self, message: str, *, retries: int, latency_s: float, status: int | None = None,
                 outage: bool = False) -> None:
        super().__init__(message)
        self.retries = retries
        self.latency_s = latency_s
        self.status = status
        # An outage: the worker is down (its breaker is open) or failed past its retries or timed
        # out; a fallback may answer instead. A non-retryable error (400, 401) is not one.
        self.outage = outage


class WorkerDown(CallFailed):
    """Not called: the worker's breaker is open."""


async def call_worker(
    worker: Worker,
    messages: list[Message],
    policy: CallPolicy,
    *,
    max_tokens: int | None = None,
    temperature: float | None = None,
    slot: asyncio.Semaphore | None = None,
    rng: random.Random | None = None,
    breaker: Breaker | None = None,
) -> Completion:
    """Return the Completion (with `retries` and wall `latency_s` set) or raise CallFailed
    (WorkerDown, without calling, while `breaker` is open). The breaker is told how it went."""
    if breaker is None:
        return await _call_with_retries(worker, messages, policy, max_tokens, temperature, slot, rng)
    if not breaker.admit(policy.breaker):
        raise WorkerDown(f"{worker.spec.id}: down (circuit breaker open), not called", retries=0, latency_s=0.0,
                         outage=True)
    try:
        completion = await _call_with_retries(worker, messages, policy, max_tokens, temperature, slot, rng)
    except CallFailed as exc:
        if exc.outage:
            breaker.failed(policy.breaker)
        else:
            breaker.released()
        raise
    except BaseException:
        breaker.released()  # cancelled or crashed: says nothing about the worker
        raise
    breaker.succeeded()
    return completion


async def _call_with_retries(
    worker: Worker,
    messages: list[Message],
    policy: CallPolicy,
    max_tokens: int | None,
    temperature: float | None,
    slot: asyncio.Semaphore | None,
    rng: random.Random | None,
) -> Completion:
    rng = rng or random.Random()
    timeout = policy.timeout_s or worker.spec.timeout_s
    start = time.perf_counter()
    attempt = 0
    while True:
        error: str
        retry_after: float | None = None
        status: int | None = None
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for wraps the call in a task of its
            # own, a cost that showed in the serving profile (benchmarks/serve.py)
            if slot is not None:
                async with slot, asyncio.timeout(timeout):
                    completion = await worker.complete(messages, max_tokens=max_tokens, temperature=temperature)
            else:
                async with asyncio.timeout(timeout):
                    completion = await worker.complete(messages, max_tokens=max_tokens, temperature=temperature)
        except TimeoutError:
            error, retryable = f"timed out after {timeout:g}s", True
        except WorkerError as exc:
            error, retryable, retry_after, status = str(exc), exc.retryable, exc.retry_after, exc.status
        else:
            completion.usage.retries = attempt
            completion.usage.latency_s = time.perf_counter() - start
            return completion
        if not retryable or attempt >= policy.max_retries:
            suffix = f" (after {attempt} retries)" if attempt else ""
            raise CallFailed(
                f"{worker.spec.id}: {error}{suffix}",
                retries=attempt,
                latency_s=time.perf_counter() - start,
                status=status,
                outage=retryable,
            )
        await asyncio.sleep(policy.backoff(attempt, retry_after, rng))
        attempt += 1
