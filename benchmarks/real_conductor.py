"""Step time of the `small-real` profile on this machine: the real SmolLM2-135M-Instruct as the
Conductor base, prompted through its chat template, LoRA (peft), one torch thread, CPU. A short
SFT warm start and a few GRPO steps of the profile as it is (or with the CI test's reductions),
then the held-out greedy plans through `ModelPlanner` (the `local` worker): parsed, accuracy,
calls, shapes and workers per domain.

Real model, simulated pool's rewards: the step times are real; rewards are the simulation's.

    python benchmarks/real_conductor.py [--sft-problems 8] [--grpo-steps 2] [--no-examples] \
        [--plans single] [--held-out 4] [--compare-sft] [--device cuda] [--json FILE] [--out DIR]

On a GPU (`--device cuda`): TRL trains in bf16 on the GPU (`use_cpu` false) and the held-out
plans are generated there; the figures are the same, per step.
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


def held_out_report(traces: list) -> dict:
    """What the greedy Conductor wrote on the held-out questions: parse rate, accuracy, calls, the
    shapes (steps per workflow) and the workers it asked, per domain."""
    from collections import Counter

    by_domain: dict[str, list] = {}
    for t in traces:
        by_domain.setdefault(t.domain, []).append(t)

    def summary(ts: list) -> dict:
        parsed = [t for t in ts if t.parse_status == "ok" and t.workflow is not None]
        return {
            "n": len(ts),
            "parsed": len(parsed) / len(ts),
            "accuracy": sum(bool(t.verdict and t.verdict.correct) for t in ts) / len(ts),
            "calls": sum(t.calls for t in ts) / len(ts),
            "steps": dict(Counter(len(t.workflow.model_id) for t in parsed)),
            "workers": dict(Counter(w for t in parsed for w in t.workflow.model_id).most_common(4)),
            "parse_errors": dict(Counter(t.parse_status for t in ts if t.parse_status != "ok")),
        }

    return {"all": summary(traces), **{d: summary(ts) for d, ts in sorted(by_domain.items())}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sft-problems", type=int, default=8, help="SFT examples (one per problem; steps of sft_batch_size)")
    ap.add_argument("--grpo-steps", type=int, default=2, help="GRPO steps (one training question each)")
    ap.add_argument("--no-examples", action="store_true", help="the prompt without the few-shot examples (the CI test's)")
    ap.add_argument("--plans", nargs="*", default=[], help="the warm start's plans (default: all)")
    ap.add_argument("--held-out", type=int, default=4, help="held-out questions whose greedy plans are run and scored")
    ap.add_argument("--compare-sft", action="store_true", help="score the warm start's greedy plans too (before GRPO)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="cuda: TRL on the GPU in bf16 (use_cpu false), held-out generation there too")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (the profile's 1)")
    ap.add_argument("--json", default=None, help="write the figures here, rewritten after each phase")
    ap.add_argument("--out", default=None, help="run directory (default: a temporary one)")
    a = ap.parse_args()

    import json
    import platform

    import torch

    from conductor.planners import ModelPlanner
    from conductor.solve import solve
    from conductor.training.config import profile_config
    from conductor.training.dataset import PoolSampling, build_rows, training_pool
    from conductor.training.grpo import train_grpo
    from conductor.training.pipeline import ensure_model
    from conductor.training.problems import bank_splits, take_per_domain
    from conductor.types import Task

    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda, but torch sees no CUDA device")
    gpu = a.device == "cuda"
    device_name = torch.cuda.get_device_name(0) if gpu else platform.processor() or platform.machine()
    out = Path(a.out or tempfile.mkdtemp(prefix="real-conductor-"))
    config = profile_config("small-real", out, max_steps=a.grpo_steps, save_steps=10_000, sft_problems=a.sft_problems,
                            sft_plans=a.plans, cost_weight=10.0, torch_threads=a.threads,
                            **({"use_cpu": False, "bf16": True} if gpu else {}),
                            **({"few_shot_examples": False} if a.no_examples else {}))
    splits = bank_splits(n=config.bank_size)
    train = take_per_domain(splits.train, a.sft_problems, seed=0)
    held = take_per_domain(splits.test, a.held_out, seed=0)
    figures: dict = {"device": device_name, "torch": torch.__version__, "profile": "small-real",
                     "few_shot_examples": config.few_shot_examples, "plans": a.plans or "all",
                     "lora": f"r={config.lora_r} on {','.join(config.lora_target_modules)}",
                     "bf16": config.bf16, "pool": "SIMULATED local pool (the Conductor is real)"}

    def save() -> None:
        if a.json:
            Path(a.json).write_text(json.dumps(figures, indent=1, default=str))

    async def score(model_dir: Path) -> dict:
        pool = training_pool(config.pool_file, held)
        planner = ModelPlanner.from_directory(model_dir, max_tokens=config.max_completion_length, device=a.device)
        rows = build_rows(held, pool, PoolSampling())
        traces = await asyncio.gather(*(solve(Task.of(r.problem), r.offered(pool), planner) for r in rows))
        return held_out_report(list(traces))

    def timed_score(model_dir: Path) -> dict:
        w = time.perf_counter()
        report = asyncio.run(score(model_dir))
        return report | {"wall_s": round(time.perf_counter() - w, 1)}

    logs: list[dict] = []
    w, c = time.perf_counter(), time.process_time()
    sft_dir = ensure_model(config, train, on_log=logs.append)
    sft_wall, sft_cpu = time.perf_counter() - w, time.process_time() - c
    sft_steps = sum(1 for row in logs if "loss" in row)
    figures["sft"] = {"steps": sft_steps, "batch": config.sft_batch_size, "wall_s": round(sft_wall, 1),
                      "wall_per_step_s": round(sft_wall / max(1, sft_steps), 2),
                      "losses": [round(r["loss"], 3) for r in logs if "loss" in r]}
    print(f"SFT: {sft_steps} steps of {config.sft_batch_size} examples, {sft_wall:.1f} s wall "
          f"(load and save included); losses {figures['sft']['losses']}", flush=True)
    save()
    if a.compare_sft:
        figures["held_out_sft"] = timed_score(sft_dir)
        print(f"warm start, held-out: {json.dumps(figures['held_out_sft']['all'])}", flush=True)
        save()
    grpo_train = take_per_domain(splits.train, max(4, a.grpo_steps), seed=1)
    result = train_grpo(config, grpo_train)
    split = result.time_split
    rewards = [round(h.get("reward", 0.0), 3) for h in result.history]
    figures["grpo"] = {"steps": result.steps, "rollouts_per_step": config.per_device_train_batch_size,
                       "wall_s": round(result.wall_s, 1), "split": {k: round(v, 2) for k, v in split.items()},
                       "rewards": rewards}
    print(f"GRPO: {result.steps} steps of {config.per_device_train_batch_size} rollouts, per step "
          f"{split['wall_step_s']:.2f} s wall / {split['cpu_step_s']:.2f} CPU-s (generation {split['cpu_generation_s']:.2f}, "
          f"reward {split['cpu_reward_s']:.2f}, backward+optimizer {split['cpu_backward_s']:.2f} CPU-s); rewards {rewards}",
          flush=True)
    save()
    figures["held_out_grpo"] = timed_score(result.model_dir)
    print(f"after GRPO, held-out: {json.dumps(figures['held_out_grpo']['all'])}", flush=True)
    if gpu:
        figures["max_memory_allocated_gb"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    save()
    print(f"small-real on {device_name}: few-shot examples {config.few_shot_examples}, plans {a.plans or 'all'}, "
          f"LoRA {figures['lora']}, bf16 {config.bf16}")


if __name__ == "__main__":
    main()
