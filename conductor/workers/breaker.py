"""A per-worker circuit breaker: a worker that keeps failing is marked down for a while, so the
questions of a run stop paying retries and timeouts to it and go to a fallback instead.

One `Breakers` per Pool (sub-pools offered from it share it), so every question of a run sees
the same state; nothing is module-level. A breaker counts *outage* failures: a call that failed
past its retries or timed out (`calling.call_worker` reports them). After `failures` of them in a
row it opens (the worker is down); after `cooldown_s` it half-opens and lets one trial call
through: a success closes it, a failure opens it again for another cool-down.

No asyncio primitive is held (only counters and a monotonic clock), so one breaker serves every
event loop and thread a pool is used from (the evaluation flow runs tasks in threads); a lock
keeps its counters whole across threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

BreakerState = Literal["closed", "open", "half_open"]


@dataclass(frozen=True)
class BreakerPolicy:
    """`failures`: consecutive outage failures that open a breaker (0: never opens);
    `cooldown_s`: how long it stays open before one trial call."""

    failures: int = 3
    cooldown_s: float = 60.0

    @property
    def enabled(self) -> bool:
        return self.failures > 0


@dataclass
class Breaker:
    """One worker's breaker. `admit()` before a call; `succeeded()` / `failed()` after it, or
    `released()` when an admitted call ended some other way (a 400, a cancellation)."""

    worker_id: str
    clock: Callable[[], float] = time.monotonic
    consecutive: int = 0
    opened_at: float | None = None
    trial_in_flight: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def state(self, policy: BreakerPolicy) -> BreakerState:
        with self._lock:
            return self._state(policy)

    def _state(self, policy: BreakerPolicy) -> BreakerState:
        if self.opened_at is None:
            return "closed"
        return "half_open" if self.clock() - self.opened_at >= policy.cooldown_s else "open"

    def admit(self, policy: BreakerPolicy) -> bool:
        """Whether a call may go to this worker now. Half-open: the first caller gets the one
        trial and holds it until it reports back; the others are refused meanwhile."""
        with self._lock:
            state = self._state(policy)
            if state == "closed" or not policy.enabled:
                return True
            if state == "half_open" and not self.trial_in_flight:
                self.trial_in_flight = True
                return True
            return False

    def succeeded(self) -> None:
        with self._lock:
            self.consecutive, self.opened_at, self.trial_in_flight = 0, None, False

    def failed(self, policy: BreakerPolicy) -> None:
        """An outage failure: counts toward opening; a failed trial opens it again at once."""
        with self._lock:
            self.consecutive += 1
            trial, self.trial_in_flight = self.trial_in_flight, False
            if policy.enabled and (trial or self.consecutive >= policy.failures):
                self.opened_at = self.clock()

    def released(self) -> None:
        """An admitted call that ended without saying anything about an outage: a trial it held
        is given back, so that the next caller can try."""
        with self._lock:
            self.trial_in_flight = False


class Breakers:
    """The breakers of one pool, by worker id, made on first use."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._by_id: dict[str, Breaker] = {}
        self._lock = threading.Lock()

    def get(self, worker_id: str) -> Breaker:
        with self._lock:
            if worker_id not in self._by_id:
                self._by_id[worker_id] = Breaker(worker_id, clock=self._clock)
            return self._by_id[worker_id]

    def down(self, policy: BreakerPolicy) -> list[str]:
        """Ids of the workers whose breaker is open now (half-open ones are not down)."""
        with self._lock:
            breakers = list(self._by_id.values())
        return [b.worker_id for b in breakers if policy.enabled and b.state(policy) == "open"]
