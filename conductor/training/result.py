"""What a GRPO run (or one checkpointed chunk of it) leaves, as one typed, serialisable value.

`train_grpo` returns it; the training flow's chunk task hands it to the flow and to the
registration task; a chunk launched under `accelerate launch` writes it as JSON
(`conductor train --result`) and tasks/launch.py reads it back with `from_json`, so the
in-process and the launched chunk give the flow the same value, never a dict read by key."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Why a run stopped: the run's own `max_steps`; a chunk's end (`config.stop_at_step`, the run's
# schedule goes on in the next chunk); the `max_usd` budget; held-out early stopping.
StopReason = Literal["max_steps", "chunk_end", "budget", "early_stopping"]
# The stop reasons after which the next chunk of a chunked run still runs.
GOES_ON: tuple[StopReason, ...] = ("chunk_end", "max_steps")


class TrainResult(BaseModel):
    """A GRPO run's (or chunk's) result: its model, why it stopped, its spend and its histories."""

    model_config = ConfigDict(extra="forbid")

    model_dir: Path = Field(description="The final model dir: the best held-out one when early stopping kept one.")
    steps: int = Field(description="The global step reached (a resumed chunk counts from the run's start).")
    stop_reason: StopReason = Field(description="Why it stopped (see StopReason).")
    usd: float = Field(description="Worker spend of this run's rollouts, every rank's share summed"
                                   " (invented prices when `simulated`).")
    calls: int = Field(description="Worker calls of the rollouts, every rank's summed.")
    rollouts: int = Field(description="Workflows run and rewarded, every rank's summed.")
    wall_s: float = Field(description="Wall seconds of train_grpo (rank 0's when launched).")
    history: list[dict[str, float]] = Field(default_factory=list, description="One row per logged GRPO step"
                                            " (TRL's figures, the reward's, `step`, `usd_total`, `calls_total`).")
    eval_history: list[dict[str, float]] = Field(default_factory=list, description="One row per held-out"
                                                 " evaluation (`step`, `eval_accuracy`, ...).")
    best_eval_accuracy: float | None = Field(default=None, description="The best held-out accuracy (None: no"
                                             " held-out evaluation ran).")
    best_step: int | None = Field(default=None, description="The step of best_eval_accuracy (None: none ran).")
    samples: list[dict[str, str]] = Field(default_factory=list, description="The last held-out evaluation's"
                                          " workflows as table rows (question, domain, pool, workflow, parse, correct).")
    time_split: dict[str, float] = Field(default_factory=dict, description="Per-step wall and CPU seconds of"
                                         " generation, reward and the rest of the step (grpo.StepTimer.split).")
    world_size: int = Field(default=1, ge=1, description="Processes that trained (>1 under accelerate).")
    simulated: bool = Field(description="Whether the pool the run loaded is simulated (conductor/simulation.py):"
                                        " its figures are then the simulation's, not models'.")

    @property
    def goes_on(self) -> bool:
        """Whether a chunked run's next chunk runs (False after a budget or early stop)."""
        return self.stop_reason in GOES_ON

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> TrainResult:
        return cls.model_validate_json(text)
