"""Free-form answers: rules first, then an optional LLM judge through a Worker."""

from __future__ import annotations

from conductor.data.schema import Problem
from conductor.verify import averify, verify
from conductor.workers.judge import worker_judge
from conductor.types import Message, WorkerSpec
from conductor.workers.base import Completion, WorkerError


def _p(answer: str) -> Problem:
    return Problem(id="f", source="rlpr", domain="freeform", question="Which gas do plants take in?", answer=answer)


class ScriptedWorker:
    """A Worker that replies from a script and records the prompts it saw."""

    def __init__(self, reply: str | Exception) -> None:
        self.spec = WorkerSpec(id="judge-1", provider="test")
        self.reply = reply
        self.prompts: list[str] = []

    async def complete(self, messages: list[Message], *, max_tokens: int | None = None,
                       temperature: float | None = None) -> Completion:
        self.prompts.append(messages[-1].content)
        if isinstance(self.reply, Exception):
            raise self.reply
        return Completion(text=self.reply)

    async def aclose(self) -> None:
        return None


def test_rules_math_then_text() -> None:
    assert verify(_p("0.5"), "Answer: 1/2").method == "math-verify"
    v = verify(_p("Carbon dioxide"), "The answer is: carbon dioxide.")
    assert v.correct and v.method == "text-match"
    assert not verify(_p("Carbon dioxide"), "Answer: oxygen").correct


async def test_judge_off_by_default_and_consulted_when_given() -> None:
    worker = ScriptedWorker("YES")
    off = await averify(_p("Carbon dioxide"), "Answer: CO2")
    assert not off.correct and off.judge is None and not worker.prompts
    on = await averify(_p("Carbon dioxide"), "Answer: CO2", judge=worker_judge(worker), judge_name="judge-1")
    assert on.correct and on.method == "llm-judge" and on.judge == "judge-1"
    assert "Reference answer: Carbon dioxide" in worker.prompts[0] and "CO2" in worker.prompts[0]


async def test_judge_not_asked_when_rules_match() -> None:
    worker = ScriptedWorker("NO")
    v = await averify(_p("Carbon dioxide"), "Answer: carbon dioxide", judge=worker_judge(worker))
    assert v.correct and not worker.prompts


async def test_judge_no_error_and_garbage() -> None:
    no = await averify(_p("Carbon dioxide"), "Answer: nitrogen", judge=worker_judge(ScriptedWorker("NO.")),
                       judge_name="j")
    assert not no.correct and no.method == "llm-judge"
    err = ScriptedWorker(WorkerError("boom", retryable=True))
    failed = await averify(_p("Carbon dioxide"), "Answer: CO2", judge=worker_judge(err), judge_name="j")
    assert not failed.correct and "undecided" in failed.reason
    unclear = await averify(_p("Carbon dioxide"), "Answer: CO2", judge=worker_judge(ScriptedWorker("maybe")))
    assert not unclear.correct and "undecided" in unclear.reason
