"""The GRPO run: TRL's `GRPOTrainer` on prompt rows, rewarded by running each completion as a
workflow over the pool. Checkpoints every `save_steps`; `resume=True` continues from the last
one; `max_usd` and early stopping end the run cleanly at a checkpoint. Returns a model dir."""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conductor.config import ExecutionConfig
from conductor.models.tiny import load_tokenizer
from conductor.effort import Effort
from conductor.models.prompt_format import write_prompt_format
from conductor.data.schema import Problem
from conductor.training.callbacks import (BudgetCallback, HeldOutEval, RewardStatsCheckpoint, SecondRoundRefresh,
                                         StepLog, StopAtStep, send_logs_to, world_total)
from conductor.training.config import (ConductorTrainingConfig, apply_process_settings, bad_worker_share, effort_rates,
                                       lora_config, prompt_format_of)
from conductor.training.dataset import PoolSampling, build_rows, to_dataset, training_pool
from conductor.training.policy import TransformersPolicy
from conductor.training.result import TrainResult
from conductor.training.reward import TraceSink, WorkflowReward
from conductor.training.second_round import OnPolicySecondRounds
from conductor.training.sft import save_merged

# TRL 1.16's unwrap_model_for_generation (every GRPO generation) reads transformers 5's deprecated
# `is_gradient_checkpointing` property, which warns; our code never reads it, so it cannot be
# fixed here. Ignored during training by its exact message only; drop this when TRL reads
# `is_activation_checkpointing`.
TRL_DEPRECATED_PROPERTY = r"`is_gradient_checkpointing` is deprecated"


class TiedHeadIsNotMissing(logging.Filter):
    """Drops one line of transformers 5's Trainer when it resumes from a checkpoint (every chunk of
    a chunked run does): "There were missing keys in the checkpoint model loaded: ['lm_head.weight']".
    The tiny Conductor ties its output head to its input embeddings (tie_word_embeddings=True), so
    save_pretrained leaves the head out of the checkpoint, as it should; the Trainer only knows
    keys a model class lists as not saved, and Qwen2 lists none. The head is the loaded embedding
    matrix (one tensor), so nothing is missing. Installed only while a tied model trains."""

    LINE = "There were missing keys in the checkpoint model loaded: ['lm_head.weight']."

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.LINE


def cancel_pending_rewards(trainer: Any, timeout_s: float = 30.0) -> None:
    """Ends the reward coroutines a stop left running on TRL's event loop.

    TRL awaits async reward functions on a daemon thread's loop and blocks on `.result()`; a Ctrl-C
    there leaves the scoring task pending, and at exit asyncio prints "Task was destroyed but it is
    pending!" after the run's one-line stop message. Cancelling it on its own loop lets it unwind
    (its `finally` blocks run) before the process ends."""
    loop = getattr(trainer, "async_loop", None)
    if loop is None or loop.is_closed() or not loop.is_running():
        return

    async def cancel_others() -> None:
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    try:
        asyncio.run_coroutine_threadsafe(cancel_others(), loop).result(timeout=timeout_s)
    except TimeoutError:  # a worker call that ignores cancellation: the stop itself must go on
        pass


class StepTimer:
    """Where a GRPO step's time goes: generation (sampling the completions), reward (running and
    scoring the workflows) and the rest of the training step (log-probs, loss, backward,
    optimizer). Wall seconds and this process's CPU seconds, summed over the run."""

    PARTS = ("generation", "reward", "step")

    def __init__(self) -> None:
        self.wall = dict.fromkeys(self.PARTS, 0.0)
        self.cpu = dict.fromkeys(self.PARTS, 0.0)
        self.steps = 0

    def wrap(self, obj: object, method: str, part: str) -> None:
        inner = getattr(obj, method)

        def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            w, c = time.perf_counter(), time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.wall[part] += time.perf_counter() - w
                self.cpu[part] += time.process_time() - c
                if part == "step":
                    self.steps += 1

        setattr(obj, method, timed)

    def attach(self, trainer: object) -> None:
        self.wrap(trainer, "_generate", "generation")
        self.wrap(trainer, "_calculate_rewards", "reward")
        self.wrap(trainer, "training_step", "step")

    def split(self) -> dict[str, float]:
        """Per-step means; `backward` is the training step less generation and reward."""
        n = max(1, self.steps)
        out: dict[str, float] = {"steps": float(self.steps)}
        for kind, table in (("wall", self.wall), ("cpu", self.cpu)):
            rest = table["step"] - table["generation"] - table["reward"]
            out.update({f"{kind}_generation_s": table["generation"] / n, f"{kind}_reward_s": table["reward"] / n,
                        f"{kind}_backward_s": rest / n, f"{kind}_step_s": table["step"] / n})
        return out


