"""What a training run will cost before anything is spent: worker calls, tokens, dollars and
wall time, from the config and the pool's prices (for simulated workers: their token model)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from conductor.training.config import ConductorTrainingConfig
from conductor.simulation import is_simulated_worker
from conductor.workers.pool import read_pool_file
from conductor.workers.registry import CONDUCTOR_PROVIDER


# The small-real profile's step times, measured with benchmarks/real_conductor.py on the project's
# shared 2-core machine, one thread (docs/benchmarks.md): a GRPO step of 4 rollouts over the
# few-shot prompt (~165 s wall under load, 107 CPU-s) and an SFT step of 4 examples (~73 CPU-s).
REAL_GRPO_STEP_S = 165.0
REAL_SFT_STEP_S = 73.0
# The same profile on a GPU (`use_cpu` false), measured with `benchmarks/real_conductor.py --device
# cuda` on an NVIDIA H200 in bf16 (docs/benchmarks.md): 4.06-4.14 s a GRPO step (HF generate is 93 %
# of it), 16 SFT steps in 8.7-16.6 s with the model's load and save.
REAL_GRPO_STEP_S_GPU = 4.1
REAL_SFT_STEP_S_GPU = 1.0


@dataclass(frozen=True)
class Estimate:
    steps: int
    rollouts: int
    calls: int
    input_tokens: int
    output_tokens: int
    usd: float
    wall_s: float

    def lines(self) -> list[str]:
        return [
            f"steps            {self.steps:,}",
            f"rollouts         {self.rollouts:,}",
            f"worker calls     {self.calls:,}",
            f"tokens           {self.input_tokens:,} in / {self.output_tokens:,} out",
            f"worker cost      ${self.usd:,.2f}",
            f"wall time        {self.wall_s / 3600:,.1f} h ({self.wall_s:,.0f} s)" if self.wall_s >= 3600
            else f"wall time        {self.wall_s / 60:,.1f} min ({self.wall_s:,.0f} s)",
        ]


def estimate(
    config: ConductorTrainingConfig,
    *,
    calls_per_rollout: float = 3.0,  # the paper's learned workflows average ~3 steps
    input_tokens_per_call: int = 1500,
    output_tokens_per_call: int | None = None,
    step_s: float | None = None,
    workers_per_step_s: float = 2.0,
    sft_step_s: float = 0.42,
) -> Estimate:
    """Projected totals for `max_steps` steps. Prices are the pool's mean per worker; output
    tokens default to the simulated workers' median or 1,000. `step_s` (policy time per step)
    defaults to 1.9 s on the tiny model and 60 s otherwise; worker calls overlap, so their time
    per step is the slowest rollout (`workers_per_step_s`), scaled by `simulated_latency_scale`
    when every worker is simulated. A tiny model's SFT warm start adds `sft_step_s` per SFT step
    (batches of 16); the small-real profile (`warm_start_from`) takes its own measured step times
    (`REAL_GRPO_STEP_S`, `REAL_SFT_STEP_S` on a CPU; the `_GPU` pair when `use_cpu` is false). The tiny figures were measured with the local profile on 2 shared cores
    (held-out evaluations included); early stopping usually ends a run before `max_steps`."""
    workers = [w for w in read_pool_file(config.pool_file).workers if w.provider != CONDUCTOR_PROVIDER]
    medians = [w.options.get("output_tokens", {}).get("median") for w in workers]
    out_tok = output_tokens_per_call or int(sum(m for m in medians if m) / max(1, sum(1 for m in medians if m)) or 1000)
    priced = [w.prices for w in workers if w.prices is not None]
    usd_per_call = (
        sum(p.cost(input_tokens_per_call, out_tok) for p in priced) / len(priced) if priced else 0.0
    )
    rollouts_per_step = config.per_device_train_batch_size * config.gradient_accumulation_steps * max(1, config.world_size)
    rollouts = config.max_steps * rollouts_per_step
    calls = round(rollouts * calls_per_rollout * (1 + config.recursion_fraction))
    if workers and all(is_simulated_worker(w) for w in workers):
        # no real worker's latency bounds the step: only simulated waits, which the scale scales
        workers_per_step_s *= config.simulated_latency_scale
    real = config.warm_start_from is not None  # the small-real profile: the 135M model on a CPU
    tiny = not real and ("base" in config.model_name_or_path or "sft" in config.model_name_or_path)
    gpu = real and not config.use_cpu
    real_grpo_s, real_sft_s = (REAL_GRPO_STEP_S_GPU, REAL_SFT_STEP_S_GPU) if gpu else (REAL_GRPO_STEP_S, REAL_SFT_STEP_S)
    policy_s = 1.9 if tiny else real_grpo_s if real else 60.0
    per_step = (step_s if step_s is not None else policy_s) + workers_per_step_s
    sft_examples = config.sft_problems * config.sft_copies * config.sft_epochs
    sft_steps = math.ceil(sft_examples / (config.sft_batch_size if real else 16)) if tiny or real else 0
    return Estimate(
        steps=config.max_steps, rollouts=rollouts, calls=calls, input_tokens=calls * input_tokens_per_call,
        output_tokens=calls * out_tok, usd=calls * usd_per_call,
        wall_s=config.max_steps * per_step + sft_steps * (real_sft_s if real else sft_step_s),
    )
