"""A `transformers` causal LM on a local path, answering with its own chat template.

One model load per worker (on first use, so building a pool stays cheap), and one generation
at a time: every call runs on the worker's single thread, which keeps the event loop free and
serialises `generate` (the lock). `max_time` bounds a generation by the worker's timeout, so
a call the policy gave up on does not hold the thread much longer."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from conductor.workers.pricing import cost_of
from conductor.types import Message, Usage, WorkerSpec
from conductor.workers.base import Completion, WorkerError
from conductor.workers.registry import BuildContext, register_provider
from conductor.workers.remote import parse_options


# transformers builds a model on the meta device and then fills it in; two loads at once in one
# process (two Conductor versions evaluated side by side, each on its own worker thread) left
# weights on meta: "Cannot copy out of meta tensor" (reproduced with 6 threads loading 2 dirs).
# Loading is rare and short: one at a time per process.
_LOAD_LOCK = threading.Lock()


class LocalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(default=None, description="model directory; default: the worker's `model`")
    device: str = "cpu"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    chat_template_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="e.g. {enable_thinking: false} for Qwen3"
    )


class LocalWorker:
    def __init__(self, spec: WorkerSpec, options: LocalOptions) -> None:
        self.spec = spec
        self.options = options
        path = Path(options.path or spec.model).expanduser()
        if not (path / "config.json").is_file():
            raise ValueError(
                f"no model at {str(path)!r} (a directory with config.json); local workers load from disk only"
            )
        self.path = path
        self._model: Any = None
        self._tokenizer: Any = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"local-{spec.id}")

    def __repr__(self) -> str:
        return f"LocalWorker(id={self.spec.id!r}, path={str(self.path)!r})"

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForCausalLM

        from conductor.models.tiny import load_tokenizer

        dtype = "auto" if self.options.dtype == "auto" else getattr(torch, self.options.dtype)
        # not AutoTokenizer: for a tiny Conductor it would re-split text the model never saw split so
        self._tokenizer = load_tokenizer(self.path)
        with _LOAD_LOCK:
            model = AutoModelForCausalLM.from_pretrained(self.path, dtype=dtype)
            self._model = model.to(self.options.device).eval()

    def _generate(self, messages: list[Message], max_tokens: int, temperature: float | None) -> Completion:
        import torch

        self._load()
        tok, model = self._tokenizer, self._model
        enc = tok.apply_chat_template(
            [{"role": m.role, "content": m.content} for m in messages],
            add_generation_prompt=True,
            return_dict=True,
            return_tensors="pt",
            **self.options.chat_template_kwargs,
        ).to(model.device)
        sample = temperature is not None and temperature > 0
        kwargs: dict[str, Any] = {"max_new_tokens": max_tokens, "do_sample": sample,
                                  "max_time": self.spec.timeout_s, "pad_token_id": tok.pad_token_id}
        if sample:
            kwargs["temperature"] = temperature
        with torch.inference_mode():
            out = model.generate(**enc, **kwargs)
        prompt_len = enc["input_ids"].shape[1]
        new = out[0][prompt_len:]
        ended = len(new) > 0 and int(new[-1]) == tok.eos_token_id
        return Completion(
            text=tok.decode(new, skip_special_tokens=True),
            usage=Usage(input_tokens=int(prompt_len), output_tokens=int(len(new))),
            model=str(self.path.name),
            finish_reason="stop" if ended or len(new) < max_tokens else "length",
        )

    async def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        temperature = self.spec.temperature if temperature is None else temperature
        start = time.perf_counter()
        loop = asyncio.get_running_loop()
        try:
            completion = await loop.run_in_executor(
                self._thread, self._generate, messages, max_tokens or self.spec.max_tokens, temperature
            )
        except (OSError, ValueError, RuntimeError) as exc:  # bad files, template errors, out of memory
            raise WorkerError(f"local model {self.path.name}: {type(exc).__name__}: {exc}",
                              retryable=False, worker_id=self.spec.id) from None
        completion.usage.latency_s = time.perf_counter() - start
        completion.usage.cost_usd = cost_of(self.spec, completion.usage)
        return completion

    async def aclose(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)
        self._model = self._tokenizer = None


@register_provider("local")
def build(spec: WorkerSpec, context: BuildContext) -> LocalWorker:
    return LocalWorker(spec, parse_options(LocalOptions, spec))
