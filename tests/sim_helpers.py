"""Helpers for the simulated pool's statistical tests: build workers, ask through real step
messages, and measure strategies (one attempt, k attempts + aggregator, attempt + verify)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import mean

from conductor.data.schema import Problem
from conductor.prompts import PriorStep, step_message
from conductor.types import Prices, WorkerSpec
from conductor.workers.simulated import Decision, ProblemBank, SimulatedWorker, on_topic_instruction, render_answer

FAST = {"latency_ms": {"median": 1}, "output_tokens": {"median": 100}}
Instruction = Callable[[Problem], str]


def sim(worker_id: str = "w", problems: Sequence[Problem] = (), bank: ProblemBank | None = None,
        **options: object) -> SimulatedWorker:
    spec = WorkerSpec(id=worker_id, provider="simulated", prices=Prices(input=1, output=2),
                      options={**FAST, **options})
    return SimulatedWorker(spec, bank if bank is not None else ProblemBank(problems))


def on_topic(problem: Problem) -> str:
    return on_topic_instruction(problem)


def decide(worker: SimulatedWorker, problem: Problem, instruction: str,
           seen: Sequence[tuple[str, str]] = ()) -> Decision:
    """One call through a real step message; `seen` = (instruction, response) of earlier steps."""
    context = [PriorStep(i, "x", sub, resp) for i, (sub, resp) in enumerate(seen)]
    _, decision, _ = worker.decide(step_message(problem.question, context, instruction)[0].content)
    return decision


def accuracy(worker: SimulatedWorker, problems: Sequence[Problem], instruction: Instruction = on_topic) -> float:
    return mean(decide(worker, p, instruction(p)).right for p in problems)


def attempt_then_verify(solver: SimulatedWorker, checker: SimulatedWorker, p: Problem) -> bool:
    first = decide(solver, p, on_topic_instruction(p))
    shown = [(on_topic_instruction(p), render_answer(p, first.value or ""))]
    return decide(checker, p, on_topic_instruction(p, "verify"), shown).right


def attempts_then_combine(solvers: Sequence[SimulatedWorker], aggregator: SimulatedWorker, p: Problem) -> bool:
    shown = []
    for w in solvers:
        d = decide(w, p, on_topic_instruction(p))
        shown.append((on_topic_instruction(p), render_answer(p, d.value or "")))
    return decide(aggregator, p, on_topic_instruction(p, "combine"), shown).right
