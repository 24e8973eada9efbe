"""The profiles: one frozen `ProfileSpec` per profile, in one registry, and `Profile`, the one type
that names them (settings, curation, evaluation, training and the nightly all take it).

A profile says everything that differs between `local`, `small-real` and `production`: its
training config (a short override over `TRAINING_BASE`, as nanoGPT's config files override its
defaults), where curation reads its data, whether it may run on a simulated pool, and what a night
changes in its training. A new profile is one `register(ProfileSpec(...))`; its training keys are
checked against the training config when a config is built (an unknown key is refused, never
ignored). This module imports nothing heavy: a value that depends on the run (its directory, the
hardware) is a `Late` computed when the config is built, and only when no override replaces it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import AfterValidator


@dataclass(frozen=True)
class Where:
    """What a late training value may depend on: the run's directory and the data home."""

    output_dir: Path
    home: Path


@dataclass(frozen=True)
class Late:
    """A training value computed when the config is built (it depends on the run or the machine)."""

    compute: Callable[[Where], Any]
    # What a config that is only read (an estimate, a dry run) holds instead, where computing the
    # value writes something; None: computed either way.
    unmade: str | None = None


@dataclass(frozen=True)
class ProfileSpec:
    """One profile, whole. Each field is read by one stage: `training` by conductor/training/config.py,
    `curation` by data curation, `simulated_pool` by `refuse_accidental_simulation`, `nightly_training`
    by the nightly's config."""

    name: str
    summary: str  # one line for the CLI's help
    curation: Literal["samples", "hub"]  # the sample files shipped in the repo, or the pinned hub data sets
    simulated_pool: bool  # may run on a simulated pool without --allow-simulated
    training: Mapping[str, Any]  # over TRAINING_BASE
    nightly_training: Mapping[str, Any] = field(default_factory=dict)  # over `training`, in a night only

    def __post_init__(self) -> None:
        # frozen all the way down: a registered profile cannot be changed by whoever reads it
        object.__setattr__(self, "training", MappingProxyType(dict(self.training)))
        object.__setattr__(self, "nightly_training", MappingProxyType(dict(self.nightly_training)))

    def training_values(self, where: Where, overrides: Mapping[str, Any], *, read_only: bool = False) -> dict[str, Any]:
        """TRAINING_BASE, then this profile's values, then `overrides`; a `Late` value is computed
        only when no override replaces it, and with `read_only` (nothing will train on it) only
        when computing it writes nothing (else its `unmade` text stands in)."""
        def late(v: Late) -> Any:
            return v.unmade if read_only and v.unmade is not None else v.compute(where)

        merged = {**TRAINING_BASE, **self.training}
        values = {k: (late(v) if isinstance(v, Late) else v) for k, v in merged.items() if k not in overrides}
        return {**values, **overrides}


_REGISTRY: dict[str, ProfileSpec] = {}


