"""Run a Workflow over a pool and record everything as a Trace.

Steps form a DAG through their access lists; each starts as soon as the steps it reads are
done (the paper runs them one by one: the answers are the same, the wait is the critical path).
A step whose worker is the Conductor itself re-plans through the planner (recursion), up to a
depth limit; the steps of that next round may read the earlier round's steps (`"prev"` in an
access list) and get their full responses. Budgets: steps, output tokens per call, dollars per question.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import replace

from conductor.budget import Budget, Round  # re-exported: the executor's users import them from here
from conductor.planners import Planner
from conductor.progress import notify, watching
from conductor.run_options import RunOptions
from conductor.prompts import EARLIER_ROUND_MARK, PriorStep, conductor_messages, recursion_messages, step_message
from conductor.trace import CallRecord, StepRecord, Trace, total_usage
from conductor.types import Message, Task, Usage, WorkerSpec
from conductor.workers.base import Completion
from conductor.workers.breaker import BreakerPolicy
from conductor.workers.calling import CallFailed, CallPolicy, WorkerDown, call_worker
from conductor.workers.pool import Pool
from conductor.workflow import ParseError, Step, Workflow, parse


def _record_call(role: str, spec: WorkerSpec | None, messages: list[Message], started: float) -> CallRecord:
    return CallRecord(
        role=role,  # type: ignore[arg-type]
        worker_id=spec.id if spec else "conductor",
        provider=spec.provider if spec else "",
        model=spec.model if spec else "",
        messages=messages,
        started_at_s=started,
    )


def _fill(call: CallRecord, completion: Completion) -> CallRecord:
    call.output = completion.text
    call.usage = completion.usage
    if completion.model:
        call.model = completion.model
    return call


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _Run:
    """One execution round: the state shared by its steps."""

    def __init__(
        self,
        workflow: Workflow,
        task: Task,
        pool: Pool,
        planner: Planner | None,
        options: RunOptions,
        budget: Budget,
        trace: Trace,
        earlier: Sequence[PriorStep] = (),
    ) -> None:
        self.workflow, self.task, self.pool, self.planner = workflow, task, pool, planner
        self.budget, self.trace = budget, trace
        # The earlier round's steps, as a step reading "prev" sees them: marked as the earlier
        # round's, since their step numbers are that round's.
        self.earlier = [replace(p, subtask=f"{EARLIER_ROUND_MARK} {p.subtask}") for p in earlier]
        self.rng = options.rng or random.Random()
        # recursion rounds draw from the same Random as this one
        self.options = replace(options, rng=self.rng)
        self.config = config = options.config
        self.t0 = time.perf_counter()
        self.stopped: str | None = None
        self.records: list[StepRecord | None] = [None] * len(workflow)
        self.policy = CallPolicy(
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
            backoff_base_s=config.backoff_base_s,
            backoff_max_s=config.backoff_max_s,
            breaker=BreakerPolicy(failures=config.breaker_failures, cooldown_s=config.breaker_cooldown_s),
        )

    def _context(self, step: Step) -> list[PriorStep]:
        """What a step reads: the earlier round's steps (with `"prev"`), then this round's."""
        return (self.earlier if step.reads_prior else []) + self._prior(step.reads)

    def _prior(self, reads: tuple[int, ...]) -> list[PriorStep]:
        prior = []
        for j in reads:
            rec = self.records[j]
            assert rec is not None
            response = rec.output if rec.status == "ok" and rec.output is not None else (
                f"[step {j} produced no response: {rec.error or rec.status}]"
            )
            step = self.workflow.steps[j]
            prior.append(PriorStep(index=j, worker=rec.worker_id, subtask=rec.subtask, response=response,
                                   reads=step.reads, reads_prior=step.reads_prior))
        return prior

    async def run_step(self, index: int, deps: list[asyncio.Task[StepRecord]]) -> StepRecord:
        step = self.workflow.steps[index]
        worker_id = self.pool.specs[step.worker].id
        record = StepRecord(index=index, worker_id=worker_id, subtask=step.subtask, reads=list(step.reads))
        if deps:
            await asyncio.wait(deps)
        record.started_at_s = time.perf_counter() - self.t0
        if watching():
            notify({"event": "step_started", "index": index, "worker": worker_id, "depth": self.trace.depth,
                    "trace_id": self.trace.trace_id, "at_s": round(record.started_at_s, 4)})
        failed = [j for j in step.reads if self.records[j] is not None and self.records[j].status != "ok"]
        if self.stopped or (failed and self.config.on_step_failure == "stop"):
            record.status = "skipped"
            record.error = self.stopped or f"step {failed[0]} did not succeed"
        elif not self.budget.allows_call():
            record.status, record.error = "budget_exhausted", self.budget.exhausted
        elif refusal := self.budget.refuses(self.pool.specs[step.worker]):
            record.status, record.error = "budget_exhausted", refusal
        else:
            try:
                if self.pool.is_conductor(step.worker):
                    await self._recurse(record, self._context(step))
                else:
                    await self._call(record, self._context(step), worker_id)
            except Exception as exc:  # noqa: BLE001 - a bug in one adapter or planner fails its step, not the run
                record.status, record.error = "error", f"unexpected {_failure(exc)}"
                if record.call is not None and record.call.output is None:
                    record.call.error = record.error
        record.finished_at_s = time.perf_counter() - self.t0
        self.records[index] = record
        if watching():
            usage = record.call.usage if record.call is not None else None
            notify({"event": "step_finished", "index": index, "worker": worker_id, "depth": self.trace.depth,
                    "trace_id": self.trace.trace_id, "status": record.status, "error": (record.error or "")[:300] or None,
                    "at_s": round(record.finished_at_s, 4),
                    "latency_s": round(record.finished_at_s - record.started_at_s, 4),
                    "output_tokens": usage.output_tokens if usage else None,
                    "retries": usage.retries if usage else 0})
        if record.status not in ("ok", "skipped") and self.config.on_step_failure == "stop" and not self.stopped:
            self.stopped = f"step {index} {record.status}: {record.error}"
        return record

    async def _call(self, record: StepRecord, context: list[PriorStep], worker_id: str) -> None:
        """Ask the step's worker; when it is down or fails past its retries (an outage), its
        fallback answers instead (`Pool.fallbacks`), once. Both calls are in the trace."""
        messages = step_message(self.task.question, context, record.subtask)
        failure = await self._ask(record, worker_id, messages, fallback=False)
        if failure is None or not failure.outage:
            return
        fallback = self._fallback_for(worker_id)
        if fallback is not None:
            record.fallback_reason = str(failure)
            await self._ask(record, fallback, messages, fallback=True)

    def _fallback_for(self, worker_id: str) -> str | None:
        """The first of the worker's fallbacks that is not down and that the budget allows."""
        if not self.budget.allows_call():
            return None
        for candidate in self.pool.fallbacks(worker_id):
            spec = self.pool.specs[self.pool.index_of(candidate)]
            if self.budget.refuses(spec) is None and self.pool.breaker(candidate).state(self.policy.breaker) != "open":
                return candidate
        return None

    async def _ask(self, record: StepRecord, worker_id: str, messages: list[Message], *,
                   fallback: bool) -> CallFailed | None:
        """One call of the step (its worker's, or its fallback's); the step's outcome is this
        call's. Returns the failure, if it failed."""
        spec = self.pool.specs[self.pool.index_of(worker_id)]
        call = _record_call("worker", spec, messages, time.perf_counter() - self.t0)
        if fallback:
            record.fallback_call = call
        else:
            record.call = call
        try:
            completion = await call_worker(
                self.pool.worker(worker_id),
                messages,
                self.policy,
                max_tokens=min(spec.max_tokens, self.config.max_output_tokens),
                temperature=spec.temperature,
                slot=self.pool.slot(worker_id),
                rng=self.rng,
                breaker=self.pool.breaker(worker_id),
            )
        except WorkerDown as exc:  # not called: no call to record
            if fallback:
                record.fallback_call = None
            else:
                record.call = None
            record.status, record.error = "error", str(exc)
            return exc
        except CallFailed as exc:
            # A refused or failed request is not billed by the providers we call; a timed-out one
            # may be, which no API reports, so it is counted at 0 like the rest.
            call.usage = Usage(cost_usd=0.0, retries=exc.retries, latency_s=exc.latency_s)
            call.error = str(exc)
            record.status, record.error = "error", str(exc)
            return exc
        _fill(call, completion)
        self.budget.charge(completion.usage.cost_usd, worker_id)
        record.status, record.error = "ok", None
        record.output, record.answered_by = completion.text, worker_id
        return None

    async def _recurse(self, record: StepRecord, prior: list[PriorStep]) -> None:
        """Re-plan after reading `prior` (the steps this Conductor step reads): the next round's
        workflow may keep the last answer (empty lists) or run steps that read `prior` ("prev")."""
        depth = self.trace.depth
        if self.planner is None or depth >= self.config.max_recursion_depth:
            record.status = "error"
            record.error = f"recursion depth limit ({self.config.max_recursion_depth}) reached"
            return
        messages = recursion_messages(
            self.task.question, self.pool.specs, prior, max_steps=self.config.max_steps
        )
        child = await plan_and_run(
            self.task, self.pool, self.planner, self.options, messages=messages,
            within=Round(self.budget, depth + 1, self.trace.trace_id, tuple(prior)),
        )
        record.child = child
        if child.parse_status != "ok":
            record.status, record.error = "error", f"re-plan unparseable: {child.parse_error}"
        elif child.workflow is not None and child.workflow.is_empty:
            kept = next((p.response for p in reversed(prior)), None)
            if kept is None:
                record.status, record.error = "error", "re-plan kept an answer, but the step reads no earlier step"
            else:
                record.output = kept
        elif child.answer is None:
            record.status, record.error = "error", f"re-planned workflow gave no answer ({child.stop_reason})"
        else:
            record.output = child.answer


