"""`--conductor PATH|models:/conductor@ALIAS` -> a local model directory, without the library
importing a model registry: resolvers of URI schemes are found through the
`conductor.model_resolvers` entry point group (registry/ provides MLflow's `models:/`, `runs:/`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

URI_SCHEMES = ("models:/", "runs:/")
RESOLVER_GROUP = "conductor.model_resolvers"


def installed_resolvers() -> list[Callable[[str], str | Path]]:
    """The `ref -> directory` callables the layers above installed, in entry-point name order."""
    return [ep.load() for ep in sorted(entry_points(group=RESOLVER_GROUP), key=lambda ep: ep.name)]


def one_line(exc: BaseException) -> str:
    """A resolver's own error (an MLflow "model not found", say) as one line for the user."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class UnresolvableModel(ValueError):
    """A model URI no installed resolver handles, or a path that is not a model directory."""


def resolve_conductor(ref: str) -> Path:
    """A local directory for `ref`: a path as it is (it must hold config.json), a `models:/` or
    `runs:/` URI through the first resolver that returns a directory."""
    if not ref.startswith(URI_SCHEMES):
        path = Path(ref)
        if not (path / "config.json").is_file():
            raise UnresolvableModel(f"{ref} is not a model directory (no config.json)")
        return path
    resolvers = installed_resolvers()
    if not resolvers:
        raise UnresolvableModel(f"no model resolver is installed for {ref} (registry/ provides one)")
    for resolve in resolvers:
        try:
            path = Path(resolve(ref))
        except Exception as exc:  # noqa: BLE001 - a registry's own error (no such model), in one line
            raise UnresolvableModel(f"cannot resolve {ref}: {one_line(exc)}") from exc
        if (path / "config.json").is_file():
            return path
    raise UnresolvableModel(f"{ref} resolved to no model directory")