def sampling_of(config: ConductorTrainingConfig) -> PoolSampling:
    return PoolSampling(config.randomized_pools, config.pool_k_min, config.pool_k_max, config.recursion_fraction,
                        efforts=tuple(effort_rates(config)), bad_worker_fraction=bad_worker_share(config))


def with_second_rounds(dataset: Any, rows: Sequence[Any], pool: Any, config: ConductorTrainingConfig, tokenizer: Any,
                       execution: ExecutionConfig | None) -> tuple[Any, OnPolicySecondRounds]:
    """Make a `second_round_fraction` of the rows (not those with a forced recursion) second-round
    rows whose first rounds the current policy writes when the row is drawn: the dataset with the
    table as its transform, and the table (`SecondRoundRefresh` keeps it current)."""
    import random

    rng = random.Random(config.train_seed + 1)
    chosen = [i for i, r in enumerate(rows) if not r.recursion and rng.random() < config.second_round_fraction]
    table = OnPolicySecondRounds(rows, chosen, pool, tokenizer, examples=config.few_shot_examples,
                                 max_new_tokens=config.max_completion_length or 256, seed=config.seed,
                                 execution=execution)
    for name, values in table.columns(len(dataset)).items():
        dataset = dataset.add_column(name, values)
    return dataset.with_transform(table), table