async def execute(
    workflow: Workflow,
    task: Task,
    pool: Pool,
    options: RunOptions | None = None,
    *,
    planner: Planner | None = None,
    budget: Budget | None = None,
    trace: Trace | None = None,
    earlier: Sequence[PriorStep] = (),
) -> Trace:
    """Run every step of `workflow` (indices into `pool` as offered) and return the Trace.
    `planner` answers recursion steps (none: a recursion step fails); `budget` and `trace` are
    the round's, when `run_plan` has them; `earlier` the earlier round's steps, which a step
    reading `"prev"` sees.

    Never raises for a failed or crashing call: it is recorded on its step, and with
    `on_step_failure="stop"` later steps are skipped and `stop_reason` says why.
    """
    options = options or RunOptions()
    config = options.config
    budget = budget or Budget(max_usd=config.max_usd_per_question)
    trace = trace or Trace.for_task(task, pool.ids, run_id=options.run_id)
    trace.workflow = workflow
    t0 = time.perf_counter()
    if len(workflow) > config.max_steps:
        trace.parse_status, trace.stop_reason = "too_many_steps", f"{len(workflow)} steps > {config.max_steps}"
        total_usage(trace, 0.0)
        return trace
    if workflow.reads_prior and not earlier:
        trace.parse_status, trace.stop_reason = "invalid_access", "a step reads \"prev\", but there is no earlier round"
        total_usage(trace, 0.0)
        return trace
    run = _Run(workflow, task, pool, planner, options, budget, trace, earlier)
    tasks: list[asyncio.Task[StepRecord]] = []
    for step in workflow.steps:
        deps = [tasks[j] for j in step.reads] if config.parallel else tasks[-1:]
        tasks.append(asyncio.create_task(run.run_step(step.index, deps)))
    try:
        records = await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        raise
    trace.steps = list(records)
    if records:
        last = records[-1]
        trace.answer = last.output if last.status == "ok" else None
        if last.status != "ok":
            trace.stop_reason = run.stopped or budget.exhausted or f"final step {last.status}: {last.error}"
        elif budget.exhausted:
            trace.stop_reason = budget.exhausted
    total_usage(trace, time.perf_counter() - t0)
    return trace


