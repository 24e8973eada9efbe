"""What one solved problem leaves behind: the Trace, its steps and every model call.

A Trace round-trips through JSON (`Trace.model_validate_json(t.model_dump_json())`), and the
warehouse flattens it into rows of `traces`, `steps` and `calls`. A recursive round is a child
Trace (its `parent_trace_id` names the round that asked for it).
"""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from conductor.data.schema import Domain
from conductor.types import Message, Task, Usage
from conductor.verify.verdict import Verdict
from conductor.workflow import Workflow

StepStatus = Literal["ok", "error", "skipped", "budget_exhausted"]


_V4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_V4_SET = (0x4000 << 64) | (0x8000 << 48)
# Its own generator, seeded from the OS (and again in a forked child): a `random.seed(0)` elsewhere
# (training seeds the global one) must not make two runs draw the same ids.
_IDS = random.Random()
os.register_at_fork(after_in_child=_IDS.seed)


def new_id() -> str:
    """A random UUID (version 4) as 32 hex digits, like `uuid.uuid4().hex`, at a tenth of its
    cost (no system call, no UUID object; ids are made several times a request when serving).
    Never affected by seeding the global `random`."""
    return f"{(_IDS.getrandbits(128) & _V4_CLEAR) | _V4_SET:032x}"


class CallRecord(BaseModel):
    """One model call (a worker step, or the Conductor planning), after retries."""

    call_id: str = Field(default_factory=new_id)
    role: Literal["worker", "conductor"] = "worker"
    worker_id: str
    provider: str = ""
    model: str = ""
    messages: list[Message] = Field(default_factory=list)
    output: str | None = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    started_at_s: float = 0.0  # offset from the trace's start


class StepRecord(BaseModel):
    index: int
    worker_id: str
    subtask: str
    reads: list[int] = Field(default_factory=list)
    status: StepStatus = "ok"
    output: str | None = None
    error: str | None = None
    started_at_s: float = 0.0  # offsets from the trace's start
    finished_at_s: float = 0.0
    # `worker_id` is the worker the workflow asked; `call` its call (None: not called, because its
    # circuit breaker was open, or a recursion step). When it was down or failed past its retries,
    # `fallback_reason` says so and `fallback_call` is the call to the worker that answered instead.
    call: CallRecord | None = None
    fallback_call: CallRecord | None = None
    fallback_reason: str | None = None
    answered_by: str | None = None  # the worker whose call gave `output` (None: no worker call answered)
    child: Trace | None = None  # a recursion round, when the step's worker is the Conductor


def utc_now() -> datetime:
    return datetime.now(UTC)


class Trace(BaseModel):
    """One question's round. `source` and `domain` come from the Task and are carried as given,
    so the warehouse stores them and never has to recover them. `usage` is the sum over every
    call of this round and its recursion rounds (`all_calls`), computed once by the executor."""

    trace_id: str = Field(default_factory=new_id)
    run_id: str | None = None
    problem_id: str
    source: str
    domain: Domain
    parent_trace_id: str | None = None
    depth: int = 0
    pool: list[str] = Field(default_factory=list)  # worker ids as offered, in order
    conductor_prompt: list[Message] = Field(default_factory=list)
    conductor_output: str | None = None
    conductor_call: CallRecord | None = None
    parse_status: str = "ok"  # "ok" or a ParseErrorReason value
    parse_error: str | None = None
    workflow: Workflow | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    answer: str | None = None
    stop_reason: str | None = None  # why execution ended early (budget, failed step, ...)
    verdict: Verdict | None = None
    reward: float | None = None
    calls: int = 0  # model calls in `usage`
    usage: Usage = Field(default_factory=Usage)
    wall_s: float = 0.0
    created_at: datetime = Field(default_factory=utc_now)

    @classmethod
    def for_task(cls, task: Task, pool: list[str], **fields: object) -> Trace:
        """A new trace of `task` (its id, source and domain copied in) over the workers `pool`
        as offered; `fields` sets any other field."""
        return cls(problem_id=task.id, source=task.source, domain=task.domain, pool=pool,
                   **fields)  # type: ignore[arg-type]

    def all_calls(self) -> list[CallRecord]:
        """Every call of this round and of its recursion rounds, planner calls included."""
        calls: list[CallRecord] = []
        if self.conductor_call is not None:
            calls.append(self.conductor_call)
        for step in self.steps:
            if step.call is not None:
                calls.append(step.call)
            if step.fallback_call is not None:
                calls.append(step.fallback_call)
            if step.child is not None:
                calls.extend(step.child.all_calls())
        return calls

    def rounds(self) -> list[Trace]:
        """This trace and every nested recursion round, parents first."""
        out = [self]
        for step in self.steps:
            if step.child is not None:
                out.extend(step.child.rounds())
        return out


StepRecord.model_rebuild()


def total_usage(trace: Trace, wall_s: float) -> None:
    """Set a trace's call count, usage and wall time from its calls (the executor's one sum)."""
    calls = trace.all_calls()
    trace.calls = len(calls)
    trace.usage = Usage.sum(c.usage for c in calls)
    trace.wall_s = wall_s
