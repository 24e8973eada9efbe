"""Solving as a Prefect task: a thin wrapper over `conductor.solve.solve_many` that hands
traces to the warehouse in batches as questions finish, so a run that dies keeps what it did."""

from __future__ import annotations

import asyncio
import threading

from prefect import task
from prefect.cache_policies import NO_CACHE

from conductor.data.schema import Problem
from conductor.methods import Method
from conductor.executor import RunOptions
from conductor.solve import solve_many
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.registry import BuildContext
from tasks.traces import record_traces


class TraceBatches:
    """Collects finished traces and records every `size` of them (direct or staged, as
    `record_traces` decides); `flush` records the rest."""

    def __init__(self, db_path: str | None, size: int) -> None:
        self.db_path, self.size = db_path, size
        self.pending: list[Trace] = []
        self.recorded = 0

    def add(self, trace: Trace) -> None:
        self.pending.append(trace)
        if len(self.pending) >= self.size:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            record_traces.fn(self.pending, self.db_path)
            self.recorded += len(self.pending)
            self.pending = []

    def finish(self) -> None:
        """The solve is over (or failed): record the rest (a sink may hand it off instead)."""
        self.flush()


# Solves in progress, so that a Ctrl-C handler (in whichever thread receives it) can cancel them;
# and whether solving was stopped, so that a solve not started yet (a task waiting for a thread)
# starts none, and the flow knows to end its runs as cancelled.
_RUNNING: set[tuple[asyncio.AbstractEventLoop, asyncio.Task[object]]] = set()
_RUNNING_LOCK = threading.Lock()
_STOPPED = threading.Event()


def stop_solving() -> int:
    """Cancel every solve in progress and start none until `allow_solving` (thread-safe); each
    keeps the traces it finished. Returns how many were running."""
    _STOPPED.set()
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for loop, task_ in running:
        loop.call_soon_threadsafe(task_.cancel)
    return len(running)


def solving_stopped() -> bool:
    return _STOPPED.is_set()


def allow_solving() -> None:
    """Solving may start again (a command that stops solving on Ctrl-C calls this as it begins)."""
    _STOPPED.clear()


async def _solve(problems: list[Problem], method: Method, run_id: str, seed: int, sink: TraceBatches) -> list[Trace]:
    if _STOPPED.is_set():
        raise asyncio.CancelledError  # stopped before this solve began: it answers nothing
    me = (asyncio.get_running_loop(), asyncio.current_task())
    with _RUNNING_LOCK:
        _RUNNING.add(me)  # type: ignore[arg-type]
    try:
        return await _solve_all(problems, method, run_id, seed, sink)
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(me)  # type: ignore[arg-type]


async def _solve_all(problems: list[Problem], method: Method, run_id: str, seed: int,
                     sink: TraceBatches) -> list[Trace]:
    async with method.open_pool(BuildContext(problems=problems)) as pool:
        try:
            return await solve_many([Task.of(p) for p in problems], pool, method.planner,
                                    RunOptions(config=method.execution, run_id=run_id), seed=seed, on_done=sink.add)
        finally:
            sink.finish()  # what finished before a failure or a Ctrl-C is kept


# No task retries: every worker call already retries, and a rerun of the whole task would pay
# for every call again. NO_CACHE: a solve is an experiment, not a pure function of its inputs.
@task(name="solve-problems", cache_policy=NO_CACHE, task_run_name="solve-{run_id}")
def solve_problems(problems: list[Problem], method: Method, run_id: str, seed: int = 0, db_path: str | None = None,
                   batch_size: int = 50) -> int:
    """Solve every problem, recording traces in batches of `batch_size`; returns how many."""
    sink = TraceBatches(db_path, batch_size)
    asyncio.run(_solve(problems, method, run_id, seed, sink))
    return sink.recorded
