"""Step time of the `small-real` profile on this machine: the real SmolLM2-135M-Instruct as the
Conductor base, prompted through its chat template, LoRA (peft), one torch thread, CPU. A short
SFT warm start and a few GRPO steps of the profile as it is (or with the CI test's reductions),
then the held-out greedy outputs' parse rate through `ModelPlanner` (the `local` worker).

Real model, simulated pool's rewards: the step times are real; rewards are the simulation's.

    python benchmarks/real_conductor.py [--sft-problems 8] [--grpo-steps 2] [--no-examples] \
        [--plans single] [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sft-problems", type=int, default=8, help="SFT examples (one per problem; steps of sft_batch_size)")
    ap.add_argument("--grpo-steps", type=int, default=2)
    ap.add_argument("--no-examples", action="store_true", help="the prompt without the few-shot examples (the CI test's)")
    ap.add_argument("--plans", nargs="*", default=[], help="the warm start's plans (default: all)")
    ap.add_argument("--held-out", type=int, default=4, help="held-out questions whose greedy plans are parsed")
    ap.add_argument("--out", default=None, help="run directory (default: a temporary one)")
    a = ap.parse_args()

    from conductor.planners import ModelPlanner
    from conductor.solve import solve
    from conductor.training.config import profile_config
    from conductor.training.dataset import PoolSampling, build_rows, training_pool
    from conductor.training.grpo import train_grpo
    from conductor.training.pipeline import ensure_model
    from conductor.training.problems import bank_splits, take_per_domain
    from conductor.types import Task

    out = Path(a.out or tempfile.mkdtemp(prefix="real-conductor-"))
    config = profile_config("small-real", out, max_steps=a.grpo_steps, save_steps=10_000, sft_problems=a.sft_problems,
                            sft_plans=a.plans, cost_weight=10.0, **({"few_shot_examples": False} if a.no_examples else {}))
    splits = bank_splits(n=config.bank_size)
    train = take_per_domain(splits.train, a.sft_problems, seed=0)
    logs: list[dict] = []
    w, c = time.perf_counter(), time.process_time()
    ensure_model(config, train, on_log=logs.append)
    sft_wall, sft_cpu = time.perf_counter() - w, time.process_time() - c
    sft_steps = sum(1 for row in logs if "loss" in row)
    result = train_grpo(config, train[: max(4, a.grpo_steps)])
    split = result.time_split
    held = take_per_domain(splits.test, a.held_out, seed=0)
    pool = training_pool(config.pool_file, held)
    planner = ModelPlanner.from_directory(result.model_dir, max_tokens=config.max_completion_length)

    async def plans() -> list[str]:
        traces = [await solve(Task.of(r.problem), r.offered(pool), planner) for r in build_rows(held, pool, PoolSampling())]
        return [t.parse_status for t in traces]

    parsed = asyncio.run(plans())
    print(f"small-real, few-shot examples {config.few_shot_examples}, plans {a.plans or 'all'}, "
          f"LoRA r={config.lora_r} on {','.join(config.lora_target_modules)}, 1 thread, CPU (real model)")
    print(f"SFT: {sft_steps} steps of {config.sft_batch_size} examples, {sft_wall / max(1, sft_steps):.1f} s wall, "
          f"{sft_cpu / max(1, sft_steps):.1f} CPU-s per step (load and save included); "
          f"losses {[round(r['loss'], 2) for r in logs if 'loss' in r]}")
    print(f"GRPO: {result.steps} steps of {config.per_device_train_batch_size} rollouts, per step "
          f"{split['wall_step_s']:.1f} s wall / {split['cpu_step_s']:.1f} CPU-s (generation {split['cpu_generation_s']:.1f}, "
          f"reward {split['cpu_reward_s']:.1f}, backward+optimizer {split['cpu_backward_s']:.1f} CPU-s); "
          f"rewards {[round(h.get('reward', 0.0), 3) for h in result.history]}")
    print(f"held-out greedy plans parsed: {parsed.count('ok')} of {len(parsed)} {parsed}")


if __name__ == "__main__":
    main()
