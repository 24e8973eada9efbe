"""An LLM judge for free-form answers, made from any worker of the pool. It lives beside the
workers, not in verify/: verify/ takes any `Judge` callable and so needs no worker types (the
simulated pool, a worker, uses verify/ to check that its wrong answers really are wrong)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from conductor.data.schema import Problem
from conductor.types import Message
from conductor.verify.freeform import Judge
from conductor.workers.base import Worker, WorkerError

JUDGE_PROMPT = """You grade answers. Reply with exactly one word: YES if the candidate answer means the \
same as the reference answer for this question, otherwise NO.

Question:
{question}

Reference answer: {reference}
Candidate answer: {candidate}

Same meaning (YES/NO)?"""


class JudgeConfig(BaseModel):
    """Settings of the optional LLM judge for free-form answers (used only when a Judge is given)."""

    model_config = ConfigDict(frozen=True)

    max_tokens: int = Field(default=8, gt=0)
    timeout_s: float = Field(default=60.0, gt=0)


def worker_judge(worker: Worker, config: JudgeConfig | None = None) -> Judge:
    """A Judge that asks `worker`. Worker errors and unclear replies give None (undecided)."""
    config = config or JudgeConfig()

    async def judge(problem: Problem, reference: str, candidate: str) -> bool | None:
        prompt = JUDGE_PROMPT.format(question=problem.task_text[:4000], reference=reference, candidate=candidate)
        try:
            done = await asyncio.wait_for(
                worker.complete([Message(role="user", content=prompt)], max_tokens=config.max_tokens,
                                temperature=0.0),
                timeout=config.timeout_s,
            )
        except (WorkerError, TimeoutError):
            return None
        word = (done.text.strip().split() or [""])[0].strip(".!*").upper()
        return {"YES": True, "NO": False}.get(word)

    return judge
