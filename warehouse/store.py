"""TraceStore: the one writer of a warehouse file.

Every write is one transaction over Arrow tables (never row-by-row inserts). Traces are
idempotent by question: a batch first deletes whatever rows its depth-0 traces already have
(rounds, steps, calls), then inserts, all inside the same transaction, so a retried write
replaces instead of duplicating and a crash leaves either the old rows or the new ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from conductor.trace import Trace
from warehouse import migrations
from warehouse.records import RecordsMixin
from warehouse.rows import Batch, flatten, rebuild
from warehouse.sql import registered, transaction

Progress = Callable[[str], None]
# DuckDB keeps one database instance per file per process; two threads opening the same file at
# once can race in that cache ("Cannot attach ... already attached"), seen with concurrent
# evaluation tasks. Opening (and migrating) is rare and cheap: serialise it.
_OPEN_LOCK = threading.Lock()
TRACE_TABLES = ("traces", "steps", "calls")


@dataclass(frozen=True)
class WriteResult:
    traces: int  # rows in `traces` (recursion rounds included)
    steps: int
    calls: int
    replaced: int = 0  # questions that were already stored and got rewritten
    skipped: bool = False  # a staged batch already ingested

    @property
    def rows(self) -> int:
        return self.traces + self.steps + self.calls


class TraceStore(RecordsMixin):
    """Open (creating and migrating) a warehouse file. Use as a context manager, or `close()`.

    DuckDB lets one process write a file at a time; a second writer gets an error at open.
    Several producers stage Parquet batches instead (see `warehouse.staging`).
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise FileNotFoundError(f"no warehouse at {self.path}")
        with _OPEN_LOCK:
            self._open(read_only)

    def _open(self, read_only: bool) -> None:
        self.con = duckdb.connect(str(self.path), read_only=read_only)
        self.con.execute("SET TimeZone = 'UTC'")
        self.read_only = read_only
        self._lock = threading.Lock()  # one DuckDB connection is not for concurrent threads
        if read_only:
            have = migrations.current_version(self.con)
            if have != migrations.LATEST:
                self.con.close()
                raise migrations.SchemaError(
                    f"{self.path} is at schema version {have}, this code needs {migrations.LATEST}:"
                    " open it once for writing to migrate it"
                )
        else:
            migrations.migrate(self.con)

    # -- life cycle ------------------------------------------------------------------------
    def close(self) -> None:
        with _OPEN_LOCK:
            self.con.close()

    def __enter__(self) -> TraceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return migrations.current_version(self.con)

    @contextmanager
    def writing(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The store's lock and one transaction: how a module beside the store writes (its SQL)."""
        with self._lock, transaction(self.con) as con:
            yield con

    # -- reads -----------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pa.Table:
        with self._lock:
            rel = self.con.sql(sql, params=params)
            return rel.to_arrow_table() if rel is not None else pa.table({})

    def counts(self) -> dict[str, int]:
        """Row count of every table (views excluded)."""
        names = self.query(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            " AND schema_name = 'main' ORDER BY table_name"
        ).column(0).to_pylist()
        return {n: self.query(f'SELECT count(*) FROM "{n}"').column(0)[0].as_py() for n in names}

    def run_summary(self, run_id: str) -> list[dict[str, Any]]:
        """One row per benchmark of a run, from `v_run_summary`."""
        return self.query("SELECT * FROM v_run_summary WHERE run_id = ? ORDER BY benchmark", [run_id]).to_pylist()

    def get_trace(self, trace_id: str) -> Trace | None:
        """The nested Trace `trace_id` (a question or one of its rounds), or None."""
        found = self.query("SELECT root_trace_id FROM traces WHERE trace_id = ?", [trace_id])
        if found.num_rows == 0:
            return None
        root = found.column(0)[0].as_py()
        rows = [
            self.query(f"SELECT * FROM {t} WHERE root_trace_id = ?", [root]).to_pylist()
            for t in TRACE_TABLES
        ]
        tree = rebuild(root, *rows)
        return next(r for r in tree.rounds() if r.trace_id == trace_id)

    def batch_ingested(self, batch_id: str) -> bool:
        return self.query("SELECT 1 FROM ingested_batches WHERE batch_id = ?", [batch_id]).num_rows > 0

    # -- trace writes ----------------------------------------------------------------------
    def write_traces(self, traces: Iterable[Trace]) -> WriteResult:
        """Store depth-0 Traces with their rounds, steps and calls, in one transaction."""
        return self.write_batch(flatten(traces))

    def write_batch(self, batch: Batch, *, batch_id: str | None = None,
                    on_progress: Progress | None = None) -> WriteResult:
        """Write flattened rows in one transaction. With `batch_id`, the batch is recorded in
        `ingested_batches` in the same transaction, and a batch already recorded is skipped."""
        return self.write_batches([(batch_id, batch)], on_progress=on_progress)[0]

    def write_batches(self, batches: Sequence[tuple[str | None, Batch]], *,
                      on_progress: Progress | None = None) -> list[WriteResult]:
        """Several batches in ONE transaction (each commit costs a WAL flush, so the staged-batch
        writer groups them). Batches are applied in order; a later copy of a question replaces
        an earlier one. Ids already in `ingested_batches` are skipped."""
        note = on_progress or (lambda _stage: None)
        results: list[WriteResult] = []
        with self._lock:
            with transaction(self.con) as con:
                for batch_id, batch in batches:
                    if batch_id is not None and con.execute(
                        "SELECT 1 FROM ingested_batches WHERE batch_id = ?", [batch_id]
                    ).fetchall():
                        results.append(WriteResult(0, 0, 0, skipped=True))
                        continue
                    results.append(self._insert(batch, note))
                    if batch_id is not None:
                        con.execute(
                            "INSERT INTO ingested_batches (batch_id, traces, steps, calls) VALUES (?, ?, ?, ?)",
                            [batch_id, batch.traces.num_rows, batch.steps.num_rows, batch.calls.num_rows],
                        )
            note("committed")
        return results

    def _insert(self, batch: Batch, note: Progress | None) -> WriteResult:
        """Replace the batch's questions inside the caller's transaction."""
        note = note or (lambda _stage: None)
        con = self.con
        with registered(con, src_traces=batch.traces, src_steps=batch.steps, src_calls=batch.calls):
            replaced = self._delete_existing(con)
            note("deleted")
            con.execute("INSERT INTO traces BY NAME SELECT * FROM src_traces")
            note("traces")
            con.execute("INSERT INTO steps BY NAME SELECT * FROM src_steps")
            note("steps")
            con.execute("INSERT INTO calls BY NAME SELECT * FROM src_calls")
            note("calls")
        return WriteResult(batch.traces.num_rows, batch.steps.num_rows, batch.calls.num_rows, replaced)

    @staticmethod
    def _delete_existing(con: duckdb.DuckDBPyConnection) -> int:
        """Remove every stored row of the batch's questions; returns how many questions."""
        row = con.execute(
            "SELECT count(DISTINCT root_trace_id) FROM traces"
            " WHERE root_trace_id IN (SELECT root_trace_id FROM src_traces)"
            "    OR trace_id IN (SELECT trace_id FROM src_traces)"
        ).fetchall()
        replaced = int(row[0][0])
        if replaced:
            # A round id that moved to another question takes its old question with it.
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _doomed AS SELECT DISTINCT root_trace_id FROM traces"
                " WHERE root_trace_id IN (SELECT root_trace_id FROM src_traces)"
                "    OR trace_id IN (SELECT trace_id FROM src_traces)"
            )
            for table in TRACE_TABLES:
                con.execute(f"DELETE FROM {table} WHERE root_trace_id IN (SELECT root_trace_id FROM _doomed)")
            con.execute("DROP TABLE _doomed")
        return replaced
