"""The simulated provider: an offline environment (like a gym) for tests and training.

It is built with the problem bank, so it knows gold answers. Given a step message it finds the
problem, then answers right with the worker's skill for the problem's domain, else with a
plausible wrong answer in the domain's format. A step asked to verify or refine earlier answers
it can see keeps a right one, and corrects a wrong one with the worker's `refine` probability.
Keywords in the instruction the worker is weak at lower its odds. Everything is deterministic
for a given seed and the content of the call (not the order calls happen to run in).

Its numbers describe this environment only: they are never benchmark results.

Pool file options (all optional):

    options:
      skills: {math: 0.7, choice: 0.8, freeform: 0.4, code: 0.5}
      refine: 0.4            # P(correcting a wrong earlier answer when asked to verify/refine)
      weak_at: {proof: 0.5}  # instruction keyword -> multiplier on the skill
      latency_ms: {median: 800, sigma: 0.3}   # lognormal; sigma 0 for a fixed latency
      output_tokens: {median: 600, sigma: 0.5}
      fail_rate: 0.0         # P(a 429 on an attempt), for exercising retries
      seed: 0
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from conductor.data.schema import DOMAINS, Problem
from conductor.prompts import split_step_message
from conductor.types import Message, Usage, WorkerSpec
from conductor.workers.base import Completion, WorkerError
from conductor.workers.registry import BuildContext, register_provider

REFINE_WORDS = re.compile(
    r"\b(verify|check|review|refine|critique|correct|fix|improve|aggregate|combine|choose|select|"
    r"compare|reconcile|final)\w*",
    re.IGNORECASE,
)


class Lognormal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    median: float = Field(gt=0)
    sigma: float = Field(default=0.0, ge=0)

    def sample(self, rng: random.Random) -> float:
        return self.median * math.exp(rng.gauss(0.0, self.sigma)) if self.sigma else self.median


class SimulatedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skills: dict[str, float] = Field(default_factory=lambda: {d: 0.5 for d in DOMAINS})
    refine: float = Field(default=0.3, ge=0, le=1)
    weak_at: dict[str, float] = Field(default_factory=dict)
    latency_ms: Lognormal = Field(default_factory=lambda: Lognormal(median=200, sigma=0.3))
    output_tokens: Lognormal = Field(default_factory=lambda: Lognormal(median=400, sigma=0.4))
    fail_rate: float = Field(default=0.0, ge=0, lt=1)
    seed: int = 0


class ProblemBank:
    """Problems looked up by their question text (what a worker actually sees)."""

    def __init__(self, problems: Iterable[Problem] = ()) -> None:
        self._by_question: dict[str, Problem] = {}
        for p in problems:
            self._by_question[p.question.strip()] = p

    def __len__(self) -> int:
        return len(self._by_question)

    def find(self, task: str) -> Problem | None:
        return self._by_question.get(task.strip())


_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_ANSWER_LINE = re.compile(r"^\s*(?:final\s+)?answer\s*[:=]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_CODE = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)
_RESPONSE_SPLIT = re.compile(r"^## Step \d+: response\n", re.MULTILINE)


def render_answer(problem: Problem, value: str) -> str:
    """A final answer in the form the domain's verifier reads."""
    if problem.domain == "math":
        return f"The final answer is $\\boxed{{{value}}}$."
    if problem.domain == "code":
        return f"```python\n{value.rstrip()}\n```"
    return f"Answer: {value}"


def extract_answer(problem: Problem, text: str) -> str | None:
    """The answer a response commits to, in this environment's own format."""
    if problem.domain == "math":
        found = _BOXED.findall(text)
    elif problem.domain == "code":
        found = _CODE.findall(text)
    else:
        found = _ANSWER_LINE.findall(text)
    return found[-1].strip() if found else None


def gold_answer(problem: Problem) -> str | None:
    if problem.domain == "choice" and problem.answer is not None:
        return problem.answer.strip().upper()
    if problem.domain == "code":
        return problem.reference_solution
    return problem.answer


