"""The async TRL reward function: run every completion of the batch as a workflow over its
row's offered pool, concurrently, verify it, and return 0 (unparseable) / 0.5 (parsed, wrong)
/ 1 (right), optionally minus `cost_weight * usd`, and minus `rate * worker calls` on a row that
states an effort level (the level's rate, conductor/training/config.py `effort_rates`).

Recursion rows get a forced second round written by the current policy after it sees the
first round's workflow and responses; the first round's reward becomes (1 - d)·r0 + d·r1 and
the second round is a Trace whose parent is the first. Second-round rows (a `prior` column,
conductor/training/second_round.py) are second rounds themselves: their completion runs after
the first round they show, and earns the final answer's reward (the first round's if it keeps it).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conductor.config import ExecutionConfig
from conductor.executor import Round, RunOptions
from conductor.data.schema import Problem
from conductor.effort import Effort
from conductor.prompts import conductor_messages, recursion_messages
from conductor.reward import DEFAULT_RECURSION_DISCOUNT, blend, reward_of
from conductor.shapes import shape_shares
from conductor.trace import Trace
from conductor.training.policy import Policy, PolicyPlanner
from conductor.training.rollout import prior_steps, rollout
from conductor.training.second_round import read_prior, second_round_metrics
from conductor.workers.pool import Pool
from conductor.workflow import DEFAULT_MAX_STEPS

TraceSink = Callable[[Trace, int], None]
"""Receives every rollout's trace (second rounds too) and the training step it belongs to."""


@dataclass
class RewardStats:
    """Running totals across the whole run (the budget and the progress bar read these)."""

    rollouts: int = 0
    calls: int = 0
    usd: float = 0.0
    parsed: int = 0
    correct: int = 0
    last_batch: dict[str, float] = field(default_factory=dict)


def completion_text(completion: Any) -> str:
    """TRL passes plain strings, or (conversational datasets) a list of messages."""
    if isinstance(completion, str):
        return completion
    return "".join(m["content"] for m in completion if m.get("role") == "assistant") or "".join(
        m.get("content", "") for m in completion
    )


@dataclass
class Scored:
    trace: Trace
    second: Trace | None
    reward: float
    # further runs of the same completion with other dice (`second_round_executions`)
    repeats: tuple[Trace, ...] = ()
    # a second-round row's: what keeping the answer earns (its first round's reward)
    first_reward: float | None = None

    @property
    def rounds(self) -> list[Trace]:
        """Every trace the completion ran: its round(s), then its repeats."""
        return [t for t in (self.trace, self.second) if t is not None] + list(self.repeats)


def worker_calls(rounds: Sequence[Trace]) -> int:
    """Worker calls of a rollout's rounds (and their recursion rounds), the Conductor's own left out."""
    return sum(len(r.all_calls()) - (r.conductor_call is not None) for r in rounds)


def effort_charge(scored: Scored, rate: float) -> float:
    """What a rollout pays for its calls at its effort level's rate. An unparsed one made no call:
    its reward stays 0, below every parsed workflow's (the rates are bounded for that)."""
    return rate * worker_calls([t for t in (scored.trace, scored.second) if t is not None])


