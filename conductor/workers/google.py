"""Gemini through the official `google-genai` SDK (`client.aio.models.generate_content`).

`thinking_budget` sets Gemini's thinking tokens (the paper's constrained Gemini 2.5 Pro uses
128, its minimum; 2.5 Flash accepts 0 = off). Thinking tokens are billed as output, so they
are counted in `output_tokens` and reported in `reasoning_tokens`. The SDK's own retries are
disabled (one attempt) so that `calling.call_worker` owns them."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import Field

from conductor.types import Message, Usage, WorkerSpec

from conductor.workers.base import Completion, WorkerError
from conductor.workers.failures import connection_error, malformed, status_error
from conductor.workers.registry import BuildContext, register_provider
from conductor.workers.remote import CommonOptions, RemoteWorker, parse_options


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's connection/timeout errors (google-genai 3.x uses httpx2, older httpx)."""
    found: list[type[BaseException]] = [OSError]
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        found.append(module.TransportError)
    return tuple(found)


_TRANSPORT_ERRORS = _transport_errors()


class GoogleOptions(CommonOptions):
    thinking_budget: int | None = Field(default=None, ge=-1, description="-1 = dynamic; None = model default")
    api_version: str | None = None


class GoogleWorker(RemoteWorker):
    provider: ClassVar[str] = "google"
    default_key_envs: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

    def __init__(self, spec: WorkerSpec, options: GoogleOptions) -> None:
        super().__init__(spec, options)
        self.options: GoogleOptions = options
        if not spec.model:
            raise ValueError("`model` is required for provider google")
        http_options = types.HttpOptions(
            base_url=options.base_url,
            api_version=options.api_version,
            timeout=int(spec.timeout_s * 1000),  # milliseconds
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self.client = genai.Client(api_key=self._key, http_options=http_options)

    def request(
        self, messages: list[Message], max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        contents = [
            types.Content(role="model" if m.role == "assistant" else "user", parts=[types.Part(text=m.content)])
            for m in messages
            if m.role != "system"
        ]
        temperature = self.spec.temperature if temperature is None else temperature
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            max_output_tokens=max_tokens or self.spec.max_tokens,
            temperature=temperature,
            thinking_config=(
                types.ThinkingConfig(thinking_budget=self.options.thinking_budget)
                if self.options.thinking_budget is not None
                else None
            ),
        )
        return {"model": self.spec.model, "contents": contents, "config": config}

    async def send(self, kwargs: dict[str, Any]) -> Any:
        return await self.client.aio.models.generate_content(**kwargs)

    def failure(self, exc: Exception) -> WorkerError | None:
        wid = self.spec.id
        if isinstance(exc, genai_errors.APIError):
            headers = getattr(exc.response, "headers", None)
            detail = exc.message or json.dumps(exc.details, default=str)
            return status_error(
                wid, int(exc.code or 0), headers=headers, detail=str(detail),
                scrubber=self.scrubber, key_envs=self.key_envs, model=self.spec.model,
            )
        if isinstance(exc, _TRANSPORT_ERRORS):
            return connection_error(wid, exc, self.scrubber, self.options.base_url or "the Gemini API")
        if isinstance(exc, ValueError):  # a 200 whose body is not JSON
            return malformed(wid, f"{type(exc).__name__}: {exc}", self.scrubber)
        return None

    def to_completion(self, response: Any) -> Completion:
        candidates = getattr(response, "candidates", None)
        if not candidates:
            feedback = getattr(response, "prompt_feedback", None)
            raise malformed(self.spec.id, f"no candidates (prompt feedback: {feedback})", self.scrubber)
        candidate = candidates[0]
        parts = (candidate.content.parts if candidate.content else None) or []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        usage = response.usage_metadata
        completion = Completion(
            text=text,
            model=response.model_version or self.spec.model,
            finish_reason=str(candidate.finish_reason.value) if candidate.finish_reason else None,
        )
        if usage is not None:
            thoughts = usage.thoughts_token_count or 0
            completion.usage = Usage(
                input_tokens=usage.prompt_token_count or 0,
                cached_input_tokens=usage.cached_content_token_count or 0,
                output_tokens=(usage.candidates_token_count or 0) + thoughts,
                reasoning_tokens=thoughts,
            )
        return completion

    async def aclose(self) -> None:
        await self.client.aio.aclose()


@register_provider("google")
def build(spec: WorkerSpec, context: BuildContext) -> GoogleWorker:
    return GoogleWorker(spec, parse_options(GoogleOptions, spec))
