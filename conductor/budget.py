"""What one question may spend, shared by every recursion round (`Budget`), and where a planning
round sits in its question (`Round`). `conductor.executor` runs the rounds and re-exports both."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from conductor.config import ExecutionConfig
from conductor.types import WorkerSpec
from conductor.workers.pricing import prices_for
from conductor.workflow import later_round_max_steps

if TYPE_CHECKING:
    from conductor.prompts import PriorStep


@dataclass
class Budget:
    """Spending of one question, shared by every recursion round. Calls already in flight
    finish; once the limit is reached no new call starts.

    A call of unknown cost is never free against a dollar limit: with `max_usd` set, a worker
    with no known price is refused before it is called, and a call that comes back without a
    cost spends the budget (what it cost cannot be known, so the limit can no longer be kept)."""

    max_usd: float | None = None
    spent_usd: float = 0.0
    exhausted: str | None = field(default=None)

    def refuses(self, spec: WorkerSpec) -> str | None:
        """Why a call to `spec` may not start under this budget, or None."""
        if self.max_usd is not None and not spec.is_conductor and prices_for(spec) is None:
            return (f"worker {spec.id!r} has no known price, so a dollar budget of ${self.max_usd:g} per question"
                    " cannot be kept: give it `prices:` in the pool file, or set no budget")
        return None

    def allows_call(self) -> bool:
        if self.max_usd is not None and self.spent_usd >= self.max_usd:
            self.exhausted = self.exhausted or (
                f"dollar budget of ${self.max_usd:g} per question spent (${self.spent_usd:.4f})")
        return self.exhausted is None

    def charge(self, cost: float | None, who: str) -> None:
        if cost is None:
            if self.max_usd is not None:
                self.exhausted = f"a call to {who} came back with no cost: the ${self.max_usd:g} budget cannot be kept"
            return
        self.spent_usd += cost



@dataclass
class Round:
    """Where a planning round sits in its question: the budget every round shares, its depth,
    the round that asked for it, and the earlier round's steps it was shown (`prior`, which its
    steps read with `"prev"`). A question's first round is `Round()`; a recursion step makes the
    next one (which may keep the last answer with three empty lists)."""

    budget: Budget | None = None
    depth: int = 0
    parent_trace_id: str | None = None
    prior: tuple[PriorStep, ...] = ()

    @property
    def allow_empty(self) -> bool:
        return self.depth > 0

    def max_steps(self, config: ExecutionConfig) -> int:
        """The steps this round may run: the config's limit in a first round, and in a later one
        no more than the earlier round it reads (`later_round_max_steps`)."""
        return later_round_max_steps(config.max_steps, len(self.prior)) if self.depth > 0 else config.max_steps

    def funded(self, config: ExecutionConfig) -> Round:
        return self if self.budget is not None else replace(self, budget=Budget(config.max_usd_per_question))
