"""Training as Prefect tasks: thin wrappers over conductor.training and registry/.

A GRPO chunk trains up to a given step from the last checkpoint and checkpoints at its end, so
a retried chunk resumes where the failed attempt last saved instead of starting over."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from conductor.data.schema import Problem
from conductor.training.config import ConductorTrainingConfig, profile_config
from conductor.training.grpo import TrainResult, train_grpo
from conductor.training.pipeline import ensure_model
from conductor.training.problems import local_problems, split_problems


def config_for(profile: str, output_dir: str, overrides: dict[str, Any]) -> ConductorTrainingConfig:
    return profile_config(profile, output_dir, **overrides)  # type: ignore[arg-type]


@task(name="training-problems", cache_policy=NO_CACHE)
def problems_task(eval_fraction: float, seed: int) -> tuple[list[Problem], list[Problem]]:
    return split_problems(local_problems("train"), eval_fraction, seed=seed)


@task(name="warm-start", cache_policy=NO_CACHE, retries=1)
def warm_start_task(profile: str, output_dir: str, overrides: dict[str, Any], train: list[Problem]) -> str:
    """The model GRPO starts from (an earlier warm start in the run dir is reused on retry)."""
    return str(ensure_model(config_for(profile, output_dir, overrides), train))


@task(name="grpo-chunk", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=5,
      task_run_name="grpo-to-step-{until_step}")
def grpo_chunk_task(profile: str, output_dir: str, overrides: dict[str, Any], model: str, until_step: int,
                    train: list[Problem], held_out: list[Problem], run_id: str | None = None) -> dict[str, Any]:
    config = config_for(profile, output_dir, {**overrides, "model_name_or_path": model, "max_steps": until_step})
    result: TrainResult = train_grpo(config, train, held_out, resume=True, run_id=run_id)
    out = asdict(result)
    out["model_dir"] = str(result.model_dir)
    return out


@task(name="register-model", cache_policy=NO_CACHE, retries=1)
def register_task(params: dict[str, Any], chunks: list[dict[str, Any]]) -> dict[str, str]:
    """One MLflow run for the whole training: every chunk's steps, the last chunk's model."""
    from registry.runs import TrainingRun

    last = chunks[-1]
    with TrainingRun(params, run_name="conductor-grpo") as run:
        history = [row for c in chunks for row in c["history"]]
        evals = [row for c in chunks for row in c["eval_history"]]
        for row in history:
            run.log_step(row)
        logged = run.finish(last["model_dir"], history=history, eval_history=evals, samples=last["samples"],
                            summary={"usd_total": last["usd"], "calls_total": last["calls"], "steps_done": last["steps"]})
    return {"run_id": logged.run_id, "model_uri": logged.model.model_uri if logged.model else "",
            "version": logged.model.version if logged.model else ""}