def register(spec: ProfileSpec) -> ProfileSpec:
    """Add a profile; refused when its name is taken."""
    if spec.name in _REGISTRY:
        raise ValueError(f"profile {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a profile (a test's own, once it is done with it)."""
    _REGISTRY.pop(name, None)


def names() -> list[str]:
    return list(_REGISTRY)


def spoken_names() -> str:
    """'local, small-real or production', for messages."""
    *rest, last = names()
    return f"{', '.join(rest)} or {last}" if rest else last


def get_profile(name: str) -> ProfileSpec:
    """The registered profile; an unknown name is one ValueError line naming the known ones."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown profile {name!r} (one of {spoken_names()})") from None


def _registered(name: str) -> str:
    get_profile(name)
    return name


# The one type of a profile's name: a string the registry knows (checked wherever pydantic reads it).
Profile = Annotated[str, AfterValidator(_registered)]


def profile_help() -> str:
    """Every profile with its summary, for a `--profile` option's help."""
    return "; ".join(f"{spec.name}: {spec.summary}" for spec in _REGISTRY.values())


def _has_cuda(_: Where) -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _has_vllm(_: Where) -> bool:
    try:
        import vllm  # noqa: F401  (an optional extra: it pulls CUDA builds)
    except ImportError:
        return False
    return True


def _real_model(where: Where) -> str:
    from conductor.models.gguf import real_model_dir

    return str(real_model_dir(where.home / "models"))


# What every profile's training shares.
TRAINING_BASE: Mapping[str, Any] = MappingProxyType({
    "output_dir": Late(lambda w: str(w.output_dir)),
    "report_to": "none",  # registry/ logs to MLflow itself; TRL's integrations would import it here
    "save_strategy": "steps",
    "logging_steps": 1,
    "beta": 0.0,
    "temperature": 1.0,
    "epsilon": 0.2,
})

# What the two CPU profiles (local, small-real) share.
_CPU: dict[str, Any] = {
    # cosine to 0 over the run, in place of early stopping on a small validation set
    # (48 problems had a standard error of ~7 points, as large as the gain to detect).
    "lr_scheduler_type": "cosine",
    "loss_type": "dapo",
    "scale_rewards": "group",
    "epsilon_high": 0.28,  # clip-higher (DAPO): lets rare good choices (a longer plan) grow
    # The cap on a completion only stops a runaway sample, and a truncated one is left out of the
    # loss instead of earning 0.
    "mask_truncated_completions": True,
    "max_steps": 200,
    "activation_checkpointing": False,  # no gain on CPU, and it slows the tiny model
    "use_cpu": True,
    "bf16": False,  # no bf16 units on these CPUs (autocast made SFT ~5x slower, sft.py)
    "sft_epochs": 1.0,
    # Held-out accuracy once, at the end; nothing is selected on it.
    "eval_every": 0,
    "early_stopping_patience": 0,
    "disable_tqdm": True,
    "torch_threads": 1,
    # The simulated workers' 60-200 ms per call exercises the executor's concurrency; training
    # needs their answers, not the wait: 0 took a GRPO step from ~2.2 s to ~1.9 s of wall
    # (docs/training.md).
    "simulated_latency_scale": 0.0,
}

LOCAL = register(ProfileSpec(
    name="local",
    summary="offline: the tiny model on a CPU, the sample data sets, the simulated pool",
    curation="samples",
    simulated_pool=True,
    training={
        **_CPU,
        "model_name_or_path": Late(lambda w: str(w.output_dir / "base")),
        "few_shot_examples": False,  # the tiny model's context is short; examples triple every prompt
        "learning_rate": 5e-4,
        # A KL term to the warm start: without it GRPO let the kind-of-task line drift (stated
        # rightly for 0.86-0.91 of held-out questions after GRPO against 0.99 after SFT), and a
        # wrong kind brings the other kind's wordings and workers (docs/training.md).
        "beta": 0.04,
        # 2 questions x 16 rollouts per step: each wording and plan is compared with more of its
        # alternatives on the same question. With 4 x 8 GRPO locked onto the first wording that
        # looked good (seed 1: 0.726, a check with "Crunch the numbers."); with 2 x 16, 0.776
        # and 4 attempts + an aggregator everywhere (docs/training.md, SIMULATED).
        "num_generations": 16,
        "per_device_train_batch_size": 32,
        # A 5-step workflow is 21 decision tokens (sft_data.decision_tokens).
        "max_completion_length": 128,
        "save_steps": 50,
        # The warm start: 1,600 problems x 4 fresh draws (plan, workers, wording) x 1 epoch (400
        # steps). The decision automaton makes every plan parse whatever the warm start's length;
        # 4 draws state the kind of task rightly for 99 % of questions (2 draws: 83 %).
        "sft_problems": 1600,
        "sft_copies": 4,
        # 192 validation problems (standard error ~3.5 points).
        "validation_problems": 192,
    },
    # The night trains the profile's own recipe with no held-out early stopping inside it (the
    # nightly's own evaluation and gate judge the model), on both cores: 2 threads made a GRPO step
    # 1.39x faster on a quiet 2-core machine (0.93 s against 1.29 s of wall,
    # benchmarks/training_speed.py --threads).
    # The night's model is trained with effort rows, so the summary shows one row per level (the
    # nightly evaluates the challenger at each level it was trained on) and the champion obeys
    # `conductor ask --effort` and `reasoning_effort`; unstated, it is served at medium.
    nightly_training={"eval_every": 0, "early_stopping_patience": 0, "validation_problems": 8, "torch_threads": 2,
                      "effort_levels": ["low", "medium", "high"]},
))

SMALL_REAL = register(ProfileSpec(
    name="small-real",
    summary="offline, with the real SmolLM2-135M as the Conductor (chat template, LoRA, CPU)",
    curation="samples",
    simulated_pool=True,
    # SmolLM2-135M-Instruct (dequantized once under $CONDUCTOR_HOME/models), prompted through its
    # chat template with the paper's few-shot examples, SFT-warm-started on generated workflows
    # (plain text in its own tokenizer), then GRPO, both with LoRA.
    training={
        **_CPU,
        # unpacked into the home (~0.5 GB) on first use: an estimate or a dry run only names it
        "warm_start_from": Late(_real_model, unmade="(the real SmolLM2-135M, unpacked on the first run)"),
        "model_name_or_path": Late(lambda w: str(w.output_dir / "sft")),  # made from warm_start_from
        "few_shot_examples": True,  # the paper's prompt: ~960 of the real tokenizer's tokens over the local pool
        "lora_r": 16,
        "lora_alpha": 32,
        "learning_rate": 1e-4,
        "num_generations": 4,
        "per_device_train_batch_size": 4,  # one question x 4 rollouts per step
        # A 5-step workflow is at most ~130 of SmolLM2's tokens (docs/real-model.md).
        "max_completion_length": 160,
        "save_steps": 25,
        "sft_problems": 64,
        "sft_copies": 1,
        "sft_batch_size": 4,
        "sft_learning_rate": 1e-3,  # LoRA moves slowly at full fine-tuning's rates
        "validation_problems": 48,
    },
))

PRODUCTION = register(ProfileSpec(
    name="production",
    summary="the paper's settings (Qwen2.5-7B, the pinned hub data sets); refuses a simulated pool",
    curation="hub",
    simulated_pool=False,
    # The paper's hyperparameters: 200 iterations x 4 questions x 64 rollouts on Qwen2.5-7B-Instruct.
    training={
        "model_name_or_path": "Qwen/Qwen2.5-7B-Instruct",
        "learning_rate": 1e-6,
        "lr_scheduler_type": "cosine",
        "warmup_steps": 0.03,  # 3 % of the steps (a float < 1 is a fraction)
        "num_generations": 64,
        "per_device_train_batch_size": 64,
        "gradient_accumulation_steps": 4,  # 4 questions x 64 rollouts = 256 per iteration
        "max_completion_length": 1024,
        "max_steps": 200,
        "save_steps": 10,
        "bf16": Late(_has_cuda),  # validated at construction: a CPU-only machine can still --estimate
        "use_cpu": Late(lambda w: not _has_cuda(w)),
        "activation_checkpointing": True,
        "use_vllm": Late(_has_vllm),
        "vllm_mode": "colocate",
        "eval_every": 20,
    },
))
