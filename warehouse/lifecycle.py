"""A run row's life, in one place: `running` when the run starts, then `finished`, `failed` (an
exception, whose first line becomes the row's notes) or `cancelled` (a stop from outside: Ctrl-C,
SIGTERM, a cancelled event loop; conductor/stops.py). A process killed outright cannot write its
end: its row stays `running` with its host and pid, and the next run's `abandon_dead_runs` marks
it `abandoned`. So a row is written before any work, and never left missing.

One lifecycle may hold several rows that start and end together (an evaluation: its parent row
and one per method and repeat); each change is then one write of them all.

The writer is the caller's: a flow passes its `record-runs` task (retried), a process that owns
the warehouse file `write_to(path)`."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from conductor.stops import is_stop
from warehouse.records import Run
from warehouse.store import TraceStore

RunWriter = Callable[[list[Run]], object]  # writes these rows (upserts), in one go


def run_here(run_id: str, kind: str, **fields: Any) -> Run:
    """A `running` row of this process (its host and pid find it if it dies), started now."""
    return Run(run_id=run_id, kind=kind, status="running", host=socket.gethostname(), pid=os.getpid(),
               started_at=datetime.now(UTC), **fields)


def write_to(warehouse_path: str | Path) -> RunWriter:
    """A writer that upserts the rows into the warehouse file (opened for each write)."""
    def write(runs: list[Run]) -> None:
        with TraceStore(Path(warehouse_path)) as store:
            store.write_runs(runs)
    return write


def end_status(exc: BaseException) -> str:
    """The status an exception ends a run with: `cancelled` for a stop, else `failed`."""
    return "cancelled" if is_stop(exc) else "failed"


def ended(run: Run, status: str, notes: str | None = None) -> Run:
    """The row at its end (notes kept unless new ones are given)."""
    return run.model_copy(update={"status": status, "finished_at": datetime.now(UTC),
                                  **({"notes": notes[:2000]} if notes else {})})


class RunLifecycle:
    """`with RunLifecycle(run, write) as life:` writes the row `running` on entry and its end on
    exit: `finished`, unless the body said otherwise with `end`, `failed` on an exception,
    `cancelled` on a stop (Ctrl-C, SIGTERM); the exception goes on. `update` changes fields the end
    will write (an MLflow run id known only at the end). Given several rows, it writes and ends
    them together."""

    def __init__(self, runs: Run | Sequence[Run], write: RunWriter) -> None:
        rows = [runs] if isinstance(runs, Run) else list(runs)
        if not rows:
            raise ValueError("a RunLifecycle needs a row")
        self.runs = [r.model_copy(update={"status": "running", "finished_at": None}) for r in rows]
        self.write = write
        self.done = False

    @property
    def run(self) -> Run:
        """The row (the first, where there are several)."""
        return self.runs[0]

    def __enter__(self) -> RunLifecycle:
        self.write(self.runs)
        return self

    def update(self, **fields: Any) -> None:
        self.runs = [r.model_copy(update=fields) for r in self.runs]

    def end(self, status: str, notes: str | None = None) -> Run:
        """Write the rows' end now (once); the exit then writes nothing more."""
        if not self.done:
            self.runs, self.done = [ended(r, status, notes) for r in self.runs], True
            self.write(self.runs)
        return self.run

    def end_with(self, exc: BaseException | None) -> Run:
        """The end an exception (or none) makes: `failed`, `cancelled` for a stop, else `finished`."""
        if exc is None:
            return self.end("finished")
        return self.end(end_status(exc), f"{type(exc).__name__}: {exc}")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.end_with(exc)
