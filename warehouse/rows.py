"""Trace <-> rows of `traces`, `steps` and `calls` (pure Python + Arrow, no SQL).

`flatten` turns nested Traces (recursion rounds are child Traces inside steps) into three Arrow
tables; `rebuild` turns the rows of one question back into the same nested Trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timezone
from typing import Any

import pyarrow as pa
from pydantic import TypeAdapter

from conductor.shapes import shape_of
from conductor.trace import CallRecord, StepRecord, Trace
from conductor.types import Message, Usage
from conductor.verify.verdict import Verdict
from conductor.workflow import ALL, Workflow

TS = pa.timestamp("us", tz="UTC")
STR = pa.string()
I32 = pa.int32()
I64 = pa.int64()
F64 = pa.float64()
BOOL = pa.bool_()

# A Usage value is stored as one column per field, in `traces` (the trace's total) and in
# `calls` (one call's), under the field's own name; `_usage_row`/`_usage` are the only mapping.
USAGE_TYPES = {"input_tokens": I64, "output_tokens": I64, "reasoning_tokens": I64, "cached_input_tokens": I64,
               "cost_usd": F64, "latency_s": F64, "retries": I32}
assert set(USAGE_TYPES) == set(Usage.model_fields), "a Usage field without a column"
USAGE_COLUMNS = list(USAGE_TYPES.items())


def _usage_row(u: Usage) -> tuple[Any, ...]:
    return tuple(getattr(u, name) for name in USAGE_TYPES)


def _usage(row: dict[str, Any]) -> Usage:
    return Usage(**{name: row[name] for name in USAGE_TYPES if row.get(name) is not None})

TRACE_SCHEMA = pa.schema([
    ("trace_id", STR), ("root_trace_id", STR), ("parent_trace_id", STR), ("parent_step_index", I32),
    ("depth", I32), ("run_id", STR), ("problem_id", STR), ("source", STR), ("domain", STR),
    ("pool", pa.list_(STR)), ("conductor_prompt", STR), ("conductor_output", STR),
    ("conductor_call_id", STR), ("parse_status", STR), ("parse_error", STR), ("workflow", STR),
    ("n_steps", I32), ("shape", STR), ("answer", STR), ("stop_reason", STR), ("correct", BOOL),
    ("verdict", STR), ("reward", F64), ("calls", I32), *USAGE_COLUMNS,
    ("tokens", I64), ("cost_known", BOOL), ("wall_s", F64), ("created_at", TS),
])
STEP_SCHEMA = pa.schema([
    ("trace_id", STR), ("step_index", I32), ("root_trace_id", STR), ("run_id", STR),
    ("worker_id", STR), ("subtask", STR), ("reads", pa.list_(I32)), ("status", STR), ("output", STR),
    ("error", STR), ("started_at_s", F64), ("finished_at_s", F64), ("latency_s", F64),
    ("call_id", STR), ("child_trace_id", STR), ("answered_by", STR), ("fallback_call_id", STR),
    ("fallback_reason", STR),
])
CALL_SCHEMA = pa.schema([
    ("call_id", STR), ("trace_id", STR), ("root_trace_id", STR), ("run_id", STR), ("step_index", I32),
    ("role", STR), ("worker_id", STR), ("provider", STR), ("model", STR), ("messages", STR),
    ("output", STR), ("status", STR), *USAGE_COLUMNS, ("tokens", I64),
    ("error", STR), ("started_at_s", F64),
])


class TraceRowError(ValueError):
    """A trace that cannot be stored as given (bad timestamp, duplicate ids, ...)."""


@dataclass
class Batch:
    traces: pa.Table
    steps: pa.Table
    calls: pa.Table

    @property
    def rows(self) -> int:
        return self.traces.num_rows + self.steps.num_rows + self.calls.num_rows


_MESSAGES = TypeAdapter(list[Message])


def _messages_json(messages: list[Message]) -> str:
    return _MESSAGES.dump_json(messages).decode() if messages else "[]"  # pydantic-core: ~5x json.dumps


def _workflow_json(wf: Workflow | None) -> str | None:
    if wf is None:
        return None
    access = [a if a == ALL else list(a) for a in wf.access_list]
    return json.dumps(
        {"model_id": list(wf.model_id), "subtasks": list(wf.subtasks), "access_list": access},
        ensure_ascii=False,
    )


class _Columns:
    """Column-wise lists: appending a tuple per row is cheaper than building dicts."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows: list[tuple[Any, ...]] = []

    def table(self) -> pa.Table:
        cols = list(zip(*self.rows)) if self.rows else [[] for _ in self.schema]
        return pa.Table.from_arrays(
            [pa.array(list(c), type=f.type) for c, f in zip(cols, self.schema)], schema=self.schema
        )


def _call_row(c: CallRecord, trace_id: str, root: str, run_id: str | None, step: int | None) -> tuple[Any, ...]:
    return (
        c.call_id, trace_id, root, run_id, step, c.role, c.worker_id, c.provider, c.model,
        _messages_json(c.messages), c.output, "error" if c.error else "ok", *_usage_row(c.usage),
        c.usage.tokens, c.error, c.started_at_s,
    )


