"""Evaluation as Prefect tasks: solve one benchmark with one Method in one repeat (traces to
the warehouse in batches, as `tasks.solve` does), fill the costs table, and read the figures
an evaluation reports. Thin: the work is in conductor.evaluation and warehouse.evaluation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from conductor.data.schema import Problem
from conductor.methods import Method
from tasks.solve import TraceBatches, _solve
from tasks.traces import warehouse_file
from warehouse import evaluation as wh
from warehouse.store import TraceStore

# Benchmark x method tasks run in threads of one process, and DuckDB takes one writer at a
# time: their batches are written one after another.
_WRITE_LOCK = threading.Lock()


class LockedBatches(TraceBatches):
    def flush(self) -> None:
        with _WRITE_LOCK:
            super().flush()


# No retries (every call retries already; a rerun would pay for every call again). NO_CACHE: a
# solve is an experiment.
@task(name="solve-benchmark", cache_policy=NO_CACHE, task_run_name="{benchmark}-{method_name}-r{repeat}")
def solve_benchmark(problems: list[Problem], method: Method, run_id: str, benchmark: str, method_name: str,
                    repeat: int, seed: int = 0, db_path: str | None = None, batch_size: int = 100) -> int:
    """Solve one benchmark's problems with one Method in one repeat; returns how many were recorded."""
    sink = LockedBatches(db_path, batch_size)
    asyncio.run(_solve(problems, method, run_id, seed, sink))
    return sink.recorded


@task(name="fill-costs", retries=2, retry_delay_seconds=[1, 5], cache_policy=NO_CACHE)
def fill_costs(run_id: str, db_path: str | None = None) -> int:
    with _WRITE_LOCK, TraceStore(warehouse_file(db_path)) as store:
        return wh.fill_costs(store, run_id)


@task(name="evaluation-figures", retries=2, retry_delay_seconds=[1, 5], cache_policy=NO_CACHE)
def evaluation_figures(run_id: str, db_path: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Everything the table, the cost report and the plots need, read once."""
    with _WRITE_LOCK, TraceStore(warehouse_file(db_path)) as store:
        return {
            "runs": wh.runs_of(store, run_id),
            "scores": wh.repeat_scores(store, run_id),
            "by_benchmark": wh.costs_by_benchmark(store, run_id),
            "by_worker": wh.costs_by_worker(store, run_id),
            "usage": wh.worker_usage(store, run_id),
            "mix": wh.workflow_mix(store, run_id),
            "outcomes": wh.question_outcomes(store, run_id),
        }
