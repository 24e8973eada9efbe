"""Solving as a Prefect task: a thin wrapper over `conductor.solve.solve_many` that hands
traces to the warehouse in batches as questions finish, so a run that dies keeps what it did."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from conductor.data.schema import Problem
from conductor.methods import Method
from conductor.solve import solve_many
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.registry import BuildContext
from tasks.traces import TraceBatches


@dataclass(frozen=True, kw_only=True)
class SolveRun:
    """Where a solve's traces go and how it draws: the warehouse run they belong to, the seed,
    the warehouse (None: the settings') and how many traces are handed over at a time."""

    run_id: str
    seed: int = 0
    db_path: str | None = None
    batch_size: int = 50


class Cancellation:
    """Ctrl-C for the solves of one command. The command makes one (flows/cli.py, whose SIGINT
    handler calls `stop`) and the flow hands it to each solve task. The solves run in event loops
    of other threads, where no KeyboardInterrupt arrives: `stop` cancels those in progress, and a
    solve that starts afterwards (a task still waiting for a thread) answers nothing. Each keeps
    the traces it finished; the flow reads `stopped` to end its runs as cancelled."""

    # No __dict__: Prefect stores a flow's parameters as JSON, and this one (a placeholder there)
    # is refused at once instead of walked through its lock and event.
    __slots__ = ("_lock", "_running", "_stopped")

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._running: set[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = set()

    def __reduce__(self) -> tuple[type[Cancellation], tuple[()]]:
        # prefect-dask serializes a task's arguments even for an in-process cluster, whose task
        # is then handed this very object (seen with distributed's LocalCluster(processes=False)).
        # A worker in another process gets a fresh one, which a Ctrl-C here cannot reach.
        return (Cancellation, ())

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self) -> int:
        """Cancel every solve in progress and start none (thread-safe). Returns how many were running."""
        self._stopped.set()
        with self._lock:
            running = list(self._running)
        for loop, task_ in running:
            loop.call_soon_threadsafe(task_.cancel)
        return len(running)

    def raise_if_stopped(self) -> None:
        """A KeyboardInterrupt once stopped: a flow starts no new stage after a Ctrl-C (one that
        Prefect's engine dropped, as it does when the Ctrl-C comes as a subflow ends)."""
        if self.stopped:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The current asyncio task, cancellable by `stop` while inside; stopped already, it
        raises CancelledError at once."""
        if self.stopped:
            raise asyncio.CancelledError  # stopped before this solve began: it answers nothing
        me = (asyncio.get_running_loop(), asyncio.current_task())
        with self._lock:
            self._running.add(me)  # type: ignore[arg-type]
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(me)  # type: ignore[arg-type]


async def solve_all(problems: list[Problem], method: Method, run_id: str, seed: int, sink: TraceBatches,
                    cancellation: Cancellation | None = None) -> list[Trace]:
    """Solve every problem with `method` in this event loop, each finished trace handed to `sink`
    as it finishes; what finished is handed on (`sink.finish`) even when a solve fails or is
    cancelled (`cancellation.stop()`)."""
    with cancellation.running() if cancellation is not None else contextlib.nullcontext():
        async with method.open_pool(BuildContext(problems=problems)) as pool:
            try:
                return await solve_many([Task.of(p) for p in problems], pool, method.planner,
                                        method.run_options(run_id), seed=seed,
                                        on_done=sink.add)
            finally:
                sink.finish()  # what finished before a failure or a Ctrl-C is kept


# No task retries: every worker call already retries, and a rerun of the whole task would pay
# for every call again. NO_CACHE: a solve is an experiment, not a pure function of its inputs.
@task(name="solve-problems", cache_policy=NO_CACHE, task_run_name="solve-{run.run_id}")
def solve_problems(problems: list[Problem], method: Method, run: SolveRun, cancellation: Cancellation | None = None) -> int:
    """Solve every problem, recording traces in batches of `run.batch_size`; returns how many.
    `cancellation.stop()` (Ctrl-C) cancels it: CancelledError, with the finished traces recorded."""
    sink = TraceBatches(run.db_path, run.batch_size)
    asyncio.run(solve_all(problems, method, run.run_id, run.seed, sink, cancellation))
    return sink.recorded
