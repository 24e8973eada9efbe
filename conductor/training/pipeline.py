"""One training run end to end: problems -> split -> (tiny model + SFT warm start) -> GRPO with
held-out early stopping -> tracked run and registered model. What `conductor train` and the
Prefect flow call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conductor.data.schema import Problem
from conductor.training.config import ConductorTrainingConfig
from conductor.training.grpo import train_grpo
from conductor.training.result import TrainResult
from conductor.training.problems import bank_splits, split_problems
from conductor.training.reward import TraceSink
from conductor.training.tracking import TrackerFactory
from conductor.training.warm import warm_started_from, warm_started_tiny
from conductor.workers.pool import read_pool_file


@dataclass
class RunOutcome:
    result: TrainResult
    tracking_run_id: str | None = None
    registered: Any = None  # the tracker's record of the registered model version


def ensure_model(
    config: ConductorTrainingConfig, train: Sequence[Problem], on_log: Callable[[dict[str, Any]], None] | None = None
) -> Path:
    """The model GRPO starts from: the configured one when it exists (a local dir or a hub id),
    else `warm_start_from` (small-real profile) or the tiny model (local profile), SFT-warm-started
    (its figures to `on_log`, when given); an earlier warm start is reused."""
    path = Path(config.model_name_or_path)
    sft = Path(config.output_dir) / "sft"
    # The local profile's `base/` is the untrained tiny model its warm start made next to `sft/`:
    # with both there, the warm start is done, and GRPO starting from `base/` would throw it away.
    own_base = path == Path(config.output_dir) / "base"
    if (sft / "config.json").is_file() and (own_base or not (path / "config.json").is_file()):
        config.model_name_or_path = str(sft)
        return sft
    if (path / "config.json").is_file() or not str(path).startswith(str(config.output_dir)):
        return path
    if config.warm_start_from:
        return warm_started_from(config, train, on_log=on_log)
    return warm_started_tiny(config, train, on_log=on_log)


def training_split(
    config: ConductorTrainingConfig, problems: Sequence[Problem] | None = None
) -> tuple[list[Problem], list[Problem]]:
    """(train, validation): given problems split by `eval_fraction`; by default the generated
    bank's train split, less `validation_problems` for early stopping (its held-out split is
    left for final evaluation)."""
    if problems is not None:
        return split_problems(list(problems), config.eval_fraction, seed=config.train_seed)
    splits = bank_splits(n=config.bank_size, validation=config.validation_problems, split_seed=config.train_seed)
    return splits.train, splits.validation


def run_training(
    config: ConductorTrainingConfig,
    problems: Sequence[Problem] | None = None,
    *,
    resume: bool = False,
    sink: TraceSink | None = None,
    on_step: Callable[[dict[str, float]], None] | None = None,
    tracker: TrackerFactory | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
) -> RunOutcome:
    """Warm-start when needed, then GRPO. `on_step` gets each GRPO step's figures; `on_log`, when
    given, every log dict of the warm start and of GRPO's trainer in place of their prints."""
    train, held_out = training_split(config, problems)
    ensure_model(config, train, on_log=on_log)
    if tracker is None:
        result = train_grpo(config, train, held_out, resume=resume, sink=sink, on_step=on_step, on_log=on_log)
        return RunOutcome(result=result)
    pool = read_pool_file(config.pool_file)  # the run's pool as it starts: the tracker labels the run by it
    with tracker(config.to_dict(), simulated=pool.simulated) as run:
        def step(row: dict[str, float]) -> None:
            run.log_step(row)
            if on_step is not None:
                on_step(row)

        result = train_grpo(config, train, held_out, resume=resume, sink=sink, on_step=step, run_id=run.run_id,
                            on_log=on_log)
        logged = run.finish(
            result.model_dir, history=result.history, eval_history=result.eval_history, samples=result.samples,
            summary={"wall_s": result.wall_s, "usd_total": result.usd, "calls_total": result.calls,
                     "steps_done": result.steps, "best_eval_accuracy": result.best_eval_accuracy},
        )
    return RunOutcome(result=result, tracking_run_id=run.run_id, registered=getattr(logged, "model", None))
