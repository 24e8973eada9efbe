"""What every HTTP adapter shares: its options model, its key, its scrubber, its limits, and the
shape of a call."""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from conductor.workers.pricing import cost_of
from conductor.types import Message, WorkerSpec
from conductor.workers.base import Completion, WorkerError
from conductor.workers.limits import LimitKey, limited, register_limit
from conductor.workers.secrets import Scrubber, read_key


class CommonOptions(BaseModel):
    """`options:` of a worker in a pool file. Unknown keys are errors (typos caught at build).
    There is deliberately no `api_key` field: keys live in the environment only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    rpm: float | None = Field(default=None, gt=0, description="requests/minute shared per provider endpoint")
    provider_concurrency: int | None = Field(default=None, gt=0, description="in-flight requests per endpoint")

    @field_validator("base_url")
    @classmethod
    def _expand(cls, value: str | None) -> str | None:
        return None if value is None else expand_env(value)


_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_env(value: str) -> str:
    """`${VAR}` and `${VAR:-default}` from the environment, so one pool file serves many hosts."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        found = os.environ.get(name)
        if found:
            return found
        if default is not None:
            return default
        raise ValueError(f"environment variable {name} is not set (used in {value!r})")

    return _PLACEHOLDER.sub(sub, value)


O = TypeVar("O", bound=BaseModel)


def parse_options(cls: type[O], spec: WorkerSpec) -> O:
    try:
        return cls.model_validate(spec.options)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                known = ", ".join(cls.model_fields)
                problems.append(f"options.{where} is not a {spec.provider} option (known: {known})")
            else:
                problems.append(f"options.{where}: {err['msg']}")
        raise ValueError("; ".join(problems)) from None


class RemoteWorker:
    """Base of the SDK adapters: one `complete` for all of them (the provider's rate limit, the
    call, its failure as a WorkerError, the price). Subclasses set the class variables and
    implement `request` (the SDK call's arguments), `send`, `failure` and `to_completion`."""

    provider: ClassVar[str]
    default_key_envs: ClassVar[tuple[str, ...]] = ()
    key_required: ClassVar[bool] = True

    def __init__(self, spec: WorkerSpec, options: CommonOptions) -> None:
        self.spec = spec
        self.options = options
        self.key_envs = [options.api_key_env] if options.api_key_env else list(self.default_key_envs)
        required = self.key_required or options.api_key_env is not None
        self._key = read_key(self.key_envs, worker_id=spec.id, required=required)
        self.scrubber = Scrubber([self._key])
        self.limit_key: LimitKey = (spec.provider, options.base_url or "")
        register_limit(self.limit_key, rpm=options.rpm, concurrency=options.provider_concurrency)

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(id={self.spec.id!r}, model={self.spec.model!r})"

    async def complete(
        self, messages: list[Message], *, max_tokens: int | None = None, temperature: float | None = None
    ) -> Completion:
        kwargs = self.request(messages, max_tokens, temperature)
        try:
            async with limited(self.limit_key):
                response = await self.send(kwargs)
        except Exception as exc:  # noqa: BLE001 - each adapter says which of its SDK's errors it knows
            error = self.failure(exc)
            if error is None:
                raise
            raise error from None
        completion = self.to_completion(response)
        completion.usage.cost_usd = cost_of(self.spec, completion.usage)
        return completion

    def request(self, messages: list[Message], max_tokens: int | None, temperature: float | None) -> dict[str, Any]:
        raise NotImplementedError

    async def send(self, kwargs: dict[str, Any]) -> Any:
        """The SDK call itself."""
        raise NotImplementedError

    def failure(self, exc: Exception) -> WorkerError | None:
        """The WorkerError an SDK exception means (retryable or not), or None to let it through."""
        raise NotImplementedError

    def to_completion(self, response: Any) -> Completion:
        raise NotImplementedError
