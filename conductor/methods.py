"""A Method: what answers the questions of a run. A planner, the pool offered to it and the
execution settings, under one name derived once, `<planner>@<pool>` (e.g.
`template-fanout@local-simulated`), which says when the pool is simulated."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conductor.config import ExecutionConfig
from conductor.planners import Planner
from conductor.workers.pool import Pool, PoolError, read_pool_file
from conductor.workers.registry import BuildContext

SIMULATED_PROVIDER = "simulated"


@dataclass(frozen=True)
class Method:
    # A Planner. Typed Any because Prefect builds a schema of a flow's parameters, and pydantic
    # cannot build a validator for a Protocol; __post_init__ checks it instead.
    planner: Any
    pool_file: Path
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    offer: tuple[str, ...] | None = None  # worker ids offered, in order; None: the whole file
    name: str = field(init=False)
    simulated: bool = field(init=False)  # any offered worker is simulated: an environment, not a benchmark

    def __post_init__(self) -> None:
        if not isinstance(self.planner, Planner):
            raise TypeError(f"{self.planner!r} is not a Planner (it needs `name` and `plan`)")
        pool = read_pool_file(self.pool_file)
        specs = {s.id: s for s in pool.workers}
        missing = [i for i in self.offer or () if i not in specs]
        if missing:
            raise PoolError(f"{self.pool_file}: no worker {', '.join(missing)}")
        offered = [specs[i] for i in self.offer] if self.offer is not None else list(pool.workers)
        simulated = any(s.provider == SIMULATED_PROVIDER for s in offered)
        label = pool.name or Path(self.pool_file).stem
        if simulated and "simulated" not in label:
            label += "-simulated"
        object.__setattr__(self, "simulated", simulated)
        object.__setattr__(self, "name", f"{self.planner.name}@{label}")

    def open_pool(self, context: BuildContext | None = None) -> Pool:
        """Build the workers (use as `async with method.open_pool(ctx) as pool`)."""
        pool = Pool.load(self.pool_file, context)
        return pool.offer(list(self.offer)) if self.offer is not None else pool
