"""Where a GRPO step's time goes, and whether the reward runs a batch concurrently.

1. Reward time: the async reward (WorkflowReward, the real executor and verifiers) on one
   workflow, then on a batch of 64, over the SIMULATED local pool with every worker's latency
   fixed (sigma 0) so the comparison measures concurrency, not luck. Goal: the batch of 64 takes
   <= 1.5x the time of one workflow.
2. A GRPO step's time split (generation, reward, the rest of the step: log-probs, loss,
   backward, optimizer), wall and CPU seconds per step, over a few real GRPO steps of the local
   profile's tiny model (warm-started here unless --model is given).

    python benchmarks/training_speed.py [--model DIR] [--steps 5] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import yaml  # noqa: E402

from benchmarks.report import write_section  # noqa: E402
from conductor.training.config import DEFAULT_POOL, local_profile  # noqa: E402
from conductor.training.grpo import train_grpo  # noqa: E402
from conductor.training.pipeline import training_split  # noqa: E402
from conductor.training.problems import bank_splits, take_per_domain  # noqa: E402
from conductor.training.reward import WorkflowReward  # noqa: E402
from conductor.training.dataset import training_pool  # noqa: E402
from conductor.training.sft_data import completion_text, task_workflow  # noqa: E402

LATENCY_MS = 200.0


def fixed_latency_pool_file(tmp: Path, concurrency: int | None = None) -> Path:
    data = yaml.safe_load(Path(DEFAULT_POOL).read_text())
    for w in data["workers"]:
        w.setdefault("options", {})["latency_ms"] = {"median": LATENCY_MS, "sigma": 0.0}
        if concurrency is not None:
            w["concurrency"] = concurrency
    path = tmp / f"fixed-latency-{concurrency}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def reward_time(pool_file: Path, repeats: int = 3, *, code: bool = True) -> tuple[float, float, float, float]:
    """(wall of one, wall of 64, CPU of one, CPU of 64), medians of `repeats`. Without `code`, no
    coding problems: their verification runs the program's tests in the sandbox (real processes,
    as many at once as there are cores), which is CPU work, not waiting."""
    import random

    bank = [p for p in bank_splits().test if code or p.domain != "code"]
    problems = take_per_domain(bank, 64, seed=0)
    pool = training_pool(pool_file, problems)
    reward = WorkflowReward(pool, examples=False)
    ids = [s.id for s in pool.specs if s.provider != "conductor"]
    rng = random.Random(0)
    texts = [completion_text(p, task_workflow(p, range(len(ids)), rng, p_check=0.0)) for p in problems]
    cols = {"problem": [p.model_dump_json() for p in problems], "pool_ids": [ids] * len(problems)}

    def run(n: int) -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        out = asyncio.run(reward(prompts=[None] * n, completions=texts[:n], problem=cols["problem"][:n],
                                 pool_ids=cols["pool_ids"][:n]))
        assert len(out) == n and all(r >= 0.5 for r in out)  # every workflow parsed and ran
        return time.perf_counter() - t0, time.process_time() - c0

    run(1)  # warm-up (imports, caches)
    ones = [run(1) for _ in range(repeats)]
    batches = [run(64) for _ in range(repeats)]
    return (statistics.median(w for w, _ in ones), statistics.median(w for w, _ in batches),
            statistics.median(c for _, c in ones), statistics.median(c for _, c in batches))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=None, help="Warm-started model dir (default: warm-start one here).")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--write", type=Path, default=None)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        lines = []
        for conc, code, label in (
            (64, False, "each worker's concurrency limit raised to 64, so the reward's own concurrency is what is "
                        "measured; no coding problems"),
            (64, True, "limits raised to 64; all four domains, so a quarter of the workflows are coding problems "
                       "whose tests run in the sandbox, as many at once as there are cores"),
            (None, True, "the pool's own limits (8 calls in flight per worker: 64 one-step workflows over 4 "
                         "workers need at least two waves); all four domains"),
        ):
            one, batch, c_one, c_batch = reward_time(fixed_latency_pool_file(tmp_path, conc), code=code)
            lines.append(
                f"Reward time (simulated local pool, every worker call a fixed {LATENCY_MS:.0f} ms; {label}): one "
                f"workflow {one * 1000:.0f} ms wall ({c_one * 1000:.0f} ms CPU), a batch of 64 {batch * 1000:.0f} ms "
                f"wall ({c_batch * 1000:.0f} ms CPU): ratio {batch / one:.2f}x (goal <= 1.5x: "
                f"{'met' if batch / one <= 1.5 else 'NOT met'}).")
        cfg = local_profile(tmp_path / "run", max_steps=ns.steps, eval_every=0, early_stopping_patience=0,
                            save_steps=10_000)
        train, _ = training_split(cfg)
        if ns.model is None:
            from conductor.training.warm import warm_started_tiny

            warm_started_tiny(cfg, train)
        else:
            cfg.model_name_or_path = str(ns.model)
        t0 = time.perf_counter()
        result = train_grpo(cfg, train)
        s = result.time_split
        lines.append(
            f"GRPO step of the local profile ({cfg.per_device_train_batch_size} completions, tiny model, "
            f"torch threads {cfg.torch_threads}), mean of {int(s['steps'])} steps, wall / CPU seconds: generation "
            f"{s['wall_generation_s']:.2f} / {s['cpu_generation_s']:.2f}, reward {s['wall_reward_s']:.2f} / "
            f"{s['cpu_reward_s']:.2f}, backward and the rest {s['wall_backward_s']:.2f} / {s['cpu_backward_s']:.2f}; "
            f"whole step {s['wall_step_s']:.2f} / {s['cpu_step_s']:.2f} ({time.perf_counter() - t0:.0f} s for the run). "
            f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall is inflated by "
            "other jobs; CPU seconds are this process's).")
    body = "\n\n".join(lines)
    print(body)
    if ns.write:
        write_section(ns.write, "training-speed", "GRPO step time and reward concurrency (benchmarks/training_speed.py, "
                      "simulated pool)", body)


if __name__ == "__main__":
    main()
