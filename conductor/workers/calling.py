"""Calling a worker: per-attempt timeout, bounded retries with exponential backoff and jitter
(honouring a server's Retry-After), and the pool's concurrency slot. The one retry loop of
the project: adapters turn SDK failures into WorkerError and never retry themselves."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from conductor.types import Message

from conductor.workers.base import Completion, Worker, WorkerError


@dataclass(frozen=True)
class CallPolicy:
    timeout_s: float | None = None  # None: the worker's own timeout_s
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0

    def backoff(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Full jitter on an exponential schedule; a server's Retry-After is a floor."""
        delay = rng.uniform(0, min(self.backoff_max_s, self.backoff_base_s * 2**attempt))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.backoff_max_s))
        return delay


class CallFailed(Exception):
    """A call that failed for good: after its retries, or at once for a non-retryable error."""

    def __init__(self, message: str, *, retries: int, latency_s: float, status: int | None = None) -> None:
        super().__init__(message)
        self.retries = retries
        self.latency_s = latency_s
        self.status = status


async def call_worker(
    worker: Worker,
    messages: list[Message],
    policy: CallPolicy,
    *,
    max_tokens: int | None = None,
    temperature: float | None = None,
    slot: asyncio.Semaphore | None = None,
    rng: random.Random | None = None,
) -> Completion:
    """Return the Completion (with `retries` and wall `latency_s` set) or raise CallFailed."""
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
            )
        await asyncio.sleep(policy.backoff(attempt, retry_after, rng))
        attempt += 1