async def run_plan(
    text: str,
    task: Task,
    pool: Pool,
    options: RunOptions | None = None,
    *,
    planner: Planner | None = None,
    messages: list[Message] | None = None,
    conductor_call: CallRecord | None = None,
    within: Round | None = None,
) -> Trace:
    """Parse a Conductor's output `text` and run its workflow over `pool`: what a GRPO reward
    function and a server call with a completion in hand. `messages` is the prompt the text
    answered and `conductor_call` the call that wrote it, kept for the record; `planner`
    answers recursion steps (none: a recursion step fails). An unparseable text is a Trace with
    `parse_status` set and no steps (reward 0), never an exception."""
    options = options or RunOptions()
    config = options.config
    within = (within or Round()).funded(config)
    t0 = time.perf_counter()
    trace = Trace.for_task(task, pool.ids, conductor_prompt=messages or [], conductor_output=text,
                           conductor_call=conductor_call, depth=within.depth, parent_trace_id=within.parent_trace_id,
                           run_id=options.run_id)
    result = parse(text, pool.ids, max_steps=within.max_steps(config), allow_empty=within.allow_empty,
                   earlier_round=bool(within.prior))
    if watching():
        notify(_workflow_event(result, trace, pool))
    if isinstance(result, ParseError):
        trace.parse_status, trace.parse_error = result.reason.value, result.detail
    elif result.is_empty:
        trace.workflow = result
    else:
        trace = await execute(result, task, pool, options, planner=planner, budget=within.budget, trace=trace,
                              earlier=within.prior)
    total_usage(trace, time.perf_counter() - t0)
    return trace


