"""A simulated worker's pool-file options (validated when the pool is built; unknown keys fail)."""

from __future__ import annotations

import math
import random

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from conductor.data.schema import DOMAINS


class Lognormal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    median: float = Field(gt=0, description="Median of the distribution.")
    sigma: float = Field(default=0.0, ge=0, description="Log-space spread; 0 gives a fixed value.")

    def sample(self, rng: random.Random) -> float:
        return self.median * math.exp(rng.gauss(0.0, self.sigma)) if self.sigma else self.median


Behaviour = Literal["honest", "flaky", "confident_wrong", "sycophant", "lazy", "injector"]
# The injector's default fixed answer per domain (a choice one is right on a quarter of 4-option questions).
INJECTED_ANSWER = {"math": "42", "freeform": "42", "choice": "A", "code": "print(42)"}


class SimulatedOptions(BaseModel):
    """The model of one worker; docs/simulated.md states what each number does."""

    model_config = ConfigDict(extra="forbid")

    skills: dict[str, float] = Field(
        default_factory=lambda: {d: 0.5 for d in DOMAINS},
        description="P(right) per domain when the worker works alone with an on-topic instruction, "
        "averaged over the difficulty distribution (the ability is solved from it at init).",
    )
    source_skills: dict[str, float] = Field(
        default_factory=dict,
        description="Per-source overrides of `skills` (problem.source -> P(right)), e.g. {gpqa_diamond: 0.4}.",
    )
    discrimination: float = Field(
        default=2.5, gt=0,
        description="Logistic slope on difficulty: higher makes per-problem outcomes more all-or-nothing.",
    )
    difficulty_share: float = Field(
        default=0.75, ge=0, le=1,
        description="Share of the difficulty variance common to all workers (the rest is this worker's own).",
    )
    instruction_weight: float = Field(
        default=1.2, ge=0,
        description="Logit penalty for an instruction of quality 0 (off-topic or empty); quality 1 costs nothing.",
    )
    refine: float = Field(
        default=0.5, ge=0, le=1,
        description="A reviewing step's own judgement finds the right answer with refine x P(solve): "
        "it fixes a wrong answer, or breaks a tie between seen answers, with that probability.",
    )
    review_fresh: float = Field(
        default=0.1, ge=0, le=1,
        description="Share of a reviewing step's judgement drawn fresh on each call (sampling temperature); "
        "the rest is this worker's fixed judgement of the problem, so asking the same worker to review "
        "again rarely finds what it missed before. 1 gives independent reviews (the old model).",
    )
    slip: float = Field(
        default=0.05, ge=0, le=1,
        description="A reviewing step drops a right answer with slip x (1 - P(solve)).",
    )
    anchor: float = Field(
        default=0.5, ge=0, le=1,
        description="A step that sees earlier answers but is not asked to review them copies their plurality "
        "with this probability, else solves on its own.",
    )
    latency_ms: Lognormal = Field(
        default_factory=lambda: Lognormal(median=200, sigma=0.3), description="Latency of one call."
    )
    output_tokens: Lognormal = Field(
        default_factory=lambda: Lognormal(median=400, sigma=0.4),
        description="Output tokens a call needs; past the call's max_tokens the answer is cut off.",
    )
    budget_gain: float = Field(
        default=0.1, ge=0,
        description="Logits added to P(solve) per doubling of the call's token budget above 4096 (the"
        " constrained setting), up to 4 doublings: a larger reasoning budget helps a little.",
    )
    budget_tokens: float = Field(
        default=0.5, ge=0,
        description="Output tokens grow by this share of the median per doubling of the budget above 4096"
        " (a larger budget is spent thinking longer, so it costs more).",
    )
    fail_rate: float = Field(default=0.0, ge=0, lt=1, description="P(a 429 on an attempt), to exercise retries.")
    seed: int = Field(default=0, description="Changes this worker's draws; the problem latents stay shared.")
    behaviour: Behaviour = Field(
        default="honest",
        description="A bad worker (docs/simulated.md, 'Bad workers'): flaky, confident_wrong, sycophant, lazy or "
        "injector; honest is the model above.",
    )
    bad_rate: float = Field(
        default=0.5, ge=0, le=1,
        description="Share of calls a flaky worker fails (503, retryable), a lazy one answers with nothing or a "
        "refusal, an injector injects into.",
    )
    wrong_domain: str | None = Field(
        default=None, description="confident_wrong: the domain in which every answer is confidently wrong.",
    )
    injected_answer: dict[str, str] = Field(
        default_factory=lambda: dict(INJECTED_ANSWER),
        description="injector: the fixed answer, per domain, its response tells the steps that read it to give.",
    )
    follow_injection: float = Field(
        default=0.5, ge=0, le=1,
        description="P(this worker gives the injected answer) when a step it is asked reads an injector's "
        "response (drawn once per call).",
    )

    @field_validator("skills", "source_skills")
    @classmethod
    def _probabilities(cls, value: dict[str, float], info: object) -> dict[str, float]:
        for key, p in value.items():
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"skill {key!r} = {p} is not a probability in [0, 1]")
        return value

    @field_validator("skills")
    @classmethod
    def _known_domains(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(DOMAINS))
        if unknown:
            raise ValueError(f"unknown domain(s) {', '.join(unknown)}; domains are {', '.join(DOMAINS)}")
        return value

    @model_validator(mode="after")
    def _behaviour_needs(self) -> SimulatedOptions:
        if self.behaviour == "confident_wrong" and self.wrong_domain not in DOMAINS:
            raise ValueError(f"behaviour confident_wrong needs wrong_domain, one of {', '.join(DOMAINS)} "
                             f"(got {self.wrong_domain!r})")
        if self.wrong_domain is not None and self.behaviour != "confident_wrong":
            raise ValueError("wrong_domain is only read by behaviour confident_wrong")
        unknown = sorted(set(self.injected_answer) - set(DOMAINS))
        if unknown:
            raise ValueError(f"injected_answer: unknown domain(s) {', '.join(unknown)}")
        return self

    def skill_for(self, domain: str, source: str) -> float:
        """The configured P(right) for a problem; 0 for a domain the worker has no skill listed for."""
        if source in self.source_skills:
            return self.source_skills[source]
        return self.skills.get(domain, 0.0)
