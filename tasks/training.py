"""Training as Prefect tasks: thin wrappers over conductor.training and registry/.

A GRPO chunk trains up to a given step from the last checkpoint and checkpoints at its end, so
a retried chunk resumes where the failed attempt last saved instead of starting over."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from conductor.config import load_settings
from conductor.data.schema import Problem
from conductor.trace import Trace
from conductor.training.config import ConductorTrainingConfig, profile_config
from conductor.training.grpo import TrainResult, train_grpo
from conductor.training.pipeline import ensure_model, training_split
from conductor.workers.pool import read_pool_file
from tasks.launch import ChunkPlan, run_chunk
from warehouse.records import Run
from warehouse.staging import ingest_staged, stage_traces
from warehouse.store import TraceStore


def config_for(profile: str, output_dir: str, overrides: dict[str, Any]) -> ConductorTrainingConfig:
    return profile_config(profile, output_dir, **overrides)  # type: ignore[arg-type]


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
@task(name="warm-start", cache_policy=NO_CACHE, retries=1, log_prints=False)
def warm_start_task(profile: str, output_dir: str, overrides: dict[str, Any], train: list[Problem]) -> str:
    """The model GRPO starts from (an earlier warm start in the run dir is reused on retry)."""
    logger = get_run_logger()
    model = ensure_model(config_for(profile, output_dir, overrides), train,
                         on_log=lambda figures: logger.log(_level(figures), "sft %s", _figures(figures)))
    logger.info("GRPO starts from %s", model)
    return str(model)


def _level(logs: dict[str, Any]) -> int:
    """INFO for a trainer's end-of-training summary, DEBUG for a step's figures."""
    return logging.INFO if "train_runtime" in logs else logging.DEBUG


def _figures(logs: dict[str, Any]) -> str:
    """step=10 loss=0.4525 learning_rate=0.002923 ... (4 significant digits): one log line."""
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in logs.items())


@task(name="grpo-chunk", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=5,
      task_run_name="grpo-to-step-{plan.until_step}", log_prints=False)  # as warm-start, above
def grpo_chunk_task(plan: ChunkPlan, train: list[Problem], held_out: list[Problem]) -> dict[str, Any]:
    """GRPO up to `plan.until_step`; with a `run_id`, every rollout goes to the warehouse under it.
    With an accelerate config the chunk is a subprocess (`launch.run_chunk`): the same config,
    resumed from the run's last checkpoint, its output streamed into this task's log."""
    if plan.accelerate_config:
        return run_chunk(plan, get_run_logger())
    config = plan.config()
    run_id = plan.run_id
    sink = WarehouseSink.for_settings(run_id=run_id, simulated=read_pool_file(config.pool_file).simulated) if run_id else None
    logger = get_run_logger()
    result: TrainResult = train_grpo(config, train, held_out, resume=True, run_id=run_id, sink=sink,
                                     on_log=lambda figures: logger.debug("grpo %s", _figures(figures)))
    if sink is not None:
        sink.flush()  # the run stays `running` until register_task closes it
    out = asdict(result)
    out["model_dir"] = str(result.model_dir)
    return out


class Registered(BaseModel):
    """A training run as registered in MLflow: the run, the model and its version."""

    run_id: str  # the MLflow run
    model_uri: str  # "" when no model was logged
    version: str  # the registered version ("" when none)
    strategies_plot: str = ""  # the MLflow artifact path of the strategies-over-training plot ("" when none)


@task(name="register-model", cache_policy=NO_CACHE, retries=1)
def register_task(params: dict[str, Any], chunks: list[dict[str, Any]], run_id: str | None = None) -> Registered:
    """One MLflow run for the whole training: every chunk's steps, the last chunk's model; the
    warehouse run `run_id` (when given) gets its MLflow run id and is marked finished."""
    from registry.runs import STRATEGIES_PLOT, TrainingRun

    last = chunks[-1]
    simulated = read_pool_file(params["pool_file"]).simulated
    with TrainingRun(params, simulated=simulated, run_name="conductor-grpo") as run:
        history = [row for c in chunks for row in c["history"]]
        evals = [row for c in chunks for row in c["eval_history"]]
        for row in history:
            run.log_step(row)
        logged = run.finish(last["model_dir"], history=history, eval_history=evals, samples=last["samples"],
                            summary={"usd_total": last["usd"], "calls_total": last["calls"], "steps_done": last["steps"]})
    if run_id:
        WarehouseSink.for_settings(run_id=run_id, simulated=simulated).close("finished", mlflow_run_id=logged.run_id)
    return Registered(run_id=logged.run_id, model_uri=logged.model.model_uri if logged.model else "",
                      version=logged.model.version if logged.model else "",
                      strategies_plot=STRATEGIES_PLOT if STRATEGIES_PLOT in logged.plots else "")


class WarehouseSink:
    """The reward's `sink(trace, step)`, wired to the warehouse: each training step's rollouts
    (every round, with the run id) are staged as one atomic batch and ingested, and the step's
    curve (reward, accuracy, parse_rate, mean_steps, cost_usd over its first-round rollouts)
    goes to `training_metrics`, which `v_training_curves` reads; each rollout's step goes to
    `training_rollouts`, which `v_training_shapes` reads (shapes per domain per step). The run
    is a `runs` row of kind `train`; its id is the MLflow run id when the rollouts carry one (the
    tracker passes it to the reward), and that id is also its `mlflow_run_id`. `close()` flushes the last step and
    marks the run finished (or failed). `step` is the trainer's step when the rollouts were
    generated (0 = before the first update)."""

    def __init__(self, warehouse_path: str | Path, staging_dir: str | Path, *, run_id: str | None = None,
                 params: dict[str, Any] | None = None, simulated: bool | None = None, method: str = "conductor-grpo",
                 rank: int | None = None) -> None:
        self.warehouse_path, self.staging_dir = Path(warehouse_path), Path(staging_dir)
        # Under accelerate every rank scores its own slice of each batch: a rank (`rank` set) only
        # stages its rollouts (one DuckDB file takes one writing process), and the chunk's task
        # ingests them once the launch ends (tasks/launch.py).
        self.rank = rank
        self.run_id, self.params, self.simulated, self.method = run_id, dict(params or {}), simulated, method
        self.steps_written: list[int] = []
        self._buffer: list[Trace] = []
        self._step: int | None = None
        self._mlflow_run_id: str | None = None
        self._started_at = datetime.now(timezone.utc)

    @classmethod
    def for_settings(cls, params: dict[str, Any] | None = None, simulated: bool | None = None,
                     run_id: str | None = None, rank: int | None = None) -> WarehouseSink:
        """The sink `conductor train` finds through the `conductor.training_sinks` entry point."""
        settings = load_settings()
        return cls(settings.warehouse_path, settings.home / "staging", params=params, simulated=simulated,
                   run_id=run_id, rank=rank)

    def __call__(self, trace: Trace, step: int) -> None:
        if self.run_id is None:
            self.run_id = trace.run_id or f"train-{uuid.uuid4().hex[:12]}"
            self._mlflow_run_id = trace.run_id  # the tracker's run id reached the reward
        if trace.run_id is None:
            trace.run_id = self.run_id
        if self._step is not None and step != self._step and self._buffer:
            self.flush()
        self._step = step
        self._buffer.append(trace)

    def _run_row(self, status: str) -> Run:
        done = status != "running"
        return Run(run_id=self.run_id or "", kind="train", method=self.method, simulated=self.simulated, status=status,
                   host=socket.gethostname(), pid=os.getpid(), started_at=self._started_at,
                   finished_at=datetime.now(timezone.utc) if done else None, params=self.params,
                   mlflow_run_id=self._mlflow_run_id)

    def flush(self) -> None:
        if not self._buffer or self.run_id is None or self._step is None:
            return
        traces, step = self._buffer, self._step
        self._buffer = []
        if self.rank is not None:
            stage_traces(self.staging_dir, traces, batch_id=f"{self.run_id}-step{step}-rank{self.rank}")
            self.steps_written.append(step)
            return
        stage_traces(self.staging_dir, traces, batch_id=f"{self.run_id}-step{step}")
        with TraceStore(self.warehouse_path) as store:
            if not self.steps_written:
                store.write_runs([self._run_row("running")])
            ingest_staged(store, self.staging_dir)
            store.write_training_metrics(self.run_id, step, step_curve(traces))
            store.write_training_rollouts(self.run_id, step, [t.trace_id for t in traces])
        self.steps_written.append(step)

    def close(self, status: str = "finished", *, mlflow_run_id: str | None = None) -> None:
        self.flush()
        if self.run_id is None or self.rank is not None:
            return
        self._mlflow_run_id = mlflow_run_id or self._mlflow_run_id
        with TraceStore(self.warehouse_path) as store:
            store.write_runs([self._run_row(status)])


def step_curve(traces: list[Trace]) -> dict[str, float]:
    """One step's curve from its first-round rollouts (second rounds only feed the blend)."""
    firsts = [t for t in traces if t.parent_trace_id is None] or traces
    n = len(firsts)
    return {
        "reward": sum(t.reward or 0.0 for t in firsts) / n,
        "accuracy": sum(bool(t.verdict and t.verdict.correct) for t in firsts) / n,
        "parse_rate": sum(t.parse_status == "ok" for t in firsts) / n,
        "mean_steps": sum(len(t.workflow) if t.workflow else 0 for t in firsts) / n,
        "cost_usd": sum(t.usage.cost_usd or 0.0 for t in traces),
        "rollouts": float(n),
    }


def ingest_launched(run_id: str, simulated: bool) -> int:
    """After an accelerate launch: the rollouts its ranks staged under `run_id`, ingested by this
    process (the run's `running` row first). Returns the batches ingested."""
    settings = load_settings()
    sink = WarehouseSink.for_settings(run_id=run_id, simulated=simulated)
    with TraceStore(sink.warehouse_path) as store:
        store.write_runs([sink._run_row("running")])
        return ingest_staged(store, sink.staging_dir).batches if (settings.home / "staging").is_dir() else 0
