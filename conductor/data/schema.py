"""The one Problem schema every source maps to."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The domain picks the verifier (and the simulated pool's skill table):
#   math     - a final expression compared with math-verify (MATH, MATH-500, AIME)
#   choice   - a letter among `choices` (MMLU, GPQA-Diamond)
#   freeform - a short free-form answer (RLPR)
#   code     - a program run against `tests` (LiveCodeBench, BigCodeBench)
Domain = Literal["math", "choice", "freeform", "code"]
DOMAINS: tuple[Domain, ...] = ("math", "choice", "freeform", "code")


class TestCase(BaseModel):
    """One code test in LiveCodeBench's shape: stdin/stdout, or a call whose args are JSON lines."""

    model_config = ConfigDict(frozen=True)
    __test__ = False  # not a pytest class

    input: str
    output: str
    testtype: Literal["stdin", "functional"] = "stdin"


class Problem(BaseModel):
    """A question with what is needed to grade an answer to it.

    `id` is a stable hash of source + the source's native id, so the same row always gets
    the same id whichever loader or machine produced it.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    source: str
    domain: Domain
    question: str
    answer: str | None = None
    choices: list[str] | None = None
    tests: list[TestCase] | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @staticmethod
    def make_id(source: str, native_id: str | int) -> str:
        digest = hashlib.sha256(f"{source}\x1f{native_id}".encode()).hexdigest()
        return f"{source}-{digest[:16]}"

    @property
    def reference_solution(self) -> str | None:
        """A known-good program for a code problem, when the source (or our samples) has one."""
        value = self.meta.get("reference_solution")
        return value if isinstance(value, str) else None

    @property
    def task_text(self) -> str:
        """The task as it is asked: the question and, for a choice problem, its lettered options.
        The Conductor and every worker see this; without the options a letter cannot be chosen
        (and a multiple-choice question often reads like a short-answer one)."""
        if not self.choices:
            return self.question
        options = "\n".join(f"{letter}) {choice}" for letter, choice in zip(self.choice_letters(), self.choices))
        return f"{self.question}\n\n{options}"

    def choice_letters(self) -> list[str]:
        return [chr(ord("A") + i) for i in range(len(self.choices or []))]