def wrong_answer(problem: Problem, rng: random.Random) -> str:
    gold = gold_answer(problem) or ""
    if problem.domain == "choice":
        letters = [c for c in (problem.choice_letters() or list("ABCD")) if c != gold]
        return rng.choice(letters)
    if problem.domain == "code":
        return "import sys\nprint(0)"
    distractors = [d for d in problem.meta.get("distractors", []) if d != gold]
    if distractors:
        return str(rng.choice(distractors))
    try:
        number = float(gold)
    except ValueError:
        return f"{gold} + 1" if problem.domain == "math" and gold else "none of these"
    delta = rng.choice([-2, -1, 1, 2, 10])
    value = number + delta
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _digest(*parts: Any) -> int:
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(str(p).encode())
        h.update(b"\x1f")
    return int.from_bytes(h.digest(), "big")


class SimulatedWorker:
    def __init__(self, spec: WorkerSpec, bank: ProblemBank) -> None:
        self.spec = spec
        self.options = SimulatedOptions.model_validate(spec.options)
        self.bank = bank
        self._attempts: dict[int, int] = {}

    def _p_right(self, problem: Problem, instruction: str, context_answers: list[str | None]) -> float:
        p = self.options.skills.get(problem.domain, 0.0)
        lowered = instruction.lower()
        for word, factor in self.options.weak_at.items():
            if word.lower() in lowered:
                p *= factor
        if context_answers and REFINE_WORDS.search(instruction):
            gold = gold_answer(problem)
            right = sum(a is not None and a == gold for a in context_answers) / len(context_answers)
            keep = 1 - (1 - p) * 0.5  # seeing a right answer helps
            p = right * keep + (1 - right) * self.options.refine
        return min(max(p, 0.0), 1.0)

    async def complete(
        self, messages: list[Message], *, max_tokens: int | None = None, temperature: float | None = None
    ) -> Completion:
        content = messages[-1].content
        parts = split_step_message(content)
        task = parts.task if parts else content
        instruction = parts.instruction if parts else content
        problem = self.bank.find(task)
        key = _digest(self.options.seed, self.spec.id, task, instruction, parts.context if parts else "")
        rng = random.Random(key)
        attempt = self._attempts.get(key, 0)
        self._attempts[key] = attempt + 1

        await asyncio.sleep(self.options.latency_ms.sample(rng) / 1000)
        if self.options.fail_rate and random.Random(key + attempt).random() < self.options.fail_rate:
            raise WorkerError(f"{self.spec.id}: simulated rate limit", retryable=True, status=429, retry_after=0.0)

        cap = min(max_tokens or self.spec.max_tokens, self.spec.max_tokens)
        needed = max(1, int(self.options.output_tokens.sample(rng)))
        input_tokens = sum(len(m.content) for m in messages) // 4 + 1
        if problem is None:
            text = "I could not find a reliable answer to this question."
        else:
            contexts = _RESPONSE_SPLIT.split(parts.context)[1:] if parts and parts.context else []
            context_answers = [extract_answer(problem, c) for c in contexts]
            right = rng.random() < self._p_right(problem, instruction, context_answers)
            if right:
                value = gold_answer(problem)
            else:
                wrong_seen = [a for a in context_answers if a is not None and a != gold_answer(problem)]
                value = rng.choice(wrong_seen) if wrong_seen else wrong_answer(problem, rng)
            text = f"[{self.spec.id}] Worked through the problem.\n{render_answer(problem, value or '')}"
        finish = "stop"
        if needed > cap:  # out of budget before the final answer: the answer is cut off
            text, needed, finish = text.split("\n", 1)[0], cap, "length"
        cost = self.spec.prices.cost(input_tokens, needed) if self.spec.prices else None
        return Completion(
            text=text,
            usage=Usage(input_tokens=input_tokens, output_tokens=needed, cost_usd=cost),
            model=self.spec.model or self.spec.id,
            finish_reason=finish,
        )

    async def aclose(self) -> None:
        return None


@register_provider("simulated")
def _build(spec: WorkerSpec, context: BuildContext) -> SimulatedWorker:
    bank = context.get("bank")
    if bank is None:
        bank = ProblemBank(context.get("problems", ()))
    return SimulatedWorker(spec, bank)