class WorkflowReward:
    """Callable by TRL's GRPOTrainer (`reward_funcs=[WorkflowReward(...)]`)."""

    __name__ = "workflow_reward"  # TRL names the reward's metrics after this

    def __init__(
        self,
        pool: Pool,
        *,
        execution: ExecutionConfig | None = None,
        examples: bool = True,
        max_steps: int = DEFAULT_MAX_STEPS,
        cost_weight: float = 0.0,
        recursion_discount: float = DEFAULT_RECURSION_DISCOUNT,
        concurrency: int = 64,
        policy: Policy | None = None,
        sink: TraceSink | None = None,
        run_id: str | None = None,
        seed: int = 0,
        effort_rates: Mapping[Effort, float] | None = None,
        second_round_cost_weight: float | None = None,
        second_round_executions: int = 1,
    ) -> None:
        if second_round_executions < 1:
            raise ValueError(f"second_round_executions must be at least 1, got {second_round_executions}")
        self.pool = pool
        self.execution = execution or ExecutionConfig(max_steps=max_steps)
        self.examples, self.max_steps = examples, max_steps
        self.cost_weight, self.recursion_discount = cost_weight, recursion_discount
        # what a second-round row's own calls cost (keeping the answer costs nothing)
        self.second_round_cost_weight = cost_weight if second_round_cost_weight is None else second_round_cost_weight
        self.second_round_executions = second_round_executions
        self.concurrency = concurrency
        self.policy = policy  # set after the trainer exists: the trainer's own model
        self.sink, self.run_id, self.seed = sink, run_id, seed
        self.stats = RewardStats()
        self._batches = 0
        # charge per worker call at each effort level a row may state (a level not here: 0)
        self.effort_rates = dict(effort_rates or {})

    async def score_one(self, text: str, problem: Problem, pool_ids: Sequence[str], recursion: bool, rng: random.Random,
                        effort: Effort | None = None) -> Scored:
        offered = self.pool.offer(list(pool_ids))
        # the row's prompt, as the trace records it (with the row's effort line)
        messages = conductor_messages(problem.task_text, offered.specs, examples=self.examples, max_steps=self.max_steps,
                                      effort=effort)
        planner = PolicyPlanner(self.policy) if self.policy is not None else None
        options = RunOptions(config=self.execution, run_id=self.run_id, rng=rng).at_effort(effort)
        trace = await rollout(text, problem, offered, options, messages=messages, planner=planner)
        r0 = reward_of(trace)
        second = None
        if recursion and self.policy is not None and trace.workflow is not None and trace.steps:
            second = await self.second_round(trace, problem, offered, options)
            # An empty second workflow keeps the first answer: it scores as the first did.
            r1 = r0 if second.workflow is not None and second.workflow.is_empty else reward_of(second)
            second.reward = r1
            trace.reward = blend(r0, r1, self.recursion_discount)
        usd = sum(t.usage.cost_usd or 0.0 for t in (trace, second) if t is not None)
        reward = (trace.reward if trace.reward is not None else r0) - self.cost_weight * usd
        return Scored(trace=trace, second=second, reward=reward)

    async def second_round(self, first: Trace, problem: Problem, offered: Pool, options: RunOptions) -> Trace:
        assert self.policy is not None
        prior = prior_steps(first)
        messages = recursion_messages(problem.task_text, offered.specs, prior, max_steps=self.max_steps)
        text = await self.policy.generate(messages)
        return await rollout(
            text, problem, offered, options, messages=messages, planner=PolicyPlanner(self.policy),
            within=Round(depth=first.depth + 1, parent_trace_id=first.trace_id, prior=tuple(prior)),
        )

    async def score_second_round(self, text: str, problem: Problem, pool_ids: Sequence[str], prior: str,
                                 rng: random.Random) -> Scored:
        """A second-round row's completion (conductor/training/second_round.py): run with the first
        round it read (its steps reading "prev" get that round's responses); keeping the answer
        earns the first round's reward, anything else the final answer's, less
        `second_round_cost_weight` x the second round's $. A workflow with steps is run
        `second_round_executions` times with independent dice and earns the mean."""
        steps, first_reward = read_prior(prior)
        offered = self.pool.offer(list(pool_ids))
        messages = recursion_messages(problem.task_text, offered.specs, steps, max_steps=self.max_steps)

        async def run(dice: random.Random) -> Trace:
            options = RunOptions(config=self.execution, run_id=self.run_id, rng=dice)
            trace = await rollout(text, problem, offered, options, messages=messages,
                                  within=Round(depth=1, prior=tuple(steps)))
            kept = trace.parse_status == "ok" and trace.workflow is not None and trace.workflow.is_empty
            trace.reward = first_reward if kept else reward_of(trace)
            return trace

        trace = await run(rng)
        repeats: tuple[Trace, ...] = ()
        if trace.steps and self.second_round_executions > 1:  # dice only matter where workers were called
            seeds = [rng.getrandbits(32) for _ in range(self.second_round_executions - 1)]
            repeats = tuple(await asyncio.gather(*(run(random.Random(s)) for s in seeds)))
        runs = (trace, *repeats)
        reward = sum(t.reward - self.second_round_cost_weight * (t.usage.cost_usd or 0.0) for t in runs) / len(runs)
        return Scored(trace=trace, second=None, reward=reward, repeats=repeats, first_reward=first_reward)

    async def __call__(
        self,
        prompts: list[Any],
        completions: list[Any],
        problem: list[str],
        pool_ids: list[list[str]],
        recursion: list[bool] | None = None,
        prior: list[str] | None = None,
        effort: list[str | None] | None = None,
        first_round_step: list[int] | None = None,
        log_extra: Callable[[str, list], None] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        trainer_state: Any = None,
        **_: Any,
    ) -> list[float]:
        step = int(getattr(trainer_state, "global_step", self._batches))
        self._batches += 1
        gate = asyncio.Semaphore(self.concurrency)
        recursion = recursion or [False] * len(completions)
        # A GRPO group repeats its prompt's row: each distinct problem is read once per batch (a coding
        # problem's JSON holds its tests), and its rollouts share one (frozen) Problem.
        problems: dict[str, Problem] = {}
        for row in problem:
            if row not in problems:
                problems[row] = Problem.model_validate_json(row)

        async def one(i: int) -> Scored:
            async with gate:
                # Seeded by step and position: a rerun of the same batch meets the same workers' dice.
                rng = random.Random(hash((self.seed, step, i)) & 0xFFFFFFFF)
                if prior is not None and prior[i]:  # a second-round row
                    return await self.score_second_round(
                        completion_text(completions[i]), problems[problem[i]], pool_ids[i], prior[i], rng)
                return await self.score_one(
                    completion_text(completions[i]), problems[problem[i]], pool_ids[i], bool(recursion[i]), rng,
                    levels[i])

        levels = [Effort(e) if e else None for e in (effort or [None] * len(completions))]
        scored = await asyncio.gather(*(one(i) for i in range(len(completions))))
        self._account(scored, step, log_extra, log_metric)
        if log_metric is not None and prior is not None and first_round_step is not None:
            # How many optimizer steps old the policy that wrote the second-round rows' first rounds
            # is (0-1 when they are written as the rows are drawn); no second-round row: not logged.
            ages = [step - v for p, v in zip(prior, first_round_step) if p and v >= 0]
            if ages:
                log_metric("second_round_age", sum(ages) / len(ages))
        if log_metric is not None and prior is not None:
            # What round 2 does after each level's first round, and what acting earns there: a
            # round 2 that should depend on the level but does not shows here first.
            second = [(levels[i].value if levels[i] else "any", s.trace.workflow,
                       sum(t.reward for t in s.rounds) / len(s.rounds) - s.first_reward)
                      for i, s in enumerate(scored) if s.first_reward is not None]
            for name, value in second_round_metrics(second).items():
                log_metric(name, value)
        # A level prices the first round its row's prompt states. A second-round row's own calls are
        # priced by `second_round_cost_weight` alone: the caller asked for the second round (the
        # paper forces it on a share of rows), and charged at low's rate a check that buys 5 points
        # after a one-call first round would never pay (docs/training.md, "Second rounds").
        return [s.reward - (effort_charge(s, self.effort_rates.get(level, 0.0)) if level and not (prior and prior[i])
                            else 0.0)
                for i, (s, level) in enumerate(zip(scored, levels))]

    def _account(self, scored: list[Scored], step: int, log_extra: Any, log_metric: Any) -> None:
        traces = [s.trace for s in scored]
        rounds = [s.rounds for s in scored]
        parse = [t.parse_status for t in traces]
        calls = [worker_calls(rs) for rs in rounds]
        usd = [sum(r.usage.cost_usd or 0.0 for r in rs) for rs in rounds]
        correct = [bool(t.verdict and t.verdict.correct) for t in traces]
        n = len(scored) or 1
        batch = {
            "format_rate": sum(p == "ok" for p in parse) / n,
            "accuracy": sum(correct) / n,
            "calls_per_rollout": sum(calls) / n,
            "usd_per_rollout": sum(usd) / n,
            "steps_per_rollout": sum(len(t.workflow) if t.workflow else 0 for t in traces) / n,
        }
        self.stats.rollouts += len(scored)
        self.stats.calls += sum(calls)
        self.stats.usd += sum(usd)
        self.stats.parsed += sum(p == "ok" for p in parse)
        self.stats.correct += sum(correct)
        self.stats.last_batch = {**batch, "usd_total": self.stats.usd}
        if log_extra is not None:
            log_extra("parse", parse)
            log_extra("steps", [len(t.workflow) if t.workflow else 0 for t in traces])
            log_extra("calls", calls)
            log_extra("usd", usd)
        if log_metric is not None:
            for name, value in self.stats.last_batch.items():
                log_metric(name, value)
            # Which strategies the policy writes, per domain (first rounds, as the curve counts
            # them): the "strategies over training" plot and the warehouse's v_training_shapes
            # both name shapes with conductor.shapes, so the two agree.
            for name, value in shape_shares([t for t in traces if t.depth == 0]).items():
                log_metric(name, value)
        if self.sink is not None:
            for rs in rounds:
                for t in rs:
                    self.sink(t, step)
