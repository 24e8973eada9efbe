"""Any server speaking the OpenAI Chat Completions format: vLLM, Ollama, SGLang, LM Studio,
hosted inference APIs. `base_url` is required (it may be `${VAR:-http://localhost:8000/v1}`);
a key is optional (set `api_key_env` when the server wants one). `extra_body` passes
server-specific fields through, e.g. Qwen3 without thinking on vLLM:

    options:
      base_url: ${QWEN3_URL:-http://localhost:8003/v1}
      extra_body: {chat_template_kwargs: {enable_thinking: false}}
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from conductor.types import WorkerSpec
from conductor.workers.openai import OpenAIOptions, OpenAIWorker
from conductor.workers.registry import BuildContext, register_provider
from conductor.workers.remote import parse_options


class CompatibleOptions(OpenAIOptions):
    base_url: str  # type: ignore[assignment]  # required here
    reasoning_model: bool | None = Field(default=False, description="True: omit temperature")
    # `max_tokens` is what every server knows; vLLM and newer servers also take the other.
    token_param: Literal["max_completion_tokens", "max_tokens"] = "max_tokens"


class CompatibleWorker(OpenAIWorker):
    provider: ClassVar[str] = "openai_compatible"
    default_key_envs: ClassVar[tuple[str, ...]] = ()
    key_required: ClassVar[bool] = False
    where: ClassVar[str] = "the server"


@register_provider("openai_compatible")
def build(spec: WorkerSpec, context: BuildContext) -> CompatibleWorker:
    return CompatibleWorker(spec, parse_options(CompatibleOptions, spec))
