"""The current policy as a planner for recursion rounds: the trainer's own model, generating
under `no_grad` (its second-round text is not trained on in this step; only its reward is used)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from conductor.types import Message, Usage, WorkerSpec
from conductor.workers.base import Completion


class Policy(Protocol):
    async def generate(self, messages: list[Message]) -> str: ...


class TransformersPolicy:
    """Samples from a transformers causal LM. Calls are serialised: the model is shared with the
    trainer, which waits for the reward while these run."""

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 256, temperature: float = 1.0) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.max_new_tokens, self.temperature = max_new_tokens, temperature
        self._lock = threading.Lock()

    def _generate(self, messages: list[Message]) -> str:
        import torch

        with self._lock, torch.no_grad():
            enc = self.tokenizer.apply_chat_template(
                [m.model_dump() for m in messages], add_generation_prompt=True, return_tensors="pt", return_dict=True
            ).to(self.model.device)
            out = self.model.generate(
                **enc, max_new_tokens=self.max_new_tokens, do_sample=self.temperature > 0,
                temperature=self.temperature or None, pad_token_id=self.tokenizer.pad_token_id,
            )
        return self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)

    async def generate(self, messages: list[Message]) -> str:
        return await asyncio.to_thread(self._generate, messages)


class PolicyPlanner:
    """The current policy as a Planner, for the re-planning steps of a rollout (a workflow step
    whose worker is the Conductor itself). It runs in-process, so its calls cost nothing."""

    name = "policy"

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        return Completion(text=await self.policy.generate(messages), usage=Usage(cost_usd=0.0), model=self.name)
