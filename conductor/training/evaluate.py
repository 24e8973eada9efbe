"""Held-out accuracy of a policy: greedy workflows for held-out rows, run and verified over the
pool (the same rollout path as the reward). Used for early stopping and the benchmark."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conductor.config import ExecutionConfig
from conductor.executor import RunOptions
from conductor.trace import Trace
from conductor.training.dataset import PromptRow, row_messages
from conductor.training.rollout import rollout
from conductor.workers.pool import Pool


@dataclass(frozen=True)
class EvalResult:
    n: int
    accuracy: float
    format_rate: float
    calls_per_question: float
    usd_per_question: float | None  # None when a price was unknown: never counted as $0
    traces: tuple[Trace, ...] = ()

    def metrics(self, prefix: str = "eval_") -> dict[str, float]:
        """The known figures (an unknown $ per question is left out, not logged as 0)."""
        out = {
            f"{prefix}accuracy": self.accuracy,
            f"{prefix}format_rate": self.format_rate,
            f"{prefix}calls_per_question": self.calls_per_question,
        }
        if self.usd_per_question is not None:
            out[f"{prefix}usd_per_question"] = self.usd_per_question
        return out

    @property
    def usd_text(self) -> str:
        return "unknown" if self.usd_per_question is None else f"${self.usd_per_question:.4f}"


def generate_workflows(model: Any, tokenizer: Any, prompts: Sequence[list[dict]], *, max_new_tokens: int, batch_size: int = 16) -> list[str]:
    """Greedy completions, batched (the tokenizer pads on the left)."""
    import torch

    texts: list[str] = []
    was_training = model.training
    model.eval()
    try:
        for i in range(0, len(prompts), batch_size):
            chunk = [tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=False) for p in prompts[i : i + batch_size]]
            enc = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id)
            texts += tokenizer.batch_decode(out[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
    finally:
        model.train(was_training)
    return texts


async def score_texts(texts: Sequence[str], rows: Sequence[PromptRow], pool: Pool, *, examples: bool, seed: int = 0,
                      execution: ExecutionConfig | None = None) -> EvalResult:
    execution = execution or ExecutionConfig()

    async def one(i: int) -> Trace:
        row = rows[i]
        offered = row.offered(pool)
        options = RunOptions(config=execution).at_effort(row.effort).seeded(seed * 100_003 + i)
        return await rollout(texts[i], row.problem, offered, options,
                             messages=row_messages(row, pool, examples=examples))

    traces = await asyncio.gather(*(one(i) for i in range(len(rows))))
    n = len(traces) or 1
    return EvalResult(
        n=len(traces),
        accuracy=sum(bool(t.verdict and t.verdict.correct) for t in traces) / n,
        format_rate=sum(t.parse_status == "ok" for t in traces) / n,
        calls_per_question=sum(t.calls for t in traces) / n,
        usd_per_question=_usd_per_question(traces),
        traces=tuple(traces),
    )


def _usd_per_question(traces: Sequence[Trace]) -> float | None:
    """Mean $ per question; None (unknown) when any question's cost is unknown, since a question
    whose price is unknown did not cost $0."""
    costs = [t.usage.cost_usd for t in traces]
    if not costs or any(c is None for c in costs):
        return None
    return sum(c for c in costs if c is not None) / len(costs)


def evaluate_policy(model: Any, tokenizer: Any, rows: Sequence[PromptRow], pool: Pool, *, examples: bool,
                    max_new_tokens: int, seed: int = 0) -> EvalResult:
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=examples)] for r in rows]
    texts = generate_workflows(model, tokenizer, prompts, max_new_tokens=max_new_tokens)
    return asyncio.run(score_texts(texts, rows, pool, examples=examples, seed=seed))
