"""OpenAI Chat Completions through the official SDK (also the base of `openai_compatible`).

Reasoning models (o-series, GPT-5) take `max_completion_tokens` and `reasoning_effort` and
reject `temperature`; others take `temperature`. The SDK never retries (`max_retries=0`):
`calling.call_worker` owns retries, so failures become WorkerErrors here."""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar, Literal

import openai
from pydantic import Field

from conductor.types import Message, Usage, WorkerSpec

from conductor.workers.base import Completion, WorkerError
from conductor.workers.failures import connection_error, malformed, status_error
from conductor.workers.registry import BuildContext, register_provider
from conductor.workers.remote import CommonOptions, RemoteWorker, parse_options

log = logging.getLogger(__name__)

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5(?!-chat))", re.IGNORECASE)


class OpenAIOptions(CommonOptions):
    reasoning_effort: ReasoningEffort | None = Field(
        default=None, description="sent to reasoning models; the paper's constrained setting is 'minimal'"
    )
    reasoning_model: bool | None = Field(
        default=None, description="None: inferred from the model name (o1/o3/o4/gpt-5)"
    )
    token_param: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    extra_body: dict[str, Any] = Field(default_factory=dict)
    organization: str | None = None


class OpenAIWorker(RemoteWorker):
    provider: ClassVar[str] = "openai"
    default_key_envs: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    where: ClassVar[str] = "the OpenAI API"

    def __init__(self, spec: WorkerSpec, options: OpenAIOptions) -> None:
        super().__init__(spec, options)
        self.options: OpenAIOptions = options
        if not spec.model:
            raise ValueError(f"`model` is required for provider {spec.provider}")
        self.reasoning = (
            options.reasoning_model
            if options.reasoning_model is not None
            else bool(_REASONING_MODEL.match(spec.model))
        )
        self._warned_temperature = False
        self.client = openai.AsyncOpenAI(
            api_key=self._key or "not-needed",
            base_url=options.base_url,
            organization=options.organization,
            timeout=spec.timeout_s,
            max_retries=0,
        )

    def request(
        self, messages: list[Message], max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` (public so tests can read them)."""
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            self.options.token_param: max_tokens or self.spec.max_tokens,
        }
        temperature = self.spec.temperature if temperature is None else temperature
        if self.reasoning:
            if self.options.reasoning_effort is not None:
                kwargs["reasoning_effort"] = self.options.reasoning_effort
            if temperature is not None and temperature != 1 and not self._warned_temperature:
                # Reasoning models answer 400 to any temperature but 1: leave it out, say so once.
                log.info("worker %r: reasoning model, temperature %s not sent", self.spec.id, temperature)
                self._warned_temperature = True
        else:
            if temperature is not None:
                kwargs["temperature"] = temperature
            if self.options.reasoning_effort is not None:
                kwargs["reasoning_effort"] = self.options.reasoning_effort
        if self.options.extra_body:
            kwargs["extra_body"] = dict(self.options.extra_body)
        return kwargs

    async def send(self, kwargs: dict[str, Any]) -> Any:
        return await self.client.chat.completions.create(**kwargs)

    def failure(self, exc: Exception) -> WorkerError | None:
        wid = self.spec.id
        if isinstance(exc, openai.APIStatusError):
            return status_error(
                wid, exc.status_code, headers=exc.response.headers, detail=exc.message,
                scrubber=self.scrubber, key_envs=self.key_envs, model=self.spec.model,
            )
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return connection_error(wid, exc, self.scrubber, self.options.base_url or self.where)
        if isinstance(exc, openai.APIResponseValidationError):
            return malformed(wid, str(exc), self.scrubber)
        if isinstance(exc, ValueError):  # a 200 whose body is not JSON
            return malformed(wid, f"{type(exc).__name__}: {exc}", self.scrubber)
        return None

    def to_completion(self, response: Any) -> Completion:
        try:
            choice = response.choices[0]
            text = choice.message.content or ""
            usage = response.usage
        except (AttributeError, IndexError, TypeError) as exc:
            raise malformed(self.spec.id, f"no choices[0].message: {type(exc).__name__}", self.scrubber) from None
        completion = Completion(text=text, model=getattr(response, "model", "") or self.spec.model,
                                finish_reason=choice.finish_reason)
        if usage is not None:
            details = usage.prompt_tokens_details
            out_details = usage.completion_tokens_details
            completion.usage = Usage(
                input_tokens=usage.prompt_tokens or 0,
                output_tokens=usage.completion_tokens or 0,
                cached_input_tokens=(details.cached_tokens or 0) if details else 0,
                reasoning_tokens=(out_details.reasoning_tokens or 0) if out_details else 0,
            )
        return completion

    async def aclose(self) -> None:
        await self.client.close()


@register_provider("openai")
def build(spec: WorkerSpec, context: BuildContext) -> OpenAIWorker:
    return OpenAIWorker(spec, parse_options(OpenAIOptions, spec))


__all__ = ["OpenAIOptions", "OpenAIWorker", "WorkerError"]