def flatten(traces: Iterable[Trace]) -> Batch:
    """Rows for every round, step and call of `traces` (depth-0 Traces; the last copy of a
    repeated trace id wins). Every value is the trace's own: nothing is looked up or derived
    here except the shape, which is named by `conductor.shapes`."""
    latest: dict[str, Trace] = {}
    for t in traces:
        latest[t.trace_id] = t
    tr, st, ca = _Columns(TRACE_SCHEMA), _Columns(STEP_SCHEMA), _Columns(CALL_SCHEMA)
    seen_rounds: set[str] = set()
    for root in latest.values():
        stack: list[tuple[Trace, str | None, int | None]] = [(root, None, None)]
        while stack:
            t, _parent, parent_step = stack.pop()
            if t.trace_id in seen_rounds:
                raise TraceRowError(f"trace id {t.trace_id} appears twice in one batch")
            seen_rounds.add(t.trace_id)
            rid = root.trace_id
            cc = t.conductor_call
            v = t.verdict
            tr.rows.append((
                t.trace_id, rid, t.parent_trace_id, parent_step, t.depth, t.run_id, t.problem_id,
                t.source, t.domain, list(t.pool),
                _messages_json(t.conductor_prompt), t.conductor_output,
                cc.call_id if cc else None, t.parse_status, t.parse_error, _workflow_json(t.workflow),
                len(t.workflow) if t.workflow is not None else len(t.steps), shape_of(t), t.answer,
                t.stop_reason, v.correct if v else None, v.model_dump_json() if v else None, t.reward,
                t.calls, *_usage_row(t.usage), t.usage.tokens, t.usage.cost_usd is not None, t.wall_s,
                t.created_at,
            ))
            if cc is not None:
                ca.rows.append(_call_row(cc, t.trace_id, rid, t.run_id, None))
            for s in t.steps:
                st.rows.append((
                    t.trace_id, s.index, rid, t.run_id, s.worker_id, s.subtask, list(s.reads), s.status,
                    s.output, s.error, s.started_at_s, s.finished_at_s, s.finished_at_s - s.started_at_s,
                    s.call.call_id if s.call else None, s.child.trace_id if s.child else None,
                    s.answered_by, s.fallback_call.call_id if s.fallback_call else None, s.fallback_reason,
                ))
                for c in (s.call, s.fallback_call):
                    if c is not None:
                        ca.rows.append(_call_row(c, t.trace_id, rid, t.run_id, s.index))
                if s.child is not None:
                    stack.append((s.child, t.trace_id, s.index))
    return Batch(tr.table(), st.table(), ca.table())


def _call(row: dict[str, Any]) -> CallRecord:
    return CallRecord(
        call_id=row["call_id"], role=row["role"], worker_id=row["worker_id"], provider=row["provider"],
        model=row["model"], messages=[Message(**m) for m in json.loads(row["messages"] or "[]")],
        output=row["output"], usage=_usage(row), error=row["error"], started_at_s=row["started_at_s"],
    )


def rebuild(root_id: str, traces: list[dict[str, Any]], steps: list[dict[str, Any]],
            calls: list[dict[str, Any]]) -> Trace:
    """The nested Trace `root_id` from its rows (all rounds, steps and calls of that question)."""
    by_id = {r["trace_id"]: r for r in traces}
    call_by_id = {r["call_id"]: _call(r) for r in calls}
    steps_of: dict[str, list[dict[str, Any]]] = {}
    for s in steps:
        steps_of.setdefault(s["trace_id"], []).append(s)

    def build(trace_id: str) -> Trace:
        r = by_id[trace_id]
        created = r["created_at"]
        wf = json.loads(r["workflow"]) if r["workflow"] else None
        return Trace(
            trace_id=r["trace_id"], run_id=r["run_id"], problem_id=r["problem_id"], source=r["source"],
            domain=r["domain"],
            parent_trace_id=r["parent_trace_id"], depth=r["depth"], pool=list(r["pool"] or []),
            conductor_prompt=[Message(**m) for m in json.loads(r["conductor_prompt"] or "[]")],
            conductor_output=r["conductor_output"],
            conductor_call=call_by_id.get(r["conductor_call_id"]) if r["conductor_call_id"] else None,
            parse_status=r["parse_status"], parse_error=r["parse_error"],
            workflow=Workflow.model_validate(wf) if wf is not None else None,
            steps=[
                StepRecord(
                    index=s["step_index"], worker_id=s["worker_id"], subtask=s["subtask"],
                    reads=list(s["reads"] or []), status=s["status"], output=s["output"], error=s["error"],
                    started_at_s=s["started_at_s"], finished_at_s=s["finished_at_s"],
                    call=call_by_id.get(s["call_id"]) if s["call_id"] else None,
                    fallback_call=call_by_id.get(s["fallback_call_id"]) if s.get("fallback_call_id") else None,
                    fallback_reason=s.get("fallback_reason"), answered_by=s.get("answered_by"),
                    child=build(s["child_trace_id"]) if s["child_trace_id"] else None,
                )
                for s in sorted(steps_of.get(trace_id, []), key=lambda s: s["step_index"])
            ],
            answer=r["answer"], stop_reason=r["stop_reason"],
            verdict=Verdict.model_validate_json(r["verdict"]) if r["verdict"] else None,
            reward=r["reward"],
            calls=r["calls"], usage=_usage(r), wall_s=r["wall_s"],
            created_at=created.astimezone(timezone.utc),
        )

    return build(root_id)
