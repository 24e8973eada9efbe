"""Does GRPO teach the tiny Conductor to orchestrate? Held-out accuracy, $ per question, calls per
question and CPU-minutes on the SIMULATED local pool, for: a random workflow, each single worker,
the per-domain oracle router, template fan-out and verify, SFT only, and GRPO for several seeds.

Goal (issue 10): trained >= best single worker + 10 points and within 3 points of the per-domain
oracle in >= 2 of 3 seeds, at <= 10 CPU-minutes per seed on 2 cores. Numbers describe the
simulation, never a real model.

    python benchmarks/learning.py --seeds 3 --steps 200 --write docs/benchmarks.md
    python benchmarks/learning.py --pool deployments/pools/paper-sim.yaml --seeds 3 --write docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.report import write_section  # noqa: E402
from conductor.planners import template_workflow  # noqa: E402
from conductor.training.compare import baselines, evaluate_model_dir, score  # noqa: E402
from conductor.training.config import DEFAULT_POOL, local_profile  # noqa: E402
from conductor.training.evaluate import EvalResult  # noqa: E402
from conductor.training.pipeline import run_training, training_split  # noqa: E402
from conductor.training.problems import bank_splits, take_per_domain  # noqa: E402
from conductor.training.warm import warm_started_tiny  # noqa: E402
from conductor.workflow import render  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--pool", default=DEFAULT_POOL, help="Pool YAML (local.yaml or paper-sim.yaml).")
    ap.add_argument("--test-n", type=int, default=128, help="Held-out bank problems to evaluate on (stratified).")
    ap.add_argument("--out", type=Path, default=Path(".conductor/bench-learning"))
    ap.add_argument("--write", type=Path, default=None)
    ap.add_argument("--reuse", action="store_true",
                    help="Evaluate the SFT and GRPO models already under --out instead of training (CPU-min n/a).")
    ns = ap.parse_args()

    # Training: the bank's train split (early stopping on a validation slice of it); test: the
    # bank's held-out split, never selected on.
    base_cfg = local_profile(ns.out / "warm", pool_file=str(ns.pool))
    train, _ = training_split(base_cfg)
    test = take_per_domain(bank_splits(n=base_cfg.bank_size).test, ns.test_n, seed=0)
    base = baselines(test, ns.pool)
    rows, pool = base.rows, base.pool
    workers = [i for i, s in enumerate(pool.specs) if s.provider != "conductor"]
    table: list[tuple[str, EvalResult, float]] = [("random single worker", base.random_single, 0.0)]
    table += [(f"single worker: {w}", r, 0.0) for w, r in base.single.items()]
    table.append(("per-domain oracle router", base.oracle, 0.0))
    for shape in ("fanout", "verify"):
        text = render(template_workflow(shape, workers))
        table.append((f"template {shape}", score([text] * len(rows), rows, pool), 0.0))

    c0 = time.process_time()
    sft_dir = ns.out / "warm" / "sft" if ns.reuse else warm_started_tiny(base_cfg, train)
    sft_cpu = float("nan") if ns.reuse else (time.process_time() - c0) / 60
    max_new = base_cfg.max_completion_length or 96
    table.append(("SFT only", evaluate_model_dir(sft_dir, base, max_new_tokens=max_new), sft_cpu))
    for seed in range(ns.seeds):
        c0 = time.process_time()
        cfg = local_profile(ns.out / f"seed{seed}", model_name_or_path=str(sft_dir), max_steps=ns.steps, seed=seed,
                            train_seed=seed, pool_file=str(ns.pool))
        if ns.reuse:
            seed_dir = ns.out / f"seed{seed}"
            model_dir = seed_dir / "best" if (seed_dir / "best").is_dir() else seed_dir / "model"
            label, cpu = f"GRPO seed {seed} (reused {model_dir.name})", float("nan")
        else:
            outcome = run_training(cfg)
            cpu = (time.process_time() - c0) / 60
            model_dir = outcome.result.model_dir
            label = f"GRPO seed {seed} ({outcome.result.steps} steps, {outcome.result.stop_reason})"
        table.append((label, evaluate_model_dir(model_dir, base, max_new_tokens=max_new), cpu + sft_cpu))

    lines = ["| method (simulated pool) | held-out acc | format | $/question | calls/question | CPU-min |", "|---|---|---|---|---|---|"]
    for name, r, cpu in table:
        lines.append(f"| {name} | {r.accuracy:.3f} | {r.format_rate:.2f} | {r.usd_per_question:.4f} | {r.calls_per_question:.2f} | {cpu:.1f} |")
    best_name, best = base.best_single
    oracle = base.oracle.accuracy
    grpo = [r.accuracy for n, r, _ in table if n.startswith("GRPO")]
    met = sum(a >= best.accuracy + 0.10 and a >= oracle - 0.03 for a in grpo)
    pool_name = Path(ns.pool).stem
    verdict = (f"Pool {pool_name} (simulated). Goal (>= best single + 10 points and within 3 of the oracle) met in {met} "
               f"of {len(grpo)} seeds (best single {best_name} {best.accuracy:.3f}, oracle {oracle:.3f}; {len(rows)} "
               "held-out bank problems).")
    note = (" Models reused from an earlier run (`--reuse`): CPU-minutes not measured here (nan)." if ns.reuse else "")
    body = "\n".join(lines) + "\n\n" + verdict + note + (
        " Single workers get one step with the pool's on-topic instruction; the oracle picks per domain the worker "
        "best on these very rows (an upper bound). calls/question counts the Conductor's own planning call; "
        "baselines' CPU-min is 0 (no model).")
    print(body)
    if ns.write:
        write_section(ns.write, f"learning-bank-{pool_name}",
                      f"Learning to orchestrate on held-out bank problems, {pool_name} (benchmarks/learning.py, simulated pool)",
                      "CPU-minutes use `time.process_time` of this process (SFT included in each GRPO row).\n\n" + body)


if __name__ == "__main__":
    main()
