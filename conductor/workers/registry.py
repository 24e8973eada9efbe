"""One registration point per provider (as in Simon Willison's `llm`): a provider name maps to
a factory building a Worker from its spec. Adapters register themselves on import; the
modules are imported lazily so that an unused SDK is never imported."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from conductor.types import CONDUCTOR_PROVIDER, WorkerSpec

from conductor.workers.base import Worker

WorkerFactory = Callable[[WorkerSpec, "BuildContext"], Worker]

_FACTORIES: dict[str, WorkerFactory] = {}

# provider name -> module that registers it
BUILTIN_PROVIDERS: dict[str, str] = {
    "simulated": "conductor.workers.simulated",
    "openai": "conductor.workers.openai",
    "anthropic": "conductor.workers.anthropic",
    "google": "conductor.workers.google",
    "openai_compatible": "conductor.workers.openai_compatible",
    "local": "conductor.workers.local",
}



class BuildContext:
    """What factories may need besides the spec (e.g. the simulated pool's problem bank)."""

    def __init__(self, **values: Any) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


def register_provider(name: str) -> Callable[[WorkerFactory], WorkerFactory]:
    def deco(factory: WorkerFactory) -> WorkerFactory:
        _FACTORIES[name] = factory
        return factory

    return deco


def known_providers() -> list[str]:
    return sorted(set(BUILTIN_PROVIDERS) | set(_FACTORIES) | {CONDUCTOR_PROVIDER})


def factory_for(provider: str) -> WorkerFactory:
    if provider not in _FACTORIES and provider in BUILTIN_PROVIDERS:
        importlib.import_module(BUILTIN_PROVIDERS[provider])
    try:
        return _FACTORIES[provider]
    except KeyError:
        raise ValueError(
            f"unknown provider {provider!r}; known: {', '.join(known_providers())}"
        ) from None
