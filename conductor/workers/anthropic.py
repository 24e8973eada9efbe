"""Anthropic Messages through the official SDK.

System messages go in `system`. Extended thinking: `thinking_budget` >= 1024 turns it on,
0 turns it off explicitly (the paper's constrained Claude), None leaves the model's default.
The current SDK (2.x) no longer has a `temperature` argument; models that still accept one
(Claude Sonnet 4, the paper's) get it in the body when `send_temperature: true`, never with
thinking on (Anthropic requires the default temperature then)."""

from __future__ import annotations

from typing import Any, ClassVar

import anthropic
from pydantic import Field, model_validator

from conductor.types import Message, Usage, WorkerSpec

from conductor.workers.base import Completion, WorkerError
from conductor.workers.failures import connection_error, malformed, status_error
from conductor.workers.registry import BuildContext, register_provider
from conductor.workers.remote import CommonOptions, RemoteWorker, parse_options

MIN_THINKING_BUDGET = 1024  # Anthropic's floor for budget_tokens


class AnthropicOptions(CommonOptions):
    thinking_budget: int | None = Field(
        default=None, ge=0, description="extended thinking tokens; 0 = off (the paper's setting)"
    )
    send_temperature: bool = Field(default=False, description="send the worker's temperature in the body")
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _floor(self) -> AnthropicOptions:
        if self.thinking_budget and self.thinking_budget < MIN_THINKING_BUDGET:
            raise ValueError(
                f"thinking_budget must be 0 (off) or at least {MIN_THINKING_BUDGET} for Anthropic"
            )
        return self


class AnthropicWorker(RemoteWorker):
    provider: ClassVar[str] = "anthropic"
    default_key_envs: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)

    def __init__(self, spec: WorkerSpec, options: AnthropicOptions) -> None:
        super().__init__(spec, options)
        self.options: AnthropicOptions = options
        if not spec.model:
            raise ValueError("`model` is required for provider anthropic")
        if options.thinking_budget and spec.max_tokens <= options.thinking_budget:
            raise ValueError(
                f"max_tokens ({spec.max_tokens}) must exceed options.thinking_budget ({options.thinking_budget})"
            )
        self.client = anthropic.AsyncAnthropic(
            api_key=self._key, base_url=options.base_url, timeout=spec.timeout_s, max_retries=0
        )

    @property
    def check_max_tokens(self) -> int:
        """The smallest request `pool check` may send (above the thinking budget)."""
        return (self.options.thinking_budget or 0) + 1

    def request(
        self, messages: list[Message], max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": max_tokens or self.spec.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in messages if m.role != "system"],
        }
        if system:
            kwargs["system"] = system
        extra = dict(self.options.extra_body)
        budget = self.options.thinking_budget
        if budget:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
            if kwargs["max_tokens"] <= budget:
                raise WorkerError(
                    f"max_tokens {kwargs['max_tokens']} must exceed the thinking budget {budget}",
                    retryable=False, worker_id=self.spec.id,
                )
        else:
            if budget == 0:
                kwargs["thinking"] = {"type": "disabled"}
            temperature = self.spec.temperature if temperature is None else temperature
            if temperature is not None and self.options.send_temperature:
                extra["temperature"] = temperature
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    async def send(self, kwargs: dict[str, Any]) -> Any:
        return await self.client.messages.create(**kwargs)

    def failure(self, exc: Exception) -> WorkerError | None:
        wid = self.spec.id
        if isinstance(exc, anthropic.APIStatusError):
            return status_error(
                wid, exc.status_code, headers=exc.response.headers, detail=exc.message,
                scrubber=self.scrubber, key_envs=self.key_envs, model=self.spec.model,
            )
        if isinstance(exc, anthropic.APIConnectionError):
            return connection_error(wid, exc, self.scrubber, self.options.base_url or "the Anthropic API")
        if isinstance(exc, (anthropic.APIResponseValidationError, ValueError)):
            return malformed(wid, f"{type(exc).__name__}: {exc}", self.scrubber)
        return None

    def to_completion(self, response: Any) -> Completion:
        try:
            text = "".join(block.text for block in response.content if block.type == "text")
            usage = response.usage
            cache_read = usage.cache_read_input_tokens or 0
            cache_write = usage.cache_creation_input_tokens or 0
            details = getattr(usage, "output_tokens_details", None)
            return Completion(
                text=text,
                # Anthropic's input_tokens excludes cache reads and writes; ours counts every input token.
                usage=Usage(
                    input_tokens=usage.input_tokens + cache_read + cache_write,
                    cached_input_tokens=cache_read,
                    output_tokens=usage.output_tokens,
                    reasoning_tokens=(getattr(details, "thinking_tokens", 0) or 0) if details else 0,
                ),
                model=response.model or self.spec.model,
                finish_reason=response.stop_reason,
            )
        except (AttributeError, TypeError) as exc:
            raise malformed(self.spec.id, f"not a Messages response: {type(exc).__name__}", self.scrubber) from None

    async def aclose(self) -> None:
        await self.client.close()


@register_provider("anthropic")
def build(spec: WorkerSpec, context: BuildContext) -> AnthropicWorker:
    return AnthropicWorker(spec, parse_options(AnthropicOptions, spec))
