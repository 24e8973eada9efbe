"""Prefect tasks that hand traces to the warehouse (thin: the work is in `warehouse/`).

One process that owns the warehouse file writes directly. In a deployment where several
processes produce traces at once, set `CONDUCTOR_WAREHOUSE_STAGING` (the settings'
`warehouse_staging`, or pass `staging_dir`):
each task then stages an atomic Parquet batch there, and one `ingest_staged_traces` run (or
`conductor warehouse ingest DIR`) writes them. Either way a retry cannot duplicate a trace:
the store replaces a question's rows by its trace id.

A solve hands its finished traces to a `TraceBatches`, which writes every batch itself, or
submits it to a `TraceWriter` (a thread the evaluation flow owns, so that solving goes on while
DuckDB writes).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from conductor.config import Settings
from conductor.trace import Trace
from warehouse.staging import ingest_staged, stage_traces
from warehouse.store import TraceStore

STAGING_ENV = "CONDUCTOR_WAREHOUSE_STAGING"  # sets the settings' `warehouse_staging`


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
    staging = staging_dir or Settings().warehouse_staging
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


# One lock per process: DuckDB takes one writer at a time, and every flow of this process (two
# evaluations, a nightly's stages, Dask's worker threads) writes through connections of its own.
# A lock owned by one flow could not keep another flow's writes out; hence module-level.
_WRITE_LOCK = threading.Lock()


def write_lock() -> threading.Lock:
    """The process's warehouse write lock, reached through a function: a task's function is
    pickled by value when it runs on Dask (prefect-dask), and a lock named in it cannot be."""
    return _WRITE_LOCK


def write_batch(traces: list[Trace], db_path: str | None) -> None:
    """One batch written (or staged, as `record_traces` decides), after any other write of this process."""
    with write_lock():
        record_traces.fn(traces, db_path)


class TraceWriter:
    """A writer thread that a flow owns and hands to its tasks: `submit` gives it a batch and
    returns at once, so an event loop keeps solving while DuckDB writes (a write of 100 traces
    blocked every question in flight for ~0.3 s: docs/evaluation.md, "Speed"); batches are written
    one at a time, in the order given. `drain` waits for every batch submitted so far and raises a
    failed write; the flow drains before it reads the warehouse. Used as a context manager, the
    thread ends with the flow. Only threads of the owner's process can use it (it is not shipped
    to a Dask worker: tasks there write their batches themselves)."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trace-writer")
        self._lock = threading.Lock()
        self._submitted: list[Future[None]] = []

    def submit(self, traces: list[Trace], db_path: str | None) -> Future[None]:
        with self._lock:
            written = self._executor.submit(write_batch, traces, db_path)
            self._submitted.append(written)
        return written

    def drain(self) -> int:
        """Wait for every batch submitted since the last drain; raises the first failed write
        after waiting for all of them. Returns how many batches were waited for."""
        with self._lock:
            writes, self._submitted = self._submitted, []
        failed = [e for e in (w.exception() for w in writes) if e is not None]
        if failed:
            raise RuntimeError(f"{len(failed)} of {len(writes)} trace batches were not written") from failed[0]
        return len(writes)

    def close(self) -> None:
        """Ends the thread once every submitted batch is written (an undrained failure is dropped:
        the owner drains first)."""
        self._executor.shutdown(wait=True)

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class TraceBatches:
    """Collects a solve's finished traces and hands every `size` of them to the warehouse: written
    here (`writer=None`) or submitted to a `TraceWriter`. `handed`: traces given to be written;
    `recorded`: traces written (with a writer, counted as its batches complete). `flush` hands
    the rest and waits until all this sink's batches are written, raising a failed write.
    `finish` (the solve is over, or failed, or was cancelled) does the same, or with
    `wait_at_end=False` hands the rest and returns at once: the next task starts solving while
    this batch is written, and the writer's owner waits for it (`TraceWriter.drain`)."""

    def __init__(self, db_path: str | None, size: int, *, writer: TraceWriter | None = None,
                 wait_at_end: bool = True, on_hand: Callable[[int], None] | None = None) -> None:
        self.db_path, self.size, self.writer, self.wait_at_end = db_path, size, writer, wait_at_end
        # told `handed` as each full batch is handed (a solve's progress); not for the rest handed at
        # the end, which after a Ctrl-C would add a line to the few the command prints
        self.on_hand = on_hand
        self.pending: list[Trace] = []
        self.handed = 0
        self.recorded = 0
        self._writes: list[Future[None]] = []
        self._count_lock = threading.Lock()  # a batch done before its callback is added counts here

    def add(self, trace: Trace) -> None:
        self.pending.append(trace)
        if len(self.pending) >= self.size:
            self._hand()
            if self.on_hand is not None:
                self.on_hand(self.handed)

    def _hand(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        self.handed += len(batch)
        if self.writer is None:
            write_batch(batch, self.db_path)
            self.recorded += len(batch)
            return
        written = self.writer.submit(batch, self.db_path)
        written.add_done_callback(lambda w: self._count(w, len(batch)))
        self._writes.append(written)

    def _count(self, written: Future[None], n: int) -> None:
        if written.exception() is None:
            with self._count_lock:
                self.recorded += n

    def flush(self) -> None:
        self._hand()
        writes, self._writes = self._writes, []
        for w in writes:
            w.result()

    def finish(self) -> None:
        if self.wait_at_end:
            self.flush()
        else:
            self._hand()
