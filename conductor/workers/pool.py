"""A pool of workers, loaded from a YAML file:

    workers:
      - id: gpt-5
        provider: openai
        model: gpt-5
        description: Strong generalist; best at code.
        prices: {input: 1.25, output: 10.0}
        max_tokens: 4096
        concurrency: 8

The order of a pool is the order the Conductor sees ("Model 0", "Model 1", ...).
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from conductor.types import WorkerSpec

from conductor.workers.base import Worker
from conductor.workers.registry import BuildContext, factory_for


class PoolError(ValueError):
    """A pool file or pool request that cannot be used; the message is one line for users."""


class PoolFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = ""
    # When the file's own `prices:` were last checked (ISO date); undated when absent. Runs whose
    # prices are older than a limit warn (conductor/evaluation/prices.py).
    prices_checked: date | None = None
    workers: list[WorkerSpec]

    @model_validator(mode="after")
    def _unique_ids(self) -> PoolFile:
        seen: set[str] = set()
        for spec in self.workers:
            if spec.id in seen:
                raise ValueError(f"worker id {spec.id!r} appears twice")
            seen.add(spec.id)
        if not self.workers:
            raise ValueError("a pool needs at least one worker")
        return self


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "pool"
    return f"{where}: {err['msg']}"


def read_pool_file(path: str | Path) -> PoolFile:
    """The pool file at `path`, validated. Parsed once per version of the file (its inode, size and
    modification time): an evaluation reads each pool ~5 times (YAML parsing ~10 ms apiece), and
    every caller gets its own copy, so none can change another's."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise PoolError(f"pool file {path} does not exist") from None
    return _parse_pool_file(path, path.resolve(), st.st_ino, st.st_size, st.st_mtime_ns).model_copy(deep=True)


def pool_is_simulated(path: str | Path) -> bool:
    """A run on this pool is labelled simulated when any of its workers is: its figures then
    describe the simulation, not models."""
    return any(w.provider == "simulated" for w in read_pool_file(path).workers)


@functools.lru_cache(maxsize=64)
def _parse_pool_file(path: Path, resolved: Path, _inode: int, _size: int, _mtime_ns: int) -> PoolFile:
    """`path` as the caller named it (for messages); `resolved` and the rest: which file and version."""
    try:
        raw = yaml.safe_load(resolved.read_text())
    except FileNotFoundError:
        raise PoolError(f"pool file {path} does not exist") from None
    except yaml.YAMLError as exc:
        raise PoolError(f"pool file {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise PoolError(f"pool file {path} must be a mapping with a 'workers' list")
    try:
        return PoolFile.model_validate(raw)
    except ValidationError as exc:
        raise PoolError(f"pool file {path}: {_first_error(exc)}") from None


class _Slots:
    """Per-worker semaphores, made per event loop (a semaphore is bound to the loop it first
    waits in, and a pool outlives `asyncio.run` calls in scripts and tests)."""

    def __init__(self, limits: dict[str, int]) -> None:
        self._limits = limits
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, worker_id: str) -> asyncio.Semaphore:
        sems = self._by_loop.setdefault(asyncio.get_running_loop(), {})
        if worker_id not in sems:
            sems[worker_id] = asyncio.Semaphore(self._limits[worker_id])
        return sems[worker_id]


class Pool:
    """Workers in the order offered. Conductor entries (provider `conductor`) have no Worker:
    the executor re-plans when a step names one. Each worker has a concurrency slot."""

    def __init__(
        self,
        specs: Sequence[WorkerSpec],
        workers: dict[str, Worker],
        slots: _Slots | None = None,
    ) -> None:
        self.specs: list[WorkerSpec] = list(specs)
        self._workers = workers
        self._slots = slots if slots is not None else _Slots({s.id: s.concurrency for s in self.specs})

    @classmethod
    def from_specs(cls, specs: Iterable[WorkerSpec], context: BuildContext | None = None) -> Pool:
        specs = list(specs)
        context = context or BuildContext()
        workers: dict[str, Worker] = {}
        for spec in specs:
            if spec.is_conductor:
                continue
            try:
                workers[spec.id] = factory_for(spec.provider)(spec, context)
            except PoolError:
                raise
            except (ValueError, TypeError, ValidationError) as exc:
                raise PoolError(f"worker {spec.id!r}: {exc}") from None
        return cls(specs, workers)

    @classmethod
    def load(cls, path: str | Path, context: BuildContext | None = None) -> Pool:
        return cls.from_specs(read_pool_file(path).workers, context)

    def __len__(self) -> int:
        return len(self.specs)

    def __getitem__(self, index: int) -> WorkerSpec:
        return self.specs[index]

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.specs]

    def index_of(self, worker_id: str) -> int:
        return self.ids.index(worker_id)

    def is_conductor(self, index: int) -> bool:
        return self.specs[index].is_conductor

    def worker(self, worker_id: str) -> Worker:
        try:
            return self._workers[worker_id]
        except KeyError:
            raise PoolError(f"worker {worker_id!r} is not in this pool") from None

    def slot(self, worker_id: str) -> asyncio.Semaphore:
        """The concurrency limit of a worker, shared by every sub-pool offered from this one."""
        return self._slots.get(worker_id)

    def offer(self, ids: Sequence[str]) -> Pool:
        """The sub-pool the Conductor is shown, in the given order (same workers and slots)."""
        missing = [i for i in ids if i not in self.ids]
        if missing:
            raise PoolError(f"unknown worker id(s): {', '.join(missing)}")
        by_id = {s.id: s for s in self.specs}
        return Pool([by_id[i] for i in ids], self._workers, self._slots)

    async def aclose(self) -> None:
        for w in self._workers.values():
            await w.aclose()

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
