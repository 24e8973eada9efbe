"""A run row's life, in one place: `running` when the run starts, then `finished`, `failed` (an
exception, whose first line becomes the row's notes) or `cancelled` (a stop from outside: Ctrl-C,
SIGTERM, a cancelled event loop; conductor/stops.py). A process killed outright cannot write its
end: its row stays `running` with its host and pid, and the next run's `abandon_dead_runs` marks
it `abandoned`. So a row is written before any work, and never left missing.

The writer is the caller's: a flow passes its `record-run` task (retried), a process that owns
the warehouse file `write_to(path)`."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from conductor.stops import is_stop
from warehouse.records import Run
from warehouse.store import TraceStore

RunWriter = Callable[[Run], object]


def run_here(run_id: str, kind: str, **fields: Any) -> Run:
    """A `running` row of this process (its host and pid find it if it dies), started now."""
    return Run(run_id=run_id, kind=kind, status="running", host=socket.gethostname(), pid=os.getpid(),
               started_at=datetime.now(UTC), **fields)


def write_to(warehouse_path: str | Path) -> RunWriter:
    """A writer that upserts the row into the warehouse file (opened for each write)."""
    def write(run: Run) -> None:
        with TraceStore(Path(warehouse_path)) as store:
            store.write_runs([run])
    return write


def end_status(exc: BaseException) -> str:
    """The status an exception ends a run with: `cancelled` for a stop, else `failed`."""
    return "cancelled" if is_stop(exc) else "failed"


def ended_by(run: Run, exc: BaseException) -> Run:
    """The row ended by an exception: its status, and the exception as its notes."""
    return ended(run, end_status(exc), f"{type(exc).__name__}: {exc}")


def ended(run: Run, status: str, notes: str | None = None) -> Run:
    """The row at its end (notes kept unless new ones are given)."""
    return run.model_copy(update={"status": status, "finished_at": datetime.now(UTC),
                                  **({"notes": notes[:2000]} if notes else {})})


class RunLifecycle:
    """`with RunLifecycle(run, write) as life:` writes the row `running` on entry and its end on
    exit: `finished`, unless the body said otherwise with `end`, `failed` on an exception,
    `cancelled` on a stop (Ctrl-C, SIGTERM); the exception goes on. `update` changes fields the end will write
    (an MLflow run id known only at the end)."""

    def __init__(self, run: Run, write: RunWriter) -> None:
        self.run, self.write = run.model_copy(update={"status": "running", "finished_at": None}), write
        self.done = False

    def __enter__(self) -> RunLifecycle:
        self.write(self.run)
        return self

    def update(self, **fields: Any) -> None:
        self.run = self.run.model_copy(update=fields)

    def end(self, status: str, notes: str | None = None) -> Run:
        """Write the row's end now (once); the exit then writes nothing more."""
        if not self.done:
            self.run, self.done = ended(self.run, status, notes), True
            self.write(self.run)
        return self.run

    def end_with(self, exc: BaseException | None) -> Run:
        """The end an exception (or none) makes: `failed`, `cancelled` for a stop, else `finished`."""
        if exc is None:
            return self.end("finished")
        return self.end(end_status(exc), f"{type(exc).__name__}: {exc}")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.end_with(exc)
