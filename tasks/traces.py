"""Prefect tasks that hand traces to the warehouse (thin: the work is in `warehouse/`).

One process that owns the warehouse file writes directly. In a deployment where several
processes produce traces at once, set `CONDUCTOR_WAREHOUSE_STAGING` (or pass `staging_dir`):
each task then stages an atomic Parquet batch there, and one `ingest_staged_traces` run (or
`conductor warehouse ingest DIR`) writes them. Either way a retry cannot duplicate a trace:
the store replaces a question's rows by its trace id.
"""

from __future__ import annotations

import os
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from conductor.config import Settings
from conductor.trace import Trace
from warehouse.staging import ingest_staged, stage_traces
from warehouse.store import TraceStore

STAGING_ENV = "CONDUCTOR_WAREHOUSE_STAGING"


class Recorded(BaseModel):
    mode: str  # "direct" or "staged"
    questions: int
    traces: int = 0  # rows written (rounds included); 0 when staged
    steps: int = 0
    calls: int = 0
    batch: str | None = None  # the staged batch directory


def warehouse_file(db_path: str | Path | None) -> Path:
    """The given warehouse file, or the profile's default."""
    return Path(db_path) if db_path else Settings().warehouse_path


# NO_CACHE: hashing a large list of traces for a cache key costs more than the write.
@task(name="record-traces", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def record_traces(
    traces: list[Trace],
    db_path: str | None = None,
    staging_dir: str | None = None,
) -> Recorded:
    """Write a batch of depth-0 traces (with their rounds, steps, calls), or stage it."""
    staging = staging_dir or os.environ.get(STAGING_ENV)
    if staging:
        path = stage_traces(staging, traces)
        return Recorded(mode="staged", questions=len(traces), batch=str(path))
    with TraceStore(warehouse_file(db_path)) as store:
        r = store.write_traces(traces)
    return Recorded(mode="direct", questions=len(traces), traces=r.traces, steps=r.steps, calls=r.calls)


@task(name="ingest-staged-traces", retries=2, retry_delay_seconds=[5, 30], cache_policy=NO_CACHE)
def ingest_staged_traces(staging_dir: str, db_path: str | None = None) -> Recorded:
    """The one writer of a multi-process deployment: ingest every staged batch."""
    with TraceStore(warehouse_file(db_path)) as store:
        rep = ingest_staged(store, staging_dir)
    return Recorded(mode="ingested", questions=0, traces=rep.traces, steps=rep.steps, calls=rep.calls)
