"""The simulated provider: an offline environment (like a gym) for tests and for training the
Conductor. Its numbers describe this environment only: they are never benchmark results.

The model of a worker (difficulty, skill, instruction quality, roles, answer formats) is stated
in docs/simulated.md; pool-file options are `SimulatedOptions`.
"""

from __future__ import annotations

from conductor.types import WorkerSpec
from conductor.workers.registry import BuildContext, register_provider
from conductor.workers.simulated.answers import (
    canonical,
    extract_answer,
    gold_answer,
    is_right,
    render_answer,
    verdict_of,
    wrong_answers,
)
from conductor.workers.simulated.instructions import asks_for_review, instruction_quality, on_topic_instruction
from conductor.workers.simulated.latent import ability, difficulty_quantile, problem_difficulty
from conductor.workers.simulated.options import Lognormal, SimulatedOptions
from conductor.workers.simulated.worker import Decision, ProblemBank, SimulatedWorker, seen_answers

__all__ = [
    "Decision", "Lognormal", "ProblemBank", "SimulatedOptions", "SimulatedWorker", "ability", "asks_for_review",
    "canonical", "difficulty_quantile", "extract_answer", "gold_answer", "instruction_quality", "is_right",
    "on_topic_instruction", "problem_difficulty", "render_answer", "seen_answers", "verdict_of", "wrong_answers",
]


@register_provider("simulated")
def _build(spec: WorkerSpec, context: BuildContext) -> SimulatedWorker:
    bank = context.get("bank")
    if bank is None:
        bank = ProblemBank(context.get("problems", ()))
    return SimulatedWorker(spec, bank, latency_scale=context.get("latency_scale", 1.0))
