"""A Method: what answers the questions of a run. A planner, the pool offered to it and the
execution settings, under one name derived once, `<planner>@<pool>` (e.g.
`template-fanout@local-simulated`), which says when the pool is simulated.

The pool file is read once, when the Method is made: `pool` is the offered sub-pool, and its
`simulated`, `providers` and `price_dates` (conductor/workers/pool.py's one rule each) travel
with the Method to every task that runs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conductor.config import ExecutionConfig
from conductor.effort import Effort
from conductor.planners import Planner
from conductor.run_options import RunOptions
from conductor.workers.pool import Pool, PoolFile, read_pool_file
from conductor.workers.registry import BuildContext


@dataclass(frozen=True)
class Method:
    # A Planner. Typed Any because Prefect builds a schema of a flow's parameters, and pydantic
    # cannot build a validator for a Protocol; __post_init__ checks it instead.
    planner: Any
    pool_file: Path
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    offer: tuple[str, ...] | None = None  # worker ids offered, in order; None: the whole file
    # Which repeat of an evaluation this is: repeat r > 0 gives each simulated worker fresh draws
    # (`PoolFile.reseeded`), the problems' shared difficulty staying; real workers vary on their own.
    repeat: int = 0
    # the effort level stated in the Conductor's prompt of every question (None: none stated); it
    # is in the name, so each level is its own row of an evaluation
    effort: Effort | None = None
    name: str = field(init=False)
    pool: PoolFile = field(init=False)  # the offered workers, read once

    def __post_init__(self) -> None:
        if not isinstance(self.planner, Planner):
            raise TypeError(f"{self.planner!r} is not a Planner (it needs `name` and `plan`)")
        whole = read_pool_file(self.pool_file)
        pool = whole.offered(self.offer).for_repeat(self.repeat)
        label = whole.name or Path(self.pool_file).stem
        if pool.simulated and "simulated" not in label:
            label += "-simulated"
        object.__setattr__(self, "pool", pool)
        at = "" if self.effort is None else f"+effort-{Effort(self.effort)}"
        object.__setattr__(self, "name", f"{self.planner.name}{at}@{label}")

    @property
    def simulated(self) -> bool:
        """Whether the offered pool is simulated (an environment, not a benchmark)."""
        return self.pool.simulated

    def run_options(self, run_id: str | None = None) -> RunOptions:
        """How each question of this Method is run (its execution settings and effort)."""
        return RunOptions(config=self.execution, run_id=run_id, effort=self.effort)

    def open_pool(self, context: BuildContext | None = None) -> Pool:
        """Build the workers (use as `async with method.open_pool(ctx) as pool`)."""
        return Pool.from_specs(self.pool.workers, context)
