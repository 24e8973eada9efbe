"""Warehouse writes other than traces, as Prefect tasks (upserts by key: a retry is harmless)."""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from conductor.data.schema import Problem
from tasks.traces import warehouse_file
from warehouse.records import Run
from warehouse.store import TraceStore


@task(name="record-run", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def record_run(run: Run, db_path: str | None = None) -> None:
    with TraceStore(warehouse_file(db_path)) as store:
        store.write_runs([run])


@task(name="record-problems", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def record_problems(problems: list[Problem], db_path: str | None = None) -> int:
    with TraceStore(warehouse_file(db_path)) as store:
        return store.write_problems(problems)


@task(name="run-summary", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def run_summary(run_id: str, db_path: str | None = None) -> list[dict[str, Any]]:
    """The run's rows of `v_run_summary` (the warehouse computes accuracy and cost, once)."""
    with TraceStore(warehouse_file(db_path)) as store:
        return store.run_summary(run_id)


@task(name="abandon-dead-runs", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def abandon_dead_runs(db_path: str | None = None) -> list[str]:
    """Mark `abandoned` the runs of this host whose process is gone (a killed earlier run)."""
    with TraceStore(warehouse_file(db_path)) as store:
        return store.abandon_dead_runs()
