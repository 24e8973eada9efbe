"""From a ServeConfig to a running app: resolve the planner, load the pool, open the run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette

from conductor.models.resolve import RESOLVER_GROUP, installed_resolvers, one_line
from conductor.planners import SHAPES, ModelPlanner, Planner, TemplatePlanner
from conductor.workers.pool import Pool
from conductor.workers.registry import BuildContext
from server.app import create_app
from server.catalog import Catalog, Lister, Loader, Version
from server.config import ServeConfig
from server.guards import KeyRing
from server.recording import new_run
from server.service import Service

# `models:/NAME@ALIAS` -> a local model directory (registry/ provides one; see docs/serve.md).
ModelResolver = Callable[[str], Path]


def installed_resolver() -> ModelResolver | None:
    """The `models:/` resolver a layer installed (registry/ names one in the entry-point group
    `conductor.model_resolvers`, so this package needs no import of it), or None."""
    found = installed_resolvers()
    return found[0] if found else None  # type: ignore[return-value]


class ServeError(ValueError):
    """A server that cannot start as asked (bad model reference, pool, keys)."""


def resolve_planner(ref: str, resolver: ModelResolver | None = None) -> Planner:
    """`template:SHAPE` (a stand-in), `models:/...` (through `resolver`) or a model directory."""
    if ref.startswith("template:") or ref == "template":
        shape = ref.partition(":")[2] or "fanout"
        if shape not in SHAPES:
            raise ServeError(f"unknown template shape {shape!r}; one of {', '.join(SHAPES)}")
        return TemplatePlanner(shape)  # type: ignore[arg-type]
    if ref.startswith("models:/"):
        if resolver is None:
            raise ServeError(f"{ref} is a registry reference, and no registry is available to resolve it "
                             f"(nothing in the entry-point group {RESOLVER_GROUP}): pass a model directory instead")
        try:
            path = resolver(ref)
        except Exception as exc:  # noqa: BLE001 - a registry's own error, said in one line
            raise ServeError(f"cannot resolve {ref}: {one_line(exc)}") from exc
    else:
        path = Path(ref)
    if not (path / "config.json").is_file():
        raise ServeError(f"{path} is not a model directory (no config.json)")
    return ModelPlanner.from_directory(path)


def registry_catalog_parts(config: ServeConfig, name: str = "conductor") -> tuple[Lister | None, Loader | None]:
    """The registry's lister and loader of `name`'s versions (None, None when not asked for)."""
    if not config.registry_models:
        return None, None

    def lister() -> list[Version]:
        from registry.models import list_versions  # mlflow is imported only when the registry is read

        return [Version(v.version, v.aliases) for v in list_versions(name, tracking_uri=config.registry_uri)]

    def loader(version: str) -> Planner:
        from registry.models import resolve_model_uri

        dst = None
        if config.model_cache_dir is not None:
            dst = config.model_cache_dir / f"{name}-v{version}"
            dst.mkdir(parents=True, exist_ok=True)
        path = resolve_model_uri(f"models:/{name}/{version}", dst, tracking_uri=config.registry_uri)
        return resolve_planner(str(path))

    return lister, loader


def build_app(config: ServeConfig, keys: KeyRing | None, *, planner: Planner | None = None,
              resolver: ModelResolver | None = None) -> Starlette:
    from conductor.data.bank import sample_problems  # here: `datasets` costs ~1.3 s of every command's start

    planner = planner or resolve_planner(config.model_ref, resolver)
    pool = Pool.load(config.pool_file, BuildContext(problems=sample_problems()))
    run = new_run(f"{getattr(planner, 'name', 'planner')}@serve", pool.simulated,
                  {"model": config.model_ref, "pool": str(config.pool_file)})
    served = {config.model_name: (planner, config.model_ref)}
    if config.model_ref.startswith("models:/"):
        served[config.model_ref] = (planner, config.model_ref)
    lister, loader = registry_catalog_parts(config)
    catalog = Catalog(served, lister=lister, loader=loader, ttl_s=config.registry_ttl_s)
    return create_app(Service(config, pool, catalog, run), keys)
