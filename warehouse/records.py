"""Small writers for everything that is not a trace: runs, problems, data set manifests,
evaluations, costs, promotions and training metrics. Each is an upsert by its key, batched
through Arrow, in one transaction."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timezone
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel, Field, field_validator

from conductor.data.schema import Problem
from warehouse.sql import registered, transaction


class Run(BaseModel):
    run_id: str
    kind: str = "other"  # train | eval | ask | curate | other
    method: str | None = None
    simulated: bool | None = None  # the pool had a simulated worker
    status: str = "running"  # running | finished | failed | cancelled | abandoned
    host: str | None = None  # where its process runs: with pid, how a dead run is found
    pid: int | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    mlflow_run_id: str | None = None
    notes: str | None = None


class DatasetManifest(BaseModel):
    dataset_id: str
    problem_ids: list[str]
    name: str | None = None
    source: str | None = None
    split: str | None = None
    revision: str | None = None
    path: str | None = None
    created_at: datetime | None = None
    manifest: dict[str, Any] = Field(default_factory=dict)

    @field_validator("problem_ids")
    @classmethod
    def _unique(cls, ids: list[str]) -> list[str]:
        dupes = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
        if dupes:
            raise ValueError(f"problem ids repeated in the manifest: {', '.join(dupes[:5])}")
        return ids

    @property
    def content_hash(self) -> str:
        return hashlib.sha256("\n".join(self.problem_ids).encode()).hexdigest()


class Evaluation(BaseModel):
    eval_id: str
    method: str
    benchmark: str
    n: int = Field(ge=0)
    correct: int = Field(ge=0)
    run_id: str | None = None
    model_version: str | None = None
    stderr: float | None = None
    cost_usd: float | None = None
    tokens: int | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None


class CostRow(BaseModel):
    day: date
    worker_id: str
    cost_usd: float
    run_id: str | None = None
    provider: str | None = None
    model: str | None = None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    basis: str = "computed"  # computed | invoice

    @property
    def cost_id(self) -> str:
        return f"{self.day.isoformat()}/{self.run_id or '-'}/{self.worker_id}/{self.basis}"


class Promotion(BaseModel):
    promotion_id: str
    challenger_version: str
    promoted: bool
    reason: str
    model_name: str = "conductor"
    champion_version: str | None = None
    challenger_eval_id: str | None = None
    champion_eval_id: str | None = None
    decided_at: datetime | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_decision(cls, row: Mapping[str, Any] | BaseModel) -> Promotion:
        """A promotion gate decision (registry.promotion.Decision, or its `promotion_row()`)
        as a `promotions` row; the warehouse does not import the registry."""
        if hasattr(row, "promotion_row"):
            row = row.promotion_row()
        return cls.model_validate({k: v for k, v in dict(row).items() if k in cls.model_fields})


def _process_started(pid: int) -> float | None:
    """When the process `pid` started (epoch seconds, from /proc); None where that cannot be read."""
    try:
        ticks = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as stat:
            boot = next(int(line.split()[1]) for line in stat if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _alive(pid: int, since: datetime | None = None) -> bool:
    """Whether the process that ran a run started at `since` still runs. A process with that pid
    that started after the run did is another one (the pid was reused): the run's is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    started = _process_started(pid)
    if since is not None and started is not None:
        since = since if since.tzinfo else since.replace(tzinfo=timezone.utc)
        return started <= since.timestamp() + 1.0  # + 1 s: boot time is whole seconds
    return True


