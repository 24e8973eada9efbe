"""Realistic nested Traces for tests and benchmarks, without the executor.

`make_trace(rng)` builds a question's trace: the planner's call, a parsed workflow of 1-5
steps with one call each (some failing, some with unknown prices), sometimes a parse error,
sometimes a recursion round (a step whose worker is the Conductor, holding a child Trace).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from conductor.data.schema import Problem
from conductor.trace import CallRecord, StepRecord, Trace, new_id, total_usage
from conductor.verify.verdict import Verdict
from conductor.types import Message, Usage
from conductor.workflow import ALL, Workflow

POOL = ["gpt-5", "claude-sonnet-4", "gemini-2.5-pro", "qwen3-32b", "conductor"]
SOURCES = {"MATH": "math", "MMLU": "choice", "RLPR": "freeform", "LiveCodeBench": "code"}
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def make_problem(rng: random.Random, i: int | None = None) -> Problem:
    source = rng.choice(sorted(SOURCES))
    native = i if i is not None else rng.randrange(10**9)
    return Problem(
        id=Problem.make_id(source, native), source=source, domain=SOURCES[source],  # type: ignore[arg-type]
        question=f"Question {native} from {source}?", answer=str(native % 7),
        choices=["1", "2", "3", "4"] if source == "MMLU" else None,
    )


def _call(rng: random.Random, worker: str, role: str, prompt: str, t: float, *, fail: bool = False) -> CallRecord:
    inp, out = rng.randint(50, 2000), rng.randint(10, 800)
    priced = worker != "qwen3-32b" or rng.random() < 0.5  # some prices unknown
    return CallRecord(
        call_id=new_id(), role=role, worker_id=worker, provider="simulated", model=f"sim-{worker}",  # type: ignore[arg-type]
        messages=[Message(role="system", content="You are helpful."), Message(role="user", content=prompt)],
        output=None if fail else f"answer from {worker}: {rng.randint(0, 9)}",
        usage=Usage(
            input_tokens=inp, output_tokens=0 if fail else out, cached_input_tokens=rng.choice([0, 0, inp // 2]),
            reasoning_tokens=0 if fail else out // 3,  # derived, so the random sequence is unchanged
            latency_s=round(rng.uniform(0.05, 4.0), 3),
            cost_usd=round((inp + 4 * out) * 1e-6, 8) if priced else None,
            retries=rng.choice([0, 0, 0, 1, 2])),
        error="HTTP 503 after retries" if fail else None, started_at_s=t,
    )


def _workflow(rng: random.Random, n: int, pool: list[str], *, recurse: bool) -> Workflow:
    kinds = rng.choice(["chain", "fan", "verify", "parallel"])
    workers = [rng.randrange(len(pool) - 1) for _ in range(n)]
    subtasks = [f"Solve part {i} of the question." for i in range(n)]
    access: list = []
    for i in range(n):
        if kinds == "chain" or i == 0:
            access.append([] if i == 0 else [i - 1])
        elif kinds == "fan":
            access.append([] if i < n - 1 else ALL)
        elif kinds == "verify":
            access.append(ALL)
            subtasks[i] = f"Verify the previous answer and correct it if needed ({i})."
        else:
            access.append([])
    if recurse:
        workers[-1] = len(pool) - 1  # the Conductor itself: a re-plan
        subtasks[-1] = "Re-plan given the responses so far."
    return Workflow(model_id=tuple(workers), subtasks=tuple(subtasks), access_list=tuple(access))


def make_trace(
    rng: random.Random,
    *,
    run_id: str | None = "run-1",
    problem: Problem | None = None,
    depth: int = 0,
    parent_trace_id: str | None = None,
    recurse: bool | None = None,
    parse_error: bool | None = None,
    trace_id: str | None = None,
) -> Trace:
    problem = problem or make_problem(rng)
    tid = trace_id or new_id()
    pool = list(POOL)
    parse_error = rng.random() < 0.08 if parse_error is None else parse_error
    recurse = (depth == 0 and rng.random() < 0.15) if recurse is None else recurse
    prompt = [Message(role="system", content="Plan a workflow."), Message(role="user", content=problem.question)]
    planner = _call(rng, "conductor", "conductor", problem.question, 0.0)
    created = T0 + timedelta(seconds=rng.randrange(30 * 86400), microseconds=rng.randrange(10**6))
    about = {"problem_id": problem.id, "source": problem.source, "domain": problem.domain}
    if parse_error:
        trace = Trace(
            trace_id=tid, run_id=run_id, **about, parent_trace_id=parent_trace_id, depth=depth,
            pool=pool, conductor_prompt=prompt, conductor_output="I think model 2 should... (no lists)",
            conductor_call=planner, parse_status="missing_list", parse_error="no model_id list found",
            reward=0.0, created_at=created,
        )
        total_usage(trace, planner.usage.latency_s)
        return trace
    n = rng.randint(2 if recurse else 1, 5)
    wf = _workflow(rng, n, pool, recurse=recurse)
    steps: list[StepRecord] = []
    t = planner.usage.latency_s
    for s in wf.steps:
        worker = pool[s.worker]
        if recurse and s.index == n - 1:
            child = make_trace(rng, run_id=run_id, problem=problem, depth=depth + 1, parent_trace_id=tid,
                               recurse=False, parse_error=False)
            steps.append(StepRecord(index=s.index, worker_id=worker, subtask=s.subtask, reads=list(s.reads),
                                    output=child.answer, started_at_s=t, finished_at_s=t + child.wall_s,
                                    child=child))
            continue
        fail = rng.random() < 0.05
        call = _call(rng, worker, "worker", s.subtask, t, fail=fail)
        steps.append(StepRecord(
            index=s.index, worker_id=worker, subtask=s.subtask, reads=list(s.reads),
            status="error" if fail else "ok", output=call.output, error=call.error,
            started_at_s=t, finished_at_s=t + call.usage.latency_s, call=call,
        ))
        t += call.usage.latency_s
    correct = rng.random() < 0.6
    trace = Trace(
        trace_id=tid, run_id=run_id, **about, parent_trace_id=parent_trace_id, depth=depth,
        pool=pool, conductor_prompt=prompt, conductor_output="model_id = [...]", conductor_call=planner,
        workflow=wf, steps=steps, answer=steps[-1].output,
        verdict=Verdict(correct=correct, extracted=steps[-1].output, reason="compared", method="math-verify"),
        reward=1.0 if correct else 0.5,
        created_at=created,
    )
    total_usage(trace, t)
    return trace


def make_traces(n: int, seed: int = 0, *, run_id: str | None = "run-1") -> list[Trace]:
    rng = random.Random(seed)
    return [make_trace(rng, run_id=run_id) for _ in range(n)]
