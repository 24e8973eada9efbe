"""The value types every part of the library shares: what a model is sent (`Message`), what a
pool entry is (`WorkerSpec`, `Prices`), what a call used (`Usage`) and what is asked (`Task`).

They live here, below workers/, prompts, the executor and the warehouse, so that none of those
has to import another just to name a message or a spec (that is what made workers <-> pricing
and workers <-> prompts import cycles).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from conductor.data.schema import Domain, Problem

# The provider name of the Conductor itself as a pool entry: a step that names it re-plans.
CONDUCTOR_PROVIDER = "conductor"


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class Prices(BaseModel):
    """USD per 1M tokens. `cached_input` defaults to the input price when unknown."""

    model_config = ConfigDict(frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def cost(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0) -> float:
        cached = min(cached_input_tokens, input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return (
            (input_tokens - cached) * self.input
            + cached * cached_price
            + output_tokens * self.output
        ) / 1_000_000


class WorkerSpec(BaseModel):
    """One entry of a pool file. `options` holds what only its provider understands
    (base_url, api_key_env, reasoning settings, the simulated pool's skills, ...)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/@-]*$")
    provider: str
    model: str = ""
    description: str = ""
    prices: Prices | None = None
    max_tokens: int = Field(default=4096, gt=0)
    temperature: float | None = Field(default=0.2, ge=0)
    concurrency: int = Field(default=8, gt=0)
    timeout_s: float = Field(default=120.0, gt=0)
    options: dict[str, Any] = Field(default_factory=dict)
    # The worker that answers this one's steps while it is down (docs/workers.md, "Outages"); unset:
    # the nearest offered worker of the same provider.
    fallback: str | None = None

    @property
    def is_conductor(self) -> bool:
        """The Conductor itself offered as a step's worker (the flag planners and the executor read)."""
        return self.provider == CONDUCTOR_PROVIDER


class Usage(BaseModel):
    """What calls used. One model call's figures (a `Completion`, a `CallRecord`) and a trace's
    totals are the same type; totals are the `sum` of the calls' values.

    `cost_usd` is None when a price is unknown: never 0 by default, since an unknown price must
    not look free. A total with any unknown part is unknown (`cost_known_usd` keeps the lower
    bound for display)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0  # part of output_tokens, where the provider reports it
    cached_input_tokens: int = 0  # part of input_tokens served from the provider's cache
    cost_usd: float | None = None
    latency_s: float = 0.0  # one call: wall seconds, retries included; a total: the sum
    retries: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @classmethod
    def sum(cls, parts: Iterable[Usage]) -> Usage:
        """Field by field; `cost_usd` is None as soon as one part's is unknown. One pass over the
        parts (this runs for every trace the executor finishes)."""
        inp = out = reasoning = cached = retries = 0
        latency, cost = 0.0, 0.0
        known = True
        for p in parts:
            inp += p.input_tokens
            out += p.output_tokens
            reasoning += p.reasoning_tokens
            cached += p.cached_input_tokens
            latency += p.latency_s
            retries += p.retries
            if p.cost_usd is None:
                known = False
            elif known:
                cost += p.cost_usd
        return cls(input_tokens=inp, output_tokens=out, reasoning_tokens=reasoning, cached_input_tokens=cached,
                   cost_usd=cost if known else None, latency_s=latency, retries=retries)


class Task(BaseModel):
    """A question as the executor runs it: a `Problem` (the one definition of its id, source,
    domain and text) and whether it can be graded. A question typed at the CLI or sent to the
    server is a Problem too, with no reference answer and `graded=False`: a verifier is never
    asked to judge it.

    Not serialized anywhere (a Trace copies `id`, `source` and `domain` as its own columns), so
    its fields are free to be what the executor needs."""

    model_config = ConfigDict(frozen=True)

    problem: Problem
    graded: bool = True

    @property
    def id(self) -> str:
        return self.problem.id

    @property
    def source(self) -> str:
        return self.problem.source

    @property
    def domain(self) -> Domain:
        return self.problem.domain

    @property
    def question(self) -> str:
        """What the Conductor and every worker are asked: the problem's task text (a choice
        problem's options included)."""
        return self.problem.task_text

    @property
    def reference(self) -> Problem | None:
        """The Problem to grade an answer against, or None for a question with no reference."""
        return self.problem if self.graded else None

    @classmethod
    def of(cls, problem: Problem) -> Task:
        return cls(problem=problem)

    @classmethod
    def adhoc(cls, question: str, domain: Domain = "freeform", source: str = "cli") -> Task:
        """A question with no stored Problem (typed at the CLI, sent to a server)."""
        problem = Problem(id=Problem.make_id(source, question), source=source, domain=domain, question=question)
        return cls(problem=problem, graded=False)