def last_checkpoint(output_dir: str | Path) -> Path | None:
    ckpts = sorted(Path(output_dir).glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    return ckpts[-1] if ckpts else None


def train_grpo(
    config: ConductorTrainingConfig,
    train_problems: Sequence[Problem],
    eval_problems: Sequence[Problem] = (),
    *,
    resume: bool = False,
    sink: TraceSink | None = None,
    on_step: Callable[[dict[str, float]], None] | None = None,
    run_id: str | None = None,
    execution: ExecutionConfig | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
) -> TrainResult:
    """GRPO over `train_problems`; every logged step goes to `on_step` (reward, format rate, $) and
    the trainer's own log dicts to `on_log` when given (else transformers prints them)."""
    from trl import GRPOTrainer

    from conductor.models.constrained import load_causal_lm

    t0 = time.perf_counter()
    apply_process_settings(config)
    out = Path(config.output_dir)
    pool = training_pool(config.pool_file, [*train_problems, *eval_problems], latency_scale=config.simulated_latency_scale)
    rows = build_rows(train_problems, pool, sampling_of(config), seed=config.train_seed)
    dataset = to_dataset(rows, pool, examples=config.few_shot_examples)
    tokenizer = load_tokenizer(config.model_name_or_path)
    refresh: list[SecondRoundRefresh] = []
    if config.second_round_fraction > 0:
        dataset, table = with_second_rounds(dataset, rows, pool, config, tokenizer, execution)
        refresh.append(SecondRoundRefresh(table))
    reward = WorkflowReward(
        pool, execution=execution, examples=config.few_shot_examples, cost_weight=config.cost_weight,
        recursion_discount=config.recursion_discount, concurrency=config.reward_concurrency, sink=sink,
        run_id=run_id, seed=config.seed, effort_rates=effort_rates(config),
        second_round_cost_weight=config.second_round_cost_weight,
        second_round_executions=config.second_round_executions,
    )
    budget = BudgetCallback(reward, config.max_usd)
    chunk_end = StopAtStep(config.stop_at_step)
    stats_ckpt = RewardStatsCheckpoint(reward)
    log = StepLog(reward, on_step)
    # Held-out rows offer the full pool: the question is how well it plans over the pool it has.
    # A model trained with effort rows is asked at the level it will be told by default.
    fmt = prompt_format_of(config)
    default = (Effort(fmt.default_effort),) if fmt.default_effort else ()
    eval_rows = build_rows(eval_problems, pool, PoolSampling(efforts=default), seed=config.train_seed)
    held_out = HeldOutEval(
        eval_rows, pool, tokenizer, every=config.eval_every, patience=config.early_stopping_patience,
        fmt=fmt, max_new_tokens=config.max_completion_length or 256, best_dir=out / "best",
    )
    trainer = GRPOTrainer(
        model=load_causal_lm(config.model_name_or_path), reward_funcs=[reward], args=config, train_dataset=dataset,
        processing_class=tokenizer, callbacks=[budget, chunk_end, stats_ckpt, log, held_out, *refresh],
        peft_config=lora_config(config, config.model_name_or_path),
    )
    send_logs_to(trainer, on_log)
    timer = StepTimer()
    timer.attach(trainer)
    if config.recursion_fraction > 0:
        reward.policy = TransformersPolicy(
            trainer.model, tokenizer, max_new_tokens=config.max_completion_length or 256, temperature=config.temperature
        )
    checkpoint = last_checkpoint(out) if resume else None
    if checkpoint is not None:
        stats_ckpt.load(checkpoint)
    trainer_log = logging.getLogger("transformers.trainer")
    tied = TiedHeadIsNotMissing() if trainer.model.config.tie_word_embeddings else None
    if tied is not None:
        trainer_log.addFilter(tied)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=TRL_DEPRECATED_PROPERTY, category=FutureWarning)
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    except BaseException:
        cancel_pending_rewards(trainer)
        raise
    finally:
        if tied is not None:
            trainer_log.removeFilter(tied)
    final = out / "model"
    model = save_merged(trainer, final)  # rank 0 writes (under accelerate); LoRA merged in
    main = trainer.is_world_process_zero()
    if main:
        tokenizer.save_pretrained(final)
        write_prompt_format(final, prompt_format_of(config))
    steps = trainer.state.global_step
    # The final held-out evaluation: rank 0's (the others' results are not reported).
    if main and eval_rows and (not held_out.history or held_out.history[-1]["step"] != steps):
        held_out.evaluate(model, steps)
    model_dir = out / "best" if held_out.best_step is not None and held_out.best_step != steps else final
    reason = ("budget" if budget.stopped_for_budget else "early_stopping" if held_out.stopped_early
              else "chunk_end" if chunk_end.stopped else "max_steps")
    # every rank's share (under accelerate each scores a slice of each batch)
    usd, calls, rollouts = (world_total(reward.stats.usd), round(world_total(reward.stats.calls)),
                            round(world_total(reward.stats.rollouts)))
    return TrainResult(
        model_dir=model_dir, steps=steps, stop_reason=reason, usd=usd, calls=calls,
        rollouts=rollouts, wall_s=time.perf_counter() - t0, history=log.rows,
        eval_history=held_out.history, best_eval_accuracy=held_out.best, best_step=held_out.best_step,
        samples=sample_rows(held_out.last.traces if held_out.last else (), eval_rows), time_split=timer.split(),
        simulated=pool.simulated,
    )


def sample_rows(traces, rows, limit: int = 20) -> list[dict[str, str]]:  # noqa: ANN001
    """A table of held-out workflows: question, domain, offered pool, output, parse, verdict."""
    return [
        {
            "question": r.problem.question[:300], "domain": r.problem.domain, "pool": ", ".join(r.pool_ids),
            "workflow": t.conductor_output or "", "parse": t.parse_status,
            "correct": str(bool(t.verdict and t.verdict.correct)),
        }
        for t, r in list(zip(traces, rows))[:limit]
    ]