def _workflow_event(result: Workflow | ParseError, trace: Trace, pool: Pool) -> dict[str, object]:
    """What a watcher is told once a round's workflow is parsed (conductor/progress.py)."""
    event: dict[str, object] = {"event": "workflow", "depth": trace.depth, "trace_id": trace.trace_id}
    if isinstance(result, ParseError):
        return event | {"parse_error": f"{result.reason.value}: {result.detail}"[:300]}
    return event | {"steps": [{"index": s.index, "worker": pool.specs[s.worker].id, "subtask": s.subtask,
                               "reads": list(s.reads)} for s in result.steps]}


async def plan_and_run(
    task: Task,
    pool: Pool,
    planner: Planner,
    options: RunOptions | None = None,
    *,
    messages: list[Message] | None = None,
    within: Round | None = None,
) -> Trace:
    """Ask `planner` for a workflow (the Conductor prompt over `pool`, unless `messages` are
    given), then `run_plan` it. The planner call has a timeout like every other call; a planner
    that fails, crashes or times out is a Trace with `parse_status="planner_error"`."""
    options = options or RunOptions()
    # a model trained with effort rows states its default level when the caller states none; the
    # level's budget is the round's step limit, in its prompt and in its parse alike
    options = options.at_effort(options.effort or getattr(planner, "default_effort", None))
    config = options.config
    within = (within or Round()).funded(config)
    examples = options.examples
    declared = getattr(planner, "few_shot_examples", None)
    if declared is not None:  # a trained model is prompted as it was trained, whatever the caller's default
        examples = declared
    if messages is None:
        messages = conductor_messages(task.question, pool.specs, examples=examples, max_steps=config.max_steps,
                                      effort=options.effort)
    t0 = time.perf_counter()
    call = _record_call("conductor", None, messages, 0.0)
    try:
        async with asyncio.timeout(config.planner_timeout_s):  # no extra task, unlike wait_for on 3.11
            completion = await planner.plan(messages, pool.specs)
    except Exception as exc:  # noqa: BLE001 - a planner failure is recorded, like a worker's
        call.error = f"timed out after {config.planner_timeout_s:g}s" if isinstance(exc, TimeoutError) else _failure(exc)
        call.usage = Usage(cost_usd=0.0, latency_s=time.perf_counter() - t0)
        trace = Trace.for_task(task, pool.ids, conductor_prompt=messages, conductor_call=call, depth=within.depth,
                               parent_trace_id=within.parent_trace_id, run_id=options.run_id)
        trace.parse_status, trace.parse_error = "planner_error", call.error
        total_usage(trace, time.perf_counter() - t0)
        return trace
    _fill(call, completion)
    if not call.usage.latency_s:
        call.usage.latency_s = time.perf_counter() - t0
    assert within.budget is not None
    within.budget.charge(call.usage.cost_usd, "the Conductor")
    trace = await run_plan(completion.text, task, pool, options, planner=planner, messages=messages,
                           conductor_call=call, within=within)
    trace.wall_s = time.perf_counter() - t0
    return trace