_MEMBERS = pa.schema([("dataset_id", pa.string()), ("problem_id", pa.string()), ("position", pa.int32())])


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class RecordsMixin:
    con: duckdb.DuckDBPyConnection
    _lock: threading.Lock

    def _upsert(self, table: str, key: Sequence[str], rows: list[dict[str, Any]]) -> int:
        """Replace rows by `key` (the last of repeated keys wins), insert the rest; one transaction."""
        unique = list({tuple(r[k] for k in key): r for r in rows}.values())
        if not unique:
            return 0
        src = pa.Table.from_pylist(unique)
        on = " AND ".join(f"{table}.{k} = _src.{k}" for k in key)
        with self._lock, registered(self.con, _src=src), transaction(self.con) as con:
            con.execute(f"DELETE FROM {table} USING _src WHERE {on}")
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _src")
        return len(unique)

    def write_runs(self, runs: Iterable[Run]) -> int:
        rows = [r.model_dump() | {"params": _json(r.params)} for r in runs]
        return self._upsert("runs", ["run_id"], rows)

    def abandon_dead_runs(self, host: str | None = None) -> list[str]:
        """Mark `abandoned` every run still `running` on this host whose process is gone (killed,
        crashed); returns their ids. Runs on other hosts cannot be checked from here."""
        host = host or socket.gethostname()
        running = self.con.execute(
            "SELECT run_id, pid, started_at FROM runs WHERE status = 'running' AND host = ? AND pid IS NOT NULL", [host]
        ).fetchall()
        dead = [run_id for run_id, pid, started_at in running if not _alive(pid, started_at)]
        if dead:
            with self._lock, transaction(self.con) as con:
                con.execute(
                    "UPDATE runs SET status = 'abandoned', finished_at = now(),"
                    " notes = coalesce(notes || '; ', '') || 'its process ' || pid || ' was gone'"
                    " WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [dead]
                )
        return dead

    def run_params(self, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The `params` of the given runs, by run id (e.g. to find an abandoned run's Prefect flow run)."""
        if not run_ids:
            return {}
        rows = self.con.execute("SELECT run_id, params FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                                [list(run_ids)]).fetchall()
        return {run_id: json.loads(params) if params else {} for run_id, params in rows}

    def write_problems(self, problems: Iterable[Problem]) -> int:
        """Store problems (upserted by id)."""
        rows = [
            {
                "problem_id": p.id, "source": p.source, "domain": p.domain, "question": p.question,
                "answer": p.answer, "choices": p.choices,
                "tests": _json([t.model_dump() for t in p.tests]) if p.tests is not None else None,
                "meta": _json(p.meta),
            }
            for p in problems
        ]
        return self._upsert("problems", ["problem_id"], rows)

    def write_dataset(self, manifest: DatasetManifest) -> int:
        """A data set's manifest and membership (replacing an earlier manifest of the same id)."""
        row = manifest.model_dump(exclude={"problem_ids"}) | {
            "n_problems": len(manifest.problem_ids), "content_hash": manifest.content_hash,
            "manifest": _json(manifest.manifest),
        }
        members = [
            {"dataset_id": manifest.dataset_id, "problem_id": pid, "position": i}
            for i, pid in enumerate(manifest.problem_ids)
        ]
        tables = {"_members": pa.Table.from_pylist(members, schema=_MEMBERS),
                  "_manifest": pa.Table.from_pylist([row])}
        with self._lock, registered(self.con, **tables), transaction(self.con) as con:
            con.execute("DELETE FROM dataset_problems WHERE dataset_id = ?", [manifest.dataset_id])
            con.execute("DELETE FROM datasets WHERE dataset_id = ?", [manifest.dataset_id])
            con.execute("INSERT INTO datasets BY NAME SELECT * FROM _manifest")
            con.execute("INSERT INTO dataset_problems BY NAME SELECT * FROM _members")
        return len(members)

    def write_evaluations(self, evaluations: Iterable[Evaluation]) -> int:
        rows = [e.model_dump() | {"accuracy": e.accuracy, "details": _json(e.details)} for e in evaluations]
        return self._upsert("evaluations", ["eval_id"], rows)

    def write_costs(self, costs: Iterable[CostRow]) -> int:
        return self._upsert("costs", ["cost_id"], [c.model_dump() | {"cost_id": c.cost_id} for c in costs])

    def write_promotions(self, promotions: Iterable[Promotion]) -> int:
        rows = [p.model_dump() | {"metrics": _json(p.metrics)} for p in promotions]
        for r in rows:
            r["decided_at"] = r["decided_at"] or datetime.now(timezone.utc)
        return self._upsert("promotions", ["promotion_id"], rows)

    def write_training_metrics(self, run_id: str, step: int, metrics: Mapping[str, float]) -> int:
        rows = [{"run_id": run_id, "step": step, "metric": k, "value": float(v)} for k, v in metrics.items()]
        return self._upsert("training_metrics", ["run_id", "step", "metric"], rows)

    def write_training_rollouts(self, run_id: str, step: int, trace_ids: Iterable[str]) -> int:
        """The training step whose batch generated each of these rounds (v_training_shapes)."""
        rows = [{"trace_id": t, "run_id": run_id, "step": step} for t in trace_ids]
        return self._upsert("training_rollouts", ["trace_id"], rows)
