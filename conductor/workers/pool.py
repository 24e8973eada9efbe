"""A pool of workers, loaded from a YAML file:

    workers:
      - id: gpt-5
        provider: openai
        model: gpt-5
        description: Strong generalist; best at code.
        prices: {input: 1.25, output: 10.0}
        max_tokens: 4096
        concurrency: 8
        fallback: claude-sonnet-4   # optional: who answers while this worker is down

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

from conductor.simulation import any_simulated, is_simulated_worker
from conductor.types import WorkerSpec
from conductor.workers.base import Worker
from conductor.workers.breaker import Breaker, Breakers
from conductor.workers.pricing import lookup
from conductor.workers.registry import BuildContext, factory_for


class PoolError(ValueError):
    """A pool file or pool request that cannot be used; the message is one line for users."""


# Repeat r of an evaluation shifts every simulated worker's seed by this times r.
REPEAT_SEED_STRIDE = 7919


class PoolFile(BaseModel):
    """A pool file's contents, validated, with the facts every run reads off it (`simulated`,
    `providers`, `price_dates`) defined here once. `offered(ids)` is the sub-pool a Method offers:
    the same rules apply to what is offered."""

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
        for spec in self.workers:
            if spec.fallback is None:
                continue
            if spec.fallback == spec.id:
                raise ValueError(f"worker {spec.id!r} names itself as its fallback")
            target = next((w for w in self.workers if w.id == spec.fallback), None)
            if target is None:
                raise ValueError(f"worker {spec.id!r}: fallback {spec.fallback!r} is not a worker of this pool")
            if target.is_conductor:
                raise ValueError(f"worker {spec.id!r}: fallback {spec.fallback!r} is the Conductor, not a worker")
        return self


    @property
    def simulated(self) -> bool:
        """Whether a run on this pool is simulated (conductor/simulation.py's rule)."""
        return any_simulated(self.workers)

    @property
    def providers(self) -> tuple[str, ...]:
        """The providers of its workers, each once, in pool order (the Conductor entry included)."""
        return tuple(dict.fromkeys(w.provider for w in self.workers))

    @property
    def price_dates(self) -> dict[str, str | None]:
        """worker id -> ISO date its price was checked: for prices given in the file, the file's
        `prices_checked`; else the price table's date (None: undated, or no price known)."""
        out: dict[str, str | None] = {}
        for spec in self.workers:
            if spec.prices is not None:
                out[spec.id] = str(self.prices_checked) if self.prices_checked else None
                continue
            entry = lookup(spec.model) if spec.model else None
            out[spec.id] = entry.checked if entry else None
        return out

    def offered(self, ids: Sequence[str] | None) -> PoolFile:
        """The sub-pool of `ids`, in that order (None: this pool)."""
        if ids is None:
            return self
        by_id = {s.id: s for s in self.workers}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise PoolError(f"{self.name or 'pool'}: no worker {', '.join(missing)}")
        return self.model_copy(update={"workers": [by_id[i] for i in ids]})

    def for_repeat(self, repeat: int) -> PoolFile:
        """This pool with an evaluation's repeat `repeat`'s dice (repeat 0: as written)."""
        return self.reseeded(REPEAT_SEED_STRIDE * repeat)

    def reseeded(self, shift: int) -> PoolFile:
        """This pool with each simulated worker's `seed` option shifted by `shift` (an evaluation's
        repeat r uses shift 7919·r): a simulated worker's draws are a pure function of its seed, so
        a repeat gets fresh luck on the same problems. Real workers vary on their own."""
        if shift == 0 or not self.simulated:
            return self
        workers = [w.model_copy(update={"options": {**w.options, "seed": int(w.options.get("seed", 0)) + shift}})
                   if is_simulated_worker(w) else w for w in self.workers]
        return self.model_copy(update={"workers": workers})


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
        breakers: Breakers | None = None,
    ) -> None:
        self.specs: list[WorkerSpec] = list(specs)
        self._workers = workers
        self._slots = slots if slots is not None else _Slots({s.id: s.concurrency for s in self.specs})
        # One breaker per worker for everything run on this pool (its sub-pools included): a
        # worker down for one question is down for the run's other questions too.
        self.breakers = breakers if breakers is not None else Breakers()

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
    def simulated(self) -> bool:
        return any_simulated(self.specs)

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

    def breaker(self, worker_id: str) -> Breaker:
        """The worker's circuit breaker, shared by every sub-pool offered from this one."""
        return self.breakers.get(worker_id)

    def fallbacks(self, worker_id: str) -> list[str]:
        """Who may answer for `worker_id` while it is down, best first, among the workers this
        pool offers (an excluded worker is never called): its pool file's `fallback:`, then the
        workers of the same kind, nearest in pool order first (the earlier one on a tie). "Same
        kind" is the same `provider` (one family of models behind one kind of endpoint); the
        Conductor's own entries never answer for a worker."""
        by_id = {s.id: s for s in self.specs}
        spec = by_id.get(worker_id)
        if spec is None or spec.is_conductor:
            return []
        out = [spec.fallback] if spec.fallback in by_id and spec.fallback != worker_id else []
        here = self.ids.index(worker_id)
        near = sorted((abs(i - here), i) for i, s in enumerate(self.specs)
                      if s.id != worker_id and not s.is_conductor and s.provider == spec.provider)
        out += [self.specs[i].id for _, i in near if self.specs[i].id not in out]
        return out

    def offer(self, ids: Sequence[str]) -> Pool:
        """The sub-pool the Conductor is shown, in the given order (same workers, slots and breakers)."""
        missing = [i for i in ids if i not in self.ids]
        if missing:
            raise PoolError(f"unknown worker id(s): {', '.join(missing)}")
        by_id = {s.id: s for s in self.specs}
        return Pool([by_id[i] for i in ids], self._workers, self._slots, self.breakers)

    def without(self, excluded: Iterable[str]) -> Pool:
        """This pool less the `excluded` workers (a user opting them out): the Conductor plans over
        what remains and nothing is ever sent to them. An unknown id is a PoolError."""
        excluded = list(dict.fromkeys(excluded))
        unknown = [i for i in excluded if i not in self.ids]
        if unknown:
            raise PoolError(f"exclude: no worker {', '.join(unknown)} in this pool (it has {', '.join(self.ids)})")
        kept = [i for i in self.ids if i not in excluded]
        if not any(not self.specs[self.index_of(i)].is_conductor for i in kept):
            raise PoolError(f"exclude: excluding {', '.join(excluded)} leaves no worker in the pool")
        return self.offer(kept)

    async def aclose(self) -> None:
        for w in self._workers.values():
            await w.aclose()

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
