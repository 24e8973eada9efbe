"""The training flow: problems -> warm start -> GRPO in chunks of steps (each a task that
checkpoints, so a retried chunk resumes) -> one MLflow run, registered as `conductor@challenger`.
With an accelerate config, each chunk runs as `accelerate launch ... conductor train --resume`
(tasks/training.py)."""

from __future__ import annotations

import uuid
from contextlib import nullcontext
from typing import Any

from prefect import flow
from prefect.utilities.annotations import quote
from pydantic import BaseModel, Field

from conductor.simulation import simulated_note
from conductor.training.chunks import ChunkPlan
from conductor.training.config import ConductorTrainingConfig, profile_config
from conductor.training.result import TrainResult
from conductor.workers.pool import read_pool_file
from tasks.records import run_writer
from tasks.training import Registered, grpo_chunk_task, problems_task, register_task, warm_start_task
from tasks.training_sink import TRAINING_METHOD
from warehouse.lifecycle import RunLifecycle, run_here


class TrainingRequest(BaseModel):
    """What to train: a run directory, a profile and its overrides, chunking, the launcher."""

    output_dir: str = Field(description="Run directory (checkpoints, the warm start, chunk configs).")
    profile: str = Field(default="local", description="Training profile (conductor/training/config.py).")
    chunk_steps: int = Field(default=50, ge=1, description="GRPO steps per checkpointed chunk.")
    overrides: dict[str, Any] = Field(default_factory=dict, description="Config fields over the profile's.")
    accelerate_config: str | None = Field(default=None, description="`accelerate launch` config file: each chunk"
                                          " runs as a subprocess under it (None: in this process).")
    warehouse: bool = Field(default=True, description="Send every rollout to the warehouse.")


@flow(name="conductor-training", log_prints=True)
def training_flow(request: TrainingRequest) -> Registered:
    overrides = dict(request.overrides)
    config = profile_config(request.profile, request.output_dir, **overrides)
    # One warehouse run for all chunks (its rollouts, its curve): `running` from here, before the
    # warm start, then finished when registered, failed when anything raises.
    run_id = f"train-{uuid.uuid4().hex[:12]}" if request.warehouse else None
    pool = read_pool_file(config.pool_file)  # the run's pool as it starts (each chunk's TrainResult says it again)
    row = run_here(run_id, "train", method=TRAINING_METHOD, simulated=pool.simulated,
                   params={"profile": request.profile, "output_dir": request.output_dir,
                           "max_steps": config.max_steps, "seed": config.seed}) if run_id else None
    with RunLifecycle(row, run_writer()) if row else nullcontext() as life:
        registered = _train(request, config, overrides, run_id)
        if life is not None:
            life.update(mlflow_run_id=registered.run_id)
    print(f"MLflow run {registered.run_id}: {registered.model_uri} (version {registered.version})")
    return registered


def _train(request: TrainingRequest, config: ConductorTrainingConfig, overrides: dict[str, Any],
           run_id: str | None) -> Registered:
    """Warm start, the chunks, the registration."""
    # Each chunk saves at its end, whatever the profile's save_steps.
    chunk_steps = request.chunk_steps
    overrides["save_steps"] = min(config.save_steps, chunk_steps) if config.save_steps else chunk_steps
    train, held_out = problems_task(config)
    # `quote`: Prefect would otherwise walk every field of every problem (1,900 of them) for futures
    # on each task call (~10 s over a tiny nightly's three training tasks); these lists never hold any.
    train, held_out = quote(train), quote(held_out)
    model = warm_start_task(request.profile, request.output_dir, overrides, train)
    chunks: list[TrainResult] = []
    for until in range(chunk_steps, config.max_steps + chunk_steps, chunk_steps):
        plan = ChunkPlan(profile=request.profile, output_dir=request.output_dir,
                         overrides={**overrides, "model_name_or_path": model}, until_step=min(until, config.max_steps),
                         run_id=run_id, accelerate_config=request.accelerate_config)
        chunk = grpo_chunk_task(plan, train, held_out)
        chunks.append(chunk)
        print(chunk_line(chunk, config.max_steps))
        if not chunk.goes_on:  # budget or early stopping: the run is over
            break
    return register_task(config.to_dict(), chunks)


def chunk_line(chunk: TrainResult, max_steps: int) -> str:
    """A chunk's one progress line: where it ended, its steps' mean reward and KL to the
    reference (docs/training.md says what KL is normal), why it stopped, the spend so far. The
    per-step figures are in MLflow and the warehouse (`v_training_curves`)."""
    rows = chunk.history

    def mean(key: str) -> str:
        values = [r[key] for r in rows if key in r]
        return f"{sum(values) / len(values):.3g}" if values else "n/a"

    return (f"grpo step {chunk.steps}/{max_steps}: reward {mean('reward')}, kl {mean('kl')} (means over the"
            f" chunk's {len(rows)} logged steps), stop={chunk.stop_reason}, spend ${chunk.usd:.2f}"
            + simulated_note(chunk.simulated))


if __name__ == "__main__":
    import sys

    training_flow(TrainingRequest(output_dir=sys.argv[1] if len(sys.argv) > 1 else ".conductor/training/flow"))
