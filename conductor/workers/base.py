"""The Worker protocol: every provider adapter answers one chat request with a Completion."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from conductor.types import Message, Usage, WorkerSpec




class Completion(BaseModel):
    """One worker answer and what it used (`usage.cost_usd` is None when the price is unknown)."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None


class WorkerError(Exception):
    """A failed call. `retryable` errors (429, 5xx, connection) are retried by the caller's
    policy, honouring `retry_after`; the others (400/401/403, bad config) fail at once."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        worker_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.worker_id = worker_id


@runtime_checkable
class Worker(Protocol):
    spec: WorkerSpec

    async def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """One chat request. Raise WorkerError on failure; the caller owns timeouts and retries."""
        ...

    async def aclose(self) -> None:
        """Release connections. Adapters with nothing to release may return at once."""
        ...
