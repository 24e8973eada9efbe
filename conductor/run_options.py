"""`RunOptions`: how a question is run, the one settings value the executor and the solvers take
(`conductor.executor` re-exports it, where its users import it from)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from conductor.config import ExecutionConfig
from conductor.effort import Effort, step_budget


@dataclass(frozen=True)
class RunOptions:
    """How a question is run: the one settings value `execute`, `run_plan`, `plan_and_run`,
    `conductor.solve.solve` and `solve_many` take (passed once, handed down unchanged to the
    recursion rounds of a question). The planner is not in it: `plan_and_run` and the solvers
    need one, `execute` and `run_plan` only to answer recursion steps."""

    # budgets, limits, timeouts and failure policy (a Method's execution settings)
    config: ExecutionConfig = field(default_factory=ExecutionConfig)
    # the run the traces belong to (the warehouse's `runs`); None: traces of no recorded run
    run_id: str | None = None
    # retry jitter and any other chance in a question's calls; None: a fresh unseeded Random.
    # `solve_many` gives each question its own, from its `seed`.
    rng: random.Random | None = None
    # the Conductor prompt's worked examples, unless a trained planner declares its own
    examples: bool = True
    # how much work the user asked for (stated in the Conductor's prompt); None: not stated
    effort: Effort | None = None

    def at_effort(self, effort: Effort | None) -> RunOptions:
        """These options at `effort` (None: no level stated): the level, and the step limit its
        budget sets (`conductor.effort.step_budget`), the same the Conductor's prompt states."""
        if effort is None:
            return replace(self, effort=None)
        limit = step_budget(effort, self.config.max_steps)
        return replace(self, effort=Effort(effort), config=self.config.model_copy(update={"max_steps": limit}))

    def seeded(self, seed: int) -> RunOptions:
        """These options with their own Random: one question's, reproducible from `seed`."""
        return replace(self, rng=random.Random(seed))
