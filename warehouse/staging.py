"""Many producers, one writer.

DuckDB lets one process write a file. Flows and workers that produce traces in parallel each
*stage* their batches instead: a directory `batch-<id>/` holding `traces.parquet`,
`steps.parquet` and `calls.parquet`, written under a temporary name, fsynced, then renamed into
place with `os.replace` (atomic on POSIX: a batch is either fully there or not there at all).

One writer (`ingest_staged`, `conductor warehouse ingest`) ingests each batch in one transaction
that also records its id in `ingested_batches`, and only then deletes the directory. A crash
before the commit leaves the batch staged and nothing written; a crash after it leaves a batch
whose id is recorded, which the next run deletes without writing it again. Writes are
idempotent by question anyway, so even a batch ingested twice could not duplicate a trace.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from conductor.trace import Trace
from warehouse.rows import CALL_SCHEMA, STEP_SCHEMA, TRACE_SCHEMA, Batch, flatten
from warehouse.store import Progress, TraceStore

PARTS = {"traces": TRACE_SCHEMA, "steps": STEP_SCHEMA, "calls": CALL_SCHEMA}
BATCH_PREFIX = "batch-"
TMP_PREFIX = ".tmp-"


@dataclass
class IngestReport:
    batches: int = 0
    skipped: int = 0  # already ingested (a crash between commit and delete), deleted now
    traces: int = 0
    steps: int = 0
    calls: int = 0


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def stage_batch(staging_dir: str | Path, batch: Batch, batch_id: str | None = None) -> Path:
    """Write `batch` as one staged batch directory, atomically. Staging the same `batch_id`
    twice (a retried task) keeps the first copy."""
    root = Path(staging_dir)
    root.mkdir(parents=True, exist_ok=True)
    batch_id = batch_id or f"{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    final = root / f"{BATCH_PREFIX}{batch_id}"
    tmp = root / f"{TMP_PREFIX}{batch_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        for name, table in (("traces", batch.traces), ("steps", batch.steps), ("calls", batch.calls)):
            path = tmp / f"{name}.parquet"
            pq.write_table(table, path, compression="zstd")
            with open(path, "rb") as fh:
                os.fsync(fh.fileno())
        _fsync_dir(tmp)
        try:
            os.replace(tmp, final)
        except OSError:
            if not final.exists():
                raise
            shutil.rmtree(tmp)  # the same batch id is staged already
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def stage_traces(staging_dir: str | Path, traces: Iterable[Trace], *, batch_id: str | None = None) -> Path:
    """Flatten in this process (so the single writer does no Python work per trace) and stage."""
    return stage_batch(staging_dir, flatten(traces), batch_id)


def pending(staging_dir: str | Path) -> list[Path]:
    """Staged batches waiting, oldest name first (temporary directories are never listed)."""
    root = Path(staging_dir)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(BATCH_PREFIX))


def read_batch(path: Path) -> Batch:
    tables = {name: pq.read_table(path / f"{name}.parquet", schema=schema) for name, schema in PARTS.items()}
    return Batch(tables["traces"], tables["steps"], tables["calls"])


def clean_stale_tmp(staging_dir: str | Path, max_age_s: float = 3600.0) -> int:
    """Remove temporary directories a crashed producer left (never renamed, so never a batch)."""
    root = Path(staging_dir)
    removed = 0
    if not root.is_dir():
        return 0
    for p in root.iterdir():
        if p.name.startswith(TMP_PREFIX) and time.time() - p.stat().st_mtime > max_age_s:
            shutil.rmtree(p, ignore_errors=True)
            removed += 1
    return removed


def ingest_staged(store: TraceStore, staging_dir: str | Path, *, limit: int | None = None,
                  group_rows: int = 500_000, on_progress: Progress | None = None) -> IngestReport:
    """Ingest staged batches, deleting each once committed. Batches are grouped into one
    transaction until `group_rows` rows (a commit costs a WAL flush; 1 = one batch each)."""
    report = IngestReport()
    group: list[tuple[str, Path, Batch]] = []

    def flush() -> None:
        results = store.write_batches([(bid, b) for bid, _, b in group], on_progress=on_progress)
        for (_, path, _), r in zip(group, results):
            shutil.rmtree(path, ignore_errors=True)  # only after the commit
            report.skipped += r.skipped
            report.batches += not r.skipped
            report.traces += r.traces
            report.steps += r.steps
            report.calls += r.calls
        group.clear()

    for path in pending(staging_dir)[:limit]:
        batch_id = path.name[len(BATCH_PREFIX):]
        if store.batch_ingested(batch_id):  # committed before a crash, not yet deleted
            shutil.rmtree(path, ignore_errors=True)
            report.skipped += 1
            continue
        group.append((batch_id, path, read_batch(path)))
        if sum(b.rows for _, _, b in group) >= group_rows:
            flush()
    if group:
        flush()
    return report
