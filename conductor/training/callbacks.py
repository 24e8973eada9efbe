"""Trainer callbacks: the dollar budget, held-out evaluation with early stopping, the reward
totals saved beside each checkpoint (so a resumed run keeps counting dollars), and progress."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import PrinterCallback, TrainerCallback

from conductor.models.prompt_format import PromptFormat, write_prompt_format
from conductor.training.dataset import PromptRow
from conductor.training.evaluate import evaluate_policy
from conductor.training.reward import RewardStats, WorkflowReward
from conductor.training.second_round import OnPolicySecondRounds
from conductor.workers.pool import Pool

if TYPE_CHECKING:
    from transformers import Trainer

STATS_FILE = "conductor_reward_stats.json"


def _rank() -> tuple[int, int]:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def world_total(value: float) -> float:
    """`value` summed over the processes of a distributed run (itself, alone). Under accelerate
    each rank scores its own slice of a batch, so a rank's spend is only its share; every rank
    must call this at the same point (it is a collective)."""
    _, world = _rank()
    if world == 1:
        return value
    import torch
    import torch.distributed as dist

    total = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return float(total.item())


def stats_file(checkpoint: Path) -> Path:
    """Each rank's reward totals beside a checkpoint (rank 0's keeps the single-process name)."""
    rank, _ = _rank()
    return checkpoint / (STATS_FILE if rank == 0 else STATS_FILE.replace(".json", f".rank{rank}.json"))


class BudgetCallback(TrainerCallback):
    """Stops after the step whose rollouts took the spend past `max_usd`, saving a checkpoint."""

    def __init__(self, reward: WorkflowReward, max_usd: float | None) -> None:
        self.reward, self.max_usd = reward, max_usd
        self.stopped_for_budget = False

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001 - the Trainer's signature
        # the spend of every rank, so all ranks stop at the same step (a lone rank would hang the rest)
        if self.max_usd is not None and world_total(self.reward.stats.usd) >= self.max_usd:
            self.stopped_for_budget = True
            control.should_save = True
            control.should_training_stop = True
        return control


class StopAtStep(TrainerCallback):
    """Ends a checkpointed chunk of a longer run at `step`, saving a checkpoint, while the trainer's
    `max_steps` (the learning-rate schedule's horizon) stays the whole run's: a chunk trained with
    `max_steps` = its own end annealed the cosine schedule to 0 at every chunk's end."""

    def __init__(self, step: int | None) -> None:
        self.step = step
        self.stopped = False

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001 - the Trainer's signature
        if self.step is not None and state.global_step >= self.step and state.global_step < state.max_steps:
            self.stopped = True
            control.should_save = True
            control.should_training_stop = True
        return control


class SecondRoundRefresh(TrainerCallback):
    """Keeps the second-round rows' first rounds the current policy's (`second_round.OnPolicySecondRounds`):
    hands the table the trainer's model when training begins, and after every optimizer step the
    step count, so a row drawn after an update gets a first round the updated policy writes."""

    def __init__(self, table: OnPolicySecondRounds) -> None:
        self.table = table

    def on_train_begin(self, args, state, control, model=None, **kwargs):  # noqa: ANN001
        self.table.model, self.table.version = model, state.global_step  # a resumed run starts at its step
        return control

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
        self.table.version = state.global_step
        return control


class RewardStatsCheckpoint(TrainerCallback):
    """Writes the reward's running totals into each checkpoint; `load` restores them on resume."""

    def __init__(self, reward: WorkflowReward) -> None:
        self.reward = reward

    def on_save(self, args, state, control, **kwargs):  # noqa: ANN001
        ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if ckpt.is_dir():
            stats_file(ckpt).write_text(json.dumps(asdict(self.reward.stats)))
        return control

    def load(self, checkpoint: Path) -> None:
        path = stats_file(checkpoint)
        if path.exists():
            self.reward.stats = RewardStats(**json.loads(path.read_text()))


def is_main_process() -> bool:
    """Whether this process writes the run's files (rank 0 under accelerate; always, alone)."""
    from accelerate import PartialState

    return PartialState().is_main_process


class HeldOutEval(TrainerCallback):
    """Every `every` steps: held-out accuracy of the greedy policy; keeps the best model in
    `best_dir` and stops after `patience` evaluations without improvement (0: never)."""

    def __init__(self, rows: list[PromptRow], pool: Pool, tokenizer: Any, *, every: int, patience: int,
                 fmt: PromptFormat, max_new_tokens: int, best_dir: Path) -> None:
        self.rows, self.pool, self.tokenizer, self.fmt = rows, pool, tokenizer, fmt
        self.every, self.patience, self.examples, self.max_new_tokens = every, patience, fmt.few_shot_examples, max_new_tokens
        self.best_dir = best_dir
        self.history: list[dict[str, float]] = []
        self.best: float | None = None
        self.best_step: int | None = None
        self._since_best = 0
        self.stopped_early = False
        self.last = None  # the latest EvalResult (its traces give the sample workflows)

    def evaluate(self, model: Any, step: int) -> dict[str, float]:
        result = evaluate_policy(model, self.tokenizer, self.rows, self.pool, examples=self.examples,
                                 max_new_tokens=self.max_new_tokens)
        self.last = result
        metrics = {"step": float(step), **result.metrics()}
        self.history.append(metrics)
        if self.best is None or result.accuracy > self.best:
            self.best, self.best_step, self._since_best = result.accuracy, step, 0
            if not is_main_process():
                # Under accelerate every rank evaluates (greedy decoding of the same weights: the
                # same decision to stop on each, so none waits alone in a collective); one writes.
                return metrics
            if self.best_dir.exists():
                shutil.rmtree(self.best_dir)
            model.save_pretrained(self.best_dir)
            self.tokenizer.save_pretrained(self.best_dir)
            write_prompt_format(self.best_dir, self.fmt)
        else:
            self._since_best += 1
        return metrics

    def on_step_end(self, args, state, control, model=None, **kwargs):  # noqa: ANN001
        if self.rows and self.every and state.global_step % self.every == 0 and model is not None:
            self.evaluate(model, state.global_step)
            if self.patience and self._since_best >= self.patience:
                self.stopped_early = True
                control.should_save = True
                control.should_training_stop = True
        return control


class StepLog(TrainerCallback):
    """Collects every logged step (TRL's reward mean/std plus the reward's own metrics) and hands
    each to `on_step` (the CLI's progress bar, a tracker)."""

    def __init__(self, reward: WorkflowReward, on_step: Callable[[dict[str, float]], None] | None = None) -> None:
        self.reward, self.on_step = reward, on_step
        self.rows: list[dict[str, float]] = []

    def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
        if not logs or "reward" not in logs:
            return control
        row = {k: float(v) for k, v in logs.items() if isinstance(v, (int, float))}
        row["step"] = float(state.global_step)
        row["usd_total"] = self.reward.stats.usd
        row["calls_total"] = float(self.reward.stats.calls)
        self.rows.append(row)
        if self.on_step is not None:
            self.on_step(row)
        return control


class LogTo(TrainerCallback):
    """Hands each of the trainer's log dicts (loss, learning rate, ... with the step) to `on_log`."""

    def __init__(self, on_log: Callable[[dict[str, Any]], None]) -> None:
        self.on_log_fn = on_log

    def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
        if logs:
            self.on_log_fn({"step": state.global_step, **logs})
        return control


def send_logs_to(trainer: Trainer, on_log: Callable[[dict[str, Any]], None] | None) -> None:
    """With `on_log`, the trainer's log dicts go to it in place of transformers' PrinterCallback,
    which prints them: a Prefect task logs them with its run logger while its prints stay plain
    prints (tasks/training.py says why). Without, the trainer prints as before."""
    if on_log is not None:
        trainer.remove_callback(PrinterCallback)
        trainer.add_callback(LogTo(on_log))
