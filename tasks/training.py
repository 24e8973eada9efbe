"""Training as Prefect tasks: thin wrappers over conductor.training and registry/.

A GRPO chunk trains up to a given step from the last checkpoint and checkpoints at its end, so
a retried chunk resumes where the failed attempt last saved instead of starting over."""

from __future__ import annotations

import logging
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from conductor.data.schema import Problem
from conductor.training.config import ConductorTrainingConfig, profile_config
from conductor.training.grpo import train_grpo
from conductor.training.result import TrainResult
from conductor.training.pipeline import ensure_model, training_split
from conductor.training.chunks import ChunkPlan
from tasks.launch import run_chunk
from tasks.stops import unless_stopped
from tasks.training_sink import TRAINING_METHOD, WarehouseSink


@task(name="training-problems", cache_policy=NO_CACHE)
def problems_task(config: ConductorTrainingConfig) -> tuple[list[Problem], list[Problem]]:
    """(train, validation) of the generated bank (its held-out split is left for evaluation)."""
    return training_split(config)


# Prints stay prints in the training tasks (log_prints=False, whatever the flow says).
# `datasets` fingerprints TRL's dataset transforms with dill, which finds a function's globals
# by redirecting sys.stdout and reading `dis.dis` back from it; Prefect's print-to-log takes
# `print(file=None)` for a log line even while sys.stdout is redirected, so dill read nothing
# back and the run's log got the bytecode instead (~200 lines a warm start, ~10 a GRPO chunk).
# The trainers' figures reach the run logger through `on_log`: a step's figures at DEBUG (they
# are in MLflow and the warehouse; at INFO a night printed ~200 of them), a trainer's closing
# summary (`train_runtime`, `train_loss`) at INFO. The flow prints one line per GRPO chunk.
@task(name="warm-start", cache_policy=NO_CACHE, retries=1, retry_condition_fn=unless_stopped, log_prints=False)
def warm_start_task(profile: str, output_dir: str, overrides: dict[str, Any], train: list[Problem]) -> str:
    """The model GRPO starts from (an earlier warm start in the run dir is reused on retry)."""
    logger = get_run_logger()
    model = ensure_model(profile_config(profile, output_dir, **overrides), train,
                         on_log=lambda figures: logger.log(_level(figures), "sft %s", _figures(figures)))
    logger.info("GRPO starts from %s", model)
    return str(model)


def _level(logs: dict[str, Any]) -> int:
    """INFO for a trainer's end-of-training summary, DEBUG for a step's figures."""
    return logging.INFO if "train_runtime" in logs else logging.DEBUG


def _figures(logs: dict[str, Any]) -> str:
    """step=10 loss=0.4525 learning_rate=0.002923 ... (4 significant digits): one log line."""
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in logs.items())


@task(name="grpo-chunk", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=5, retry_condition_fn=unless_stopped,
      task_run_name="grpo-to-step-{plan.until_step}", log_prints=False)  # as warm-start, above
def grpo_chunk_task(plan: ChunkPlan, train: list[Problem], held_out: list[Problem]) -> TrainResult:
    """GRPO up to `plan.until_step`; with a `run_id`, every rollout goes to the warehouse under it.
    With an accelerate config the chunk is a subprocess (`launch.run_chunk`): the same config,
    resumed from the run's last checkpoint, its output streamed into this task's log."""
    if plan.accelerate_config:
        return run_chunk(plan, get_run_logger())
    config = plan.config()
    run_id = plan.run_id
    sink = WarehouseSink.for_settings(run_id=run_id) if run_id else None  # the run's row is the flow's
    logger = get_run_logger()
    result = train_grpo(config, train, held_out, resume=True, run_id=run_id, sink=sink,
                        on_log=lambda figures: logger.debug("grpo %s", _figures(figures)))
    if sink is not None:
        sink.flush()  # the run's row is the flow's (its RunLifecycle)
    return result


class Registered(BaseModel):
    """A training run as registered in MLflow: the run, the model and its version."""

    run_id: str  # the MLflow run
    model_uri: str  # "" when no model was logged
    version: str  # the registered version ("" when none)
    strategies_plot: str = ""  # the MLflow artifact path of the strategies-over-training plot ("" when none)


@task(name="register-model", cache_policy=NO_CACHE, retries=1, retry_condition_fn=unless_stopped)
def register_task(params: dict[str, Any], chunks: list[TrainResult]) -> Registered:
    """One MLflow run for the whole training: every chunk's steps, the last chunk's model (the
    warehouse run's row, and its MLflow run id, are the flow's RunLifecycle's)."""
    from registry.runs import MODEL_KEY_TAG, STRATEGIES_PLOT, TrainingRun, model_key, registered_run

    last = chunks[-1]
    key = model_key(last.model_dir)
    # A rerun after a stop that came once the model was registered: that version, not a second one.
    done = registered_run(key)
    if done is not None and done.model is not None:
        get_run_logger().info("model %s is registered already: version %s (MLflow run %s)", last.model_dir,
                              done.model.version, done.run_id)
        return Registered(run_id=done.run_id, model_uri=done.model.model_uri, version=done.model.version,
                          strategies_plot=STRATEGIES_PLOT if STRATEGIES_PLOT in done.plots else "")
    with TrainingRun(params, simulated=last.simulated, run_name=TRAINING_METHOD, tags={MODEL_KEY_TAG: key}) as run:
        history = [row for c in chunks for row in c.history]
        evals = [row for c in chunks for row in c.eval_history]
        for row in history:
            run.log_step(row)
        logged = run.finish(str(last.model_dir), history=history, eval_history=evals, samples=last.samples,
                            summary={"usd_total": last.usd, "calls_total": last.calls, "steps_done": last.steps})
    return Registered(run_id=logged.run_id, model_uri=logged.model.model_uri if logged.model else "",
                      version=logged.model.version if logged.model else "",
                      strategies_plot=STRATEGIES_PLOT if STRATEGIES_PLOT in logged.plots else "")
