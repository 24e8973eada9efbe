"""The models a server answers for: the one it was started with (under its served name, and its
`models:/` reference when it has one), and every version of the registered Conductor in the
MLflow registry (read through registry/): `conductor@champion`, `conductor@challenger`, any
other alias, and `conductor/3`.

Registry models are resolved lazily: an alias is looked up when a request names it (the lookup
cached for `ttl_s`, so a promotion is seen within that time), and the version it points at is
downloaded and loaded once, on the first request for it, then kept (one planner per version;
concurrent first requests share the one load)."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conductor.planners import Planner
from server.schemas import ApiError

log = logging.getLogger("conductor.serve")

_REF = re.compile(r"^(?:models:/)?(?P<name>[A-Za-z0-9_.-]+)(?:@(?P<alias>[A-Za-z0-9_.-]+)|/(?P<version>\d+))$")


_FIRST = {"champion": 0, "challenger": 1}  # listed first, in this order; other aliases by name


@dataclass(frozen=True)
class Version:
    """A registered version and its aliases (what registry.models.list_versions returns)."""

    version: str
    aliases: tuple[str, ...] = ()


Lister = Callable[[], Sequence[Version]]  # blocking (MLflow): run in a thread
Loader = Callable[[str], Planner]  # version -> planner; blocking (download + load): run in a thread


@dataclass(frozen=True)
class Resolved:
    planner: Planner
    served_by: str  # what answered: the start reference, or `NAME/VERSION` of the registry


class Catalog:
    def __init__(self, served: dict[str, tuple[Planner, str]], *, registered_name: str = "conductor",
                 lister: Lister | None = None, loader: Loader | None = None, ttl_s: float = 5.0) -> None:
        """`served`: model id -> (planner, what it is) for the models given at start."""
        self.served, self.name, self.lister, self.loader, self.ttl_s = served, registered_name, lister, loader, ttl_s
        self._versions: list[Version] | None = None
        self._listed_at = float("-inf")
        self._listing: asyncio.Lock | None = None
        self._loaded: dict[str, asyncio.Future[Planner]] = {}

    @property
    def loaded_versions(self) -> list[str]:
        return sorted((v for v, f in self._loaded.items() if f.done() and not f.exception()), key=int)

    async def versions(self, *, fresh: bool = False) -> list[Version]:
        """The registry's versions (cached for ttl_s; `fresh` reads again). [] without a registry."""
        if self.lister is None:
            return []
        if self._listing is None:
            self._listing = asyncio.Lock()
        async with self._listing:  # one registry read at a time; waiters use its result
            if fresh or self._versions is None or time.monotonic() - self._listed_at > self.ttl_s:
                started = time.monotonic()
                found = await asyncio.to_thread(self.lister)
                self._versions = [Version(str(v.version), tuple(v.aliases)) for v in found]
                self._listed_at = started
            return list(self._versions)

    async def ids(self) -> list[str]:
        """Every model id a request may name: the served ones, then each alias, then each version."""
        ids = list(self.served)
        try:
            versions = await self.versions()
        except Exception as exc:  # noqa: BLE001 - a registry that cannot be read lists nothing, logged
            log.warning("model registry not readable: %s", type(exc).__name__)
            versions = []
        aliases = sorted({a for v in versions for a in v.aliases}, key=lambda a: (_FIRST.get(a, len(_FIRST)), a))
        ids += [f"{self.name}@{a}" for a in aliases] + [f"{self.name}/{v.version}" for v in versions]
        return list(dict.fromkeys(ids))

    async def resolve(self, model: str) -> Resolved:
        """The planner that answers for `model`, or an ApiError (404 `model_not_found`)."""
        if model in self.served:
            planner, ref = self.served[model]
            return Resolved(planner, ref)
        m = _REF.match(model)
        if self.lister is None or self.loader is None or m is None or m["name"] != self.name:
            raise self._not_found(model)
        try:
            version = await self._version_of(m["alias"], m["version"])
        except Exception as exc:  # noqa: BLE001 - the registry's own failure: not the client's fault
            log.warning("model registry not readable: %s", type(exc).__name__)
            raise ApiError(503, f"the model registry could not be read to resolve {model!r}; retry later",
                           type="server_error", code="model_unavailable") from None
        if version is None:
            raise self._not_found(model)
        return Resolved(await self._planner(version, model), f"{self.name}/{version}")

    async def _version_of(self, alias: str | None, version: str | None) -> str | None:
        for fresh in (False, True):  # not in the cached list: read once more (a version just registered)
            versions = await self.versions(fresh=fresh)
            for v in versions:
                if (alias is not None and alias in v.aliases) or (version is not None and v.version == str(int(version))):
                    return v.version
        return None

    async def _planner(self, version: str, model: str) -> Planner:
        future = self._loaded.get(version)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._loaded[version] = future
            try:
                future.set_result(await asyncio.to_thread(self.loader, version))  # type: ignore[arg-type]
                log.info("loaded %s/%s", self.name, version)
            except Exception as exc:  # noqa: BLE001
                del self._loaded[version]  # the next request tries again
                future.set_exception(exc)
                future.exception()  # retrieved: the waiters below get it, nobody else should
        try:
            return await asyncio.shield(future)
        except Exception as exc:  # noqa: BLE001
            log.warning("cannot load %s/%s: %s", self.name, version, type(exc).__name__)
            raise ApiError(503, f"{model!r} (version {version}) could not be loaded: {type(exc).__name__}",
                           type="server_error", code="model_unavailable") from None

    def _not_found(self, model: str) -> ApiError:
        return ApiError(404, f"the model {model!r} does not exist; GET /v1/models lists what this server serves",
                        param="model", code="model_not_found")

    async def aclose(self) -> None:
        closed = {id(p): p for p, _ in self.served.values()}
        closed |= {id(f.result()): f.result() for f in self._loaded.values() if f.done() and not f.exception()}
        for planner in closed.values():
            close = getattr(planner, "aclose", None)
            if close is not None:
                await close()
