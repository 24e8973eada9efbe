"""The training flow: problems -> warm start -> GRPO in chunks of steps (each a task that
checkpoints, so a retried chunk resumes) -> one MLflow run, registered as `conductor@challenger`."""

from __future__ import annotations

import uuid
from typing import Any

from prefect import flow

from tasks.training import config_for, grpo_chunk_task, problems_task, register_task, warm_start_task


@flow(name="conductor-training", log_prints=True)
def training_flow(output_dir: str, profile: str = "local", chunk_steps: int = 50,
                  overrides: dict[str, Any] | None = None, warehouse: bool = True) -> dict[str, str]:
    overrides = dict(overrides or {})
    # One warehouse run for all chunks (its rollouts, its curve), finished when registered.
    run_id = f"train-{uuid.uuid4().hex[:12]}" if warehouse else None
    config = config_for(profile, output_dir, overrides)
    # Each chunk saves at its end, whatever the profile's save_steps.
    overrides["save_steps"] = min(config.save_steps, chunk_steps) if config.save_steps else chunk_steps
    train, held_out = problems_task(config)
    model = warm_start_task(profile, output_dir, overrides, train)
    chunks = []
    for until in range(chunk_steps, config.max_steps + chunk_steps, chunk_steps):
        chunk = grpo_chunk_task(profile, output_dir, overrides, model, min(until, config.max_steps), train, held_out,
                                 run_id=run_id)
        chunks.append(chunk)
        print(f"step {chunk['steps']}: stop={chunk['stop_reason']} spend=${chunk['usd']:.2f} (simulated pool prices "
              f"when the pool is simulated)")
        if chunk["stop_reason"] != "max_steps":  # budget or early stopping: the run is over
            break
    registered = register_task(config.to_dict(), chunks, run_id=run_id)
    print(f"MLflow run {registered['run_id']}: {registered['model_uri']} (version {registered['version']})")
    return registered


if __name__ == "__main__":
    import sys

    training_flow(output_dir=sys.argv[1] if len(sys.argv) > 1 else ".conductor/training/flow")
