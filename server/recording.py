"""Served traces go to the warehouse through staging: finished traces are batched and staged
as atomic Parquet batches (warehouse/staging.py) for the pipeline's one writer to ingest, so the
server never holds the DuckDB writer. The server's run row is written by opening the file
briefly at start and at stop, as a flow's `record-run` task does."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

from conductor.trace import Trace
from warehouse.lifecycle import RunLifecycle, run_here
from warehouse.records import Run
from warehouse.staging import stage_traces
from warehouse.store import TraceStore

log = logging.getLogger("conductor.serve")


def new_run(method: str, simulated: bool, params: dict[str, object]) -> Run:
    return run_here(f"serve-{uuid.uuid4().hex[:12]}", "serve", method=method, simulated=simulated, params=params)


def run_lifecycle(warehouse_path: Path | None, run: Run) -> RunLifecycle:
    """The server's row, `running` while it serves and `finished` when it stops (`failed` when
    serving ends in an error), written by `write_runs`: never fatal."""
    return RunLifecycle(run, lambda rows: write_runs(warehouse_path, rows))


def write_runs(warehouse_path: Path | None, runs: list[Run]) -> bool:
    """Upsert the run rows; a warehouse busy with another writer is logged, never fatal: the
    traces (staged) are what must not be lost."""
    if warehouse_path is None:
        return False
    try:
        with TraceStore(warehouse_path) as store:
            store.write_runs(runs)
        return True
    except Exception as exc:  # noqa: BLE001 - duckdb raises IOException for a held lock
        log.warning("run rows %s not written to %s: %s", [r.run_id for r in runs], warehouse_path, exc)
        return False


class TraceStager:
    """Collects finished traces and stages them every `interval_s` (one batch per flush)."""

    def __init__(self, staging_dir: Path | None, interval_s: float) -> None:
        self.staging_dir, self.interval_s = staging_dir, interval_s
        self._pending: list[Trace] = []
        self._task: asyncio.Task[None] | None = None
        self.staged = 0

    def add(self, trace: Trace) -> None:
        if self.staging_dir is not None:
            self._pending.append(trace)

    async def flush(self) -> None:
        if not self._pending or self.staging_dir is None:
            return
        batch, self._pending = self._pending, []
        try:
            await asyncio.to_thread(stage_traces, self.staging_dir, batch)
            self.staged += len(batch)
        except Exception:
            self._pending[:0] = batch  # kept for the next flush: nothing is dropped
            log.exception("staging %d traces failed; will retry", len(batch))

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            await self.flush()

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        await self.flush()
