"""Evaluation as Prefect tasks: solve one benchmark with one Method in one repeat (traces to
the warehouse in batches, as `tasks.solve` does), fill the costs table, and read the figures
an evaluation reports. Thin: the work is in conductor.evaluation and warehouse.evaluation."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prefect import get_client, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.concurrency.sync import concurrency

from conductor.data.schema import Problem
from conductor.evaluation.report import EvaluationReport
from conductor.methods import Method
from tasks.solve import Cancellation, SolveRun, solve_all
from tasks.traces import TraceBatches, TraceWriter, warehouse_file, write_lock
from warehouse import evaluation as wh
from warehouse.records import DatasetManifest
from warehouse.store import TraceStore

LEASE_S = 60.0  # seconds a killed holder keeps its provider slots (the server's minimum)


@dataclass(frozen=True, kw_only=True)
class BenchmarkSolve(SolveRun):
    """One solve task of an evaluation: a method's repeat over one benchmark (or every one's:
    `benchmark="all"`), with the provider limits it holds a slot of."""

    benchmark: str
    method_name: str
    repeat: int
    batch_size: int = 100
    limits: tuple[str, ...] = ()


# No retries (every call retries already; a rerun would pay for every call again). NO_CACHE: a
# solve is an experiment.
@task(name="solve-benchmark", cache_policy=NO_CACHE, task_run_name="{job.benchmark}-{job.method_name}-r{job.repeat}")
def solve_benchmark(problems: list[Problem], method: Method, job: BenchmarkSolve, writer: TraceWriter | None = None,
                    cancellation: Cancellation | None = None) -> int:
    """Solve one benchmark's problems (or every benchmark's: `benchmark="all"`; traces carry their
    source) with one Method in one repeat; returns how many traces were handed to the warehouse.
    With the flow's `writer` the batches are submitted to it and the task returns once the last
    is handed over (the flow's `writer.drain()` waits for them); without one (a Dask worker) the
    task writes them itself and returns when all are written.
    `job.limits`: Prefect global concurrency limits (one per provider the method's pool uses), one
    slot of each held for the whole solve; strict: a missing limit is an error, never unbounded.
    `cancellation.stop()` (Ctrl-C) ends the solve early: the task returns what finished, and the
    flow, seeing `cancellation.stopped`, cancels its runs."""
    # Progress, one line a batch (the Prefect UI's task log and the terminal): an evaluation of
    # hundreds of questions over real APIs runs for many minutes.
    logger, total = get_run_logger(), len(problems)
    sink = TraceBatches(job.db_path, job.batch_size, writer=writer, wait_at_end=writer is None,
                        on_hand=lambda n: logger.info("%d of %d questions answered", n, total))
    # The shortest lease the server takes (60 s, renewed while held): a process killed with -9
    # holds its slots until the lease expires, and Prefect's default (300 s) stalled the next
    # nightly's evaluation for five minutes (the kill drill, tests/test_nightly_kill_drill.py).
    held = (concurrency(list(job.limits), occupy=1, strict=True, lease_duration=LEASE_S) if job.limits
            else contextlib.nullcontext())
    with held:
        try:
            asyncio.run(solve_all(problems, method, job.run_id, job.seed, sink, cancellation))
        except asyncio.CancelledError:
            if cancellation is None or not cancellation.stopped:
                raise
            # Ctrl-C: what finished is handed to the warehouse, and the task ends normally with
            # its count; the flow sees `cancellation.stopped` and cancels its runs.
    return sink.handed


PROVIDER_LIMIT_PREFIX = "conductor-provider-"


def provider_limit_name(provider: str) -> str:
    return f"{PROVIDER_LIMIT_PREFIX}{provider}"


@task(name="ensure-provider-limits", retries=2, retry_delay_seconds=[1, 5], cache_policy=NO_CACHE)
def ensure_provider_limits(providers: Sequence[str], default: int, explicit: Mapping[str, int]) -> dict[str, int]:
    """Create `conductor-provider-<provider>` for each provider (idempotent): a missing limit gets
    `explicit[provider]` or `default`; an existing one is set to `explicit[provider]` when given,
    else left as it is (an operator may have tuned it). Returns name -> limit on the server."""
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    out: dict[str, int] = {}
    with get_client(sync_client=True) as client:
        for provider in sorted(set(providers)):
            name, want = provider_limit_name(provider), explicit.get(provider)
            try:
                current = client.read_global_concurrency_limit_by_name(name)
            except ObjectNotFound:
                try:
                    client.create_global_concurrency_limit(
                        GlobalConcurrencyLimitCreate(name=name, limit=want or default))
                except ObjectAlreadyExists:  # another flow made it meanwhile
                    pass
                current = client.read_global_concurrency_limit_by_name(name)
            if want is not None and current.limit != want:
                client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=want))
                current = client.read_global_concurrency_limit_by_name(name)
            out[name] = current.limit
    return out


def open_mlflow_in_background() -> threading.Thread:
    """Import MLflow and open a local store's evaluation experiment on a thread while the calls
    run, so that logging the finished evaluation does not wait for them: in a fresh `conductor
    eval` process that took ~1.4 s after the last call, ~5 s when the store is new. Not a daemon:
    a process ending early waits for a new store's tables to be made whole (local work, bounded;
    a tracking server is not contacted). A failure is left to `log_evaluation`, which opens the
    store again, with retries, and reports what fails."""

    def open_store() -> None:
        try:
            from registry.evaluation import prepare_evaluation_store

            prepare_evaluation_store()
        except Exception:  # noqa: BLE001 - log_evaluation meets it again and reports it
            logging.getLogger(__name__).debug("opening MLflow early failed", exc_info=True)

    thread = threading.Thread(target=open_store, name="mlflow-open")
    thread.start()
    return thread


@task(name="log-evaluation-to-mlflow", retries=2, retry_delay_seconds=[1, 5], cache_policy=NO_CACHE)
def log_evaluation(evaluation_id: str, params: Mapping[str, Any], scores: Sequence[Mapping[str, Any]],
                   report: EvaluationReport) -> dict[str, str]:
    from registry.evaluation import EXPERIMENT
    from registry.evaluation import log_evaluation as log

    logged = log(evaluation_id, params=params, scores=scores, report=report)
    return {"run_id": logged.run_id, "experiment": EXPERIMENT, "experiment_id": logged.experiment_id,
            "tracking_uri": logged.tracking_uri, "artifact_uri": logged.artifact_uri}


@task(name="start-evaluation", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def start_evaluation(problems: list[Problem], db_path: str | None = None,
                     dataset: DatasetManifest | None = None) -> list[str]:
    """Everything an evaluation writes before its first call, in one Prefect task and one DuckDB
    open (it was four of each, ~0.1 s apiece): mark this host's dead runs `abandoned` (and their
    flow runs Crashed, as `tasks.records.abandon_dead_runs` does), and store the problems and the
    data set they form. Upserts: a retry is harmless. Returns the abandoned run ids. (The run rows are the
    flow's RunLifecycle's.)"""
    from tasks.records import FLOW_RUN_PARAM, crash_flow_runs

    with write_lock(), TraceStore(warehouse_file(db_path)) as store:
        abandoned = store.abandon_dead_runs()
        params = store.run_params(abandoned)
        store.write_problems(problems)
        if dataset is not None:
            store.write_dataset(dataset)
    crash_flow_runs([p[FLOW_RUN_PARAM] for p in params.values() if p.get(FLOW_RUN_PARAM)])
    return abandoned


@task(name="finish-evaluation", retries=2, retry_delay_seconds=[1, 5], cache_policy=NO_CACHE)
def finish_evaluation(evaluation_id: str, db_path: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """After the runs ended (the views count finished runs only), in one Prefect task and one
    DuckDB open: the costs table and the figures (as `fill_costs` and `evaluation_figures`)."""
    with write_lock(), TraceStore(warehouse_file(db_path)) as store:
        wh.fill_costs(store, evaluation_id)
        return _figures(store, evaluation_id)


@task(name="fill-costs", retries=2, retry_delay_seconds=[1, 5], cache_policy=NO_CACHE)
def fill_costs(run_id: str, db_path: str | None = None) -> int:
    with write_lock(), TraceStore(warehouse_file(db_path)) as store:
        return wh.fill_costs(store, run_id)


@task(name="evaluation-figures", retries=2, retry_delay_seconds=[1, 5], cache_policy=NO_CACHE)
def evaluation_figures(run_id: str, db_path: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Everything the table, the cost report and the plots need, read once."""
    with write_lock(), TraceStore(warehouse_file(db_path)) as store:
        return _figures(store, run_id)


def _figures(store: TraceStore, run_id: str) -> dict[str, list[dict[str, Any]]]:
    return {
        "runs": wh.runs_of(store, run_id),
        "scores": wh.repeat_scores(store, run_id),
        "by_benchmark": wh.costs_by_benchmark(store, run_id),
        "by_worker": wh.costs_by_worker(store, run_id),
        "usage": wh.worker_usage(store, run_id),
        "mix": wh.workflow_mix(store, run_id),
        "outcomes": wh.question_outcomes(store, run_id),
        "outages": wh.outages(store, run_id),
    }
