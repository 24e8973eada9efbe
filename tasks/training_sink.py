"""Where a training run's rollouts go: the warehouse sink (the reward's `sink(trace, step)`) and
the ingest of what an accelerate-launched chunk's ranks staged. Staged batches go to the
settings' `staging_dir`, the one staging rule (conductor/config.py).

Who writes the run's row: a sink that names its run (`conductor train` alone) opens the row's
`RunLifecycle` when it is made, before the warm start, so a run killed at any point leaves a row
(`running`, then `abandoned` by the next run; `failed` when it raises). A sink given a run id
writes no row: the run belongs to whoever started it (the training flow's lifecycle)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from conductor.config import load_settings
from conductor.trace import Trace
from warehouse.lifecycle import RunLifecycle, run_here, write_to
from warehouse.staging import ingest_staged, stage_traces
from warehouse.store import TraceStore


TRAINING_METHOD = "conductor-grpo"  # a training run's row method and MLflow run name, wherever it is opened


class WarehouseSink:
    """The reward's `sink(trace, step)`, wired to the warehouse: each training step's rollouts
    (every round, with the run id) are staged as one atomic batch and ingested, and the step's
    curve (reward, accuracy, parse_rate, mean_steps, cost_usd over its first-round rollouts)
    goes to `training_metrics`, which `v_training_curves` reads; each rollout's step goes to
    `training_rollouts`, which `v_training_shapes` reads (shapes per domain per step). The run
    is a `runs` row of kind `train`: every rollout is stored under the sink's run id, and the
    MLflow run id the rollouts carry (the tracker passes it to the reward) becomes the row's
    `mlflow_run_id`. `close()` flushes the last step and, for a sink that owns its row, marks it
    finished (or failed). `step` is the trainer's step when the rollouts were generated (0 =
    before the first update)."""

    def __init__(self, warehouse_path: str | Path, staging_dir: str | Path, *, run_id: str | None = None,
                 params: dict[str, Any] | None = None, simulated: bool | None = None, rank: int | None = None) -> None:
        self.warehouse_path, self.staging_dir = Path(warehouse_path), Path(staging_dir)
        # Under accelerate every rank scores its own slice of each batch: a rank (`rank` set) only
        # stages its rollouts (one DuckDB file takes one writing process), and the chunk's task
        # ingests them once the launch ends (`ingest_launched`).
        self.rank = rank
        self.steps_written: list[int] = []
        self._buffer: list[Trace] = []
        self._step: int | None = None
        self.lifecycle: RunLifecycle | None = None
        if run_id is None and rank is None:
            run_id = f"train-{uuid.uuid4().hex[:12]}"
            self.lifecycle = RunLifecycle(run_here(run_id, "train", method=TRAINING_METHOD, simulated=simulated,
                                                   params=dict(params or {})), write_to(self.warehouse_path))
            self.lifecycle.__enter__()
        self.run_id = run_id

    @classmethod
    def for_settings(cls, params: dict[str, Any] | None = None, simulated: bool | None = None,
                     run_id: str | None = None, rank: int | None = None) -> WarehouseSink:
        """The sink `conductor train` finds through the `conductor.training_sinks` entry point."""
        settings = load_settings()
        return cls(settings.warehouse_path, settings.staging_dir, params=params, simulated=simulated,
                   run_id=run_id, rank=rank)

    def __call__(self, trace: Trace, step: int) -> None:
        if self.lifecycle is not None and self.lifecycle.run.mlflow_run_id is None and trace.run_id:
            self.lifecycle.update(mlflow_run_id=trace.run_id)  # the tracker's run id reached the reward
        trace.run_id = self.run_id
        if self._step is not None and step != self._step and self._buffer:
            self.flush()
        self._step = step
        self._buffer.append(trace)

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
            ingest_staged(store, self.staging_dir)
            store.write_training_metrics(self.run_id, step, step_curve(traces))
            store.write_training_rollouts(self.run_id, step, [t.trace_id for t in traces])
        self.steps_written.append(step)

    def close(self, error: BaseException | None = None, *, mlflow_run_id: str | None = None) -> None:
        """Flush; a sink that owns its row ends it: finished, or what `error` makes it (failed,
        cancelled), its message in the row's notes."""
        self.flush()
        if self.lifecycle is None:
            return
        if mlflow_run_id:
            self.lifecycle.update(mlflow_run_id=mlflow_run_id)
        self.lifecycle.end_with(error)


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


def ingest_launched(run_id: str) -> int:
    """After an accelerate launch: the rollouts its ranks staged under `run_id`, ingested by this
    process (the run's row is its starter's). Returns the batches ingested."""
    settings = load_settings()
    if not settings.staging_dir.is_dir():
        return 0
    with TraceStore(settings.warehouse_path) as store:
        return ingest_staged(store, settings.staging_dir).batches
