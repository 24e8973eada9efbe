"""A checkpointed piece of a training run, as a value: what the training flow hands to each GRPO
chunk, and what `conductor train --config` reads back when the chunk is launched under
`accelerate launch` (tasks/launch.py), so both build the run's config the one way
(`profile_config`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from conductor.profiles import Profile
from conductor.training.config import ConductorTrainingConfig, profile_config


class ChunkPlan(BaseModel):
    """One checkpointed GRPO chunk: the run's profile and overrides (the model included) up to
    `until_step`, its warehouse run, and the launcher. As JSON it is what `conductor train
    --config` reads, so a launched chunk builds the very config the in-process one would."""

    profile: Profile
    output_dir: str
    overrides: dict[str, Any]
    until_step: int
    run_id: str | None = None  # the warehouse run every rollout goes to (None: none)
    accelerate_config: str | None = None  # run under `accelerate launch --config_file` (None: in-process)

    def config(self) -> ConductorTrainingConfig:
        """The run's config, ending at `until_step` (the schedule's horizon stays the run's `max_steps`)."""
        return profile_config(self.profile, self.output_dir, **{**self.overrides, "stop_at_step": self.until_step})
