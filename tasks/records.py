"""Warehouse writes other than traces, as Prefect tasks (upserts by key: a retry is harmless)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from conductor.data.schema import Problem
from tasks.traces import warehouse_file, write_lock
from warehouse.lifecycle import RunWriter
from warehouse.records import Run
from warehouse.store import TraceStore


@task(name="record-runs", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def record_runs(runs: Sequence[Run], db_path: str | None = None) -> None:
    """Run rows in one write (one DuckDB open, however many rows)."""
    with write_lock(), TraceStore(warehouse_file(db_path)) as store:
        store.write_runs(list(runs))


def run_writer(db_path: str | None = None) -> RunWriter:
    """How a flow's RunLifecycle writes its rows: through the `record-runs` task (retried, shown in
    the flow run) while the run goes on, and a failed or cancelled end directly, since a flow that
    is failing or being cancelled may not start another task."""
    def write(runs: list[Run]) -> None:
        if all(r.status in ("running", "finished") for r in runs):
            record_runs(runs, db_path)
        else:
            record_runs.fn(runs, db_path)
    return write


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
    """Mark `abandoned` the runs of this host whose process is gone (a killed earlier run), and
    their Prefect flow runs `Crashed` where this Prefect API knows them (they stay Running otherwise:
    a killed process cannot report its end)."""
    with TraceStore(warehouse_file(db_path)) as store:
        abandoned = store.abandon_dead_runs()
        params = store.run_params(abandoned)
    crash_flow_runs([p[FLOW_RUN_PARAM] for p in params.values() if p.get(FLOW_RUN_PARAM)])
    return abandoned


FLOW_RUN_PARAM = "prefect_flow_run_id"  # the key under which a run records its Prefect flow run


def crash_flow_runs(flow_run_ids: list[str]) -> list[str]:
    """Set these flow runs `Crashed` if they are still running; returns those changed. A flow run this
    API does not know (another server, a temporary server's database since removed) is left alone."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound
    from prefect.states import Crashed

    changed: list[str] = []
    if not flow_run_ids:
        return changed
    with get_client(sync_client=True) as client:
        for flow_run_id in flow_run_ids:
            try:
                flow_run = client.read_flow_run(flow_run_id)
            except ObjectNotFound:
                continue
            if flow_run.state is not None and not flow_run.state.is_final():
                client.set_flow_run_state(flow_run_id, Crashed(message="its process died (found by a later run)"),
                                          force=True)
                changed.append(flow_run_id)
    return changed
