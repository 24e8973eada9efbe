"""From nothing to a GRPO-ready Conductor: build the tiny model (tokenizer trained on the prompts
and the workflow format), or take a real one (`warm_start_from`), then the SFT warm start on
generated workflows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conductor.data.schema import Problem
from conductor.training.base_model import init_tiny_conductor
from conductor.training.config import (ConductorTrainingConfig, apply_process_settings, bad_worker_share, effort_rates,
                                       lora_config, prompt_format_of)
from conductor.training.dataset import PoolSampling, training_pool
from conductor.training.second_round import recursion_sft_examples
from conductor.training.sft import warm_start
from conductor.training.problems import take_per_domain
from conductor.training.sft_data import names_workers, sft_examples
from conductor.training.strategies import PLANS
from conductor.models.prompt_format import write_prompt_format


def warm_sampling(config: ConductorTrainingConfig) -> PoolSampling:
    """The pools the warm start offers: those GRPO will (the full pool, or random subsets with a
    bad worker in `bad_worker_fraction` of them), and the run's effort levels (each row's plan is
    drawn among the level's step counts: `sft_data.plans_at`); without recursion rows."""
    return PoolSampling(randomized=config.randomized_pools, k_min=config.pool_k_min, k_max=config.pool_k_max,
                        bad_worker_fraction=bad_worker_share(config), efforts=tuple(effort_rates(config)))


def warm_started_tiny(
    config: ConductorTrainingConfig, train_problems: Sequence[Problem], *, copies: int | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None, **shape: int
) -> Path:
    """Build `<output_dir>/base`, SFT it into `<output_dir>/sft` and point the config's
    `model_name_or_path` at the result. Only training problems reach the tokenizer (all of
    them) and SFT (`config.sft_problems` of them, spread over the domains). SFT's figures go to
    `on_log` when given (`warm_start`)."""
    apply_process_settings(config)
    out = Path(config.output_dir)
    all_train = list(train_problems)
    train_problems = take_per_domain(all_train, config.sft_problems, seed=config.seed)
    copies = config.sft_copies if copies is None else copies
    pool = training_pool(config.pool_file, train_problems)
    # The tokenizer reads every training question (cheap): more of its merges become question
    # words, so the question is fewer, more meaningful tokens and the task type is easier to learn.
    # SFT offers the pools GRPO will: the full pool (workers uniform over it, so the SFT policy
    # starts with maximal entropy over workers), or random subsets for a randomized-pools run
    # (whose steps name their workers: sft_data.names_workers).
    sampling = warm_sampling(config)
    base = init_tiny_conductor(out / "base", all_train, pool, seed=config.seed, by_name=names_workers(sampling), **shape)
    examples = sft_examples(train_problems, pool, sampling, copies=copies, seed=config.seed, examples=config.few_shot_examples)
    if config.sft_recursion_copies > 0:  # second rounds, after the warm start's own first rounds run over the pool
        examples += recursion_sft_examples(train_problems, pool, sampling, copies=config.sft_recursion_copies,
                                           seed=config.seed, examples=config.few_shot_examples)
    sft_dir = warm_start(base, out / "sft", examples, epochs=config.sft_epochs, learning_rate=config.sft_learning_rate,
                         seed=config.seed, use_cpu=config.use_cpu, on_log=on_log)
    write_prompt_format(sft_dir, prompt_format_of(config))
    config.model_name_or_path = str(sft_dir)
    return sft_dir


def warm_started_from(
    config: ConductorTrainingConfig, train_problems: Sequence[Problem], *,
    on_log: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """SFT `config.warm_start_from` (a real model with its own tokenizer and chat template) into
    `<output_dir>/sft` and point the config's `model_name_or_path` at it. The completions are the
    same generated workflows as the tiny model's, as plain text: the real tokenizer splits them as
    it splits anything (no decision tokens, no constrained decoding). LoRA when `lora_r` > 0."""
    if not config.warm_start_from:
        raise ValueError("warm_started_from needs config.warm_start_from (a model directory)")
    apply_process_settings(config)
    out = Path(config.output_dir)
    problems = take_per_domain(list(train_problems), config.sft_problems, seed=config.seed)
    pool = training_pool(config.pool_file, problems)
    sampling = warm_sampling(config)
    plans = [p for p in PLANS if p.name in config.sft_plans] if config.sft_plans else PLANS
    if len(plans) != len(config.sft_plans or PLANS):
        raise ValueError(f"unknown plan in sft_plans {config.sft_plans} (known: {', '.join(p.name for p in PLANS)})")
    examples = sft_examples(problems, pool, sampling, copies=config.sft_copies, seed=config.seed,
                            examples=config.few_shot_examples, plans=plans)
    # The paper's prompt with its few-shot examples is ~960 tokens and a 5-step workflow ~130:
    # 2,048 keeps every example whole (truncation would cut the completion's end). A constant
    # rate: a CPU warm start is a few dozen steps, of which a cosine's warmup and tail waste some.
    sft_dir = warm_start(config.warm_start_from, out / "sft", examples, epochs=config.sft_epochs,
                         learning_rate=config.sft_learning_rate, batch_size=config.sft_batch_size, seed=config.seed,
                         use_cpu=config.use_cpu, on_log=on_log, peft_config=lora_config(config, config.warm_start_from),
                         max_length=2048, logging_steps=1, lr_scheduler_type="constant")
    write_prompt_format(sft_dir, prompt_format_of(config))
    config.model_name_or_path = str(sft_dir)
    return sft_dir
