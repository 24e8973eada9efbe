"""Does GRPO teach the tiny Conductor to orchestrate? Held-out accuracy, $ per question, calls per
question and CPU-minutes on the SIMULATED local pool, for: a random workflow, each single worker,
the per-domain oracle router, template fan-out and verify, SFT only, and GRPO for several seeds.

Goal (issue 10): trained >= best single worker + 10 points and within 3 points of the per-domain
oracle in >= 2 of 3 seeds, at <= 10 CPU-minutes per seed on 2 cores. Numbers describe the
simulation, never a real model.

    python benchmarks/learning.py --seeds 3 --steps 200 --write docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.report import write_section  # noqa: E402
from conductor.models.tiny import load_tokenizer  # noqa: E402
from conductor.planners import template_workflow  # noqa: E402
from conductor.training.config import local_profile  # noqa: E402
from conductor.training.dataset import PoolSampling, build_rows, training_pool  # noqa: E402
from conductor.training.evaluate import EvalResult, evaluate_policy, score_texts  # noqa: E402
from conductor.training.pipeline import run_training  # noqa: E402
from conductor.training.problems import local_problems, split_problems  # noqa: E402
from conductor.training.warm import warm_started_tiny  # noqa: E402
from conductor.workflow import Workflow, render  # noqa: E402


def single(worker: int, domain: str) -> str:
    from conductor.training.sft_data import SOLVE

    return render(Workflow(model_id=(worker,), subtasks=(SOLVE[domain][0].format(subject=domain),), access_list=((),)))


def score(texts, rows, pool) -> EvalResult:  # noqa: ANN001
    return asyncio.run(score_texts(texts, rows, pool, examples=False))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--out", type=Path, default=Path(".conductor/bench-learning"))
    ap.add_argument("--write", type=Path, default=None)
    ap.add_argument("--reuse", action="store_true",
                    help="Evaluate the SFT and GRPO models already under --out instead of training (CPU-min n/a).")
    ap.add_argument("--test-set", choices=("split", "eval-sources"), default="split",
                    help="split: the held-out split of the train samples (GRPO's early stopping also selects on it, "
                    "so GRPO rows are optimistic); eval-sources: the shipped eval-source samples (independent).")
    ns = ap.parse_args()

    problems = local_problems("train")
    train, held_out = split_problems(problems, 0.25, seed=0)
    base_cfg = local_profile(ns.out / "warm")
    test = held_out if ns.test_set == "split" else local_problems("eval")
    pool = training_pool(base_cfg.pool_file, [*problems, *test])
    rows = build_rows(test, pool, PoolSampling())
    workers = [s.id for s in pool.specs if s.provider != "conductor"]
    table: list[tuple[str, EvalResult, float]] = []

    rng = random.Random(0)
    table.append(("random single-step workflow", score([single(rng.randrange(len(workers)), r.problem.domain) for r in rows], rows, pool), 0.0))
    per_worker = {}
    for i, w in enumerate(workers):
        res = score([single(i, r.problem.domain) for r in rows], rows, pool)
        per_worker[i] = res
        table.append((f"single worker: {w}", res, 0.0))
    # The oracle picks, per domain, the worker with the best held-out accuracy on that domain.
    best = {}
    for d in {r.problem.domain for r in rows}:
        idx = [k for k, r in enumerate(rows) if r.problem.domain == d]
        best[d] = max(per_worker, key=lambda i: sum(bool(per_worker[i].traces[k].verdict and per_worker[i].traces[k].verdict.correct) for k in idx))
    table.append(("per-domain oracle router", score([single(best[r.problem.domain], r.problem.domain) for r in rows], rows, pool), 0.0))
    for shape in ("fanout", "verify"):
        text = render(template_workflow(shape, list(range(len(workers)))))
        table.append((f"template {shape}", score([text] * len(rows), rows, pool), 0.0))

    c0 = time.process_time()
    sft_dir = ns.out / "warm" / "sft" if ns.reuse else warm_started_tiny(base_cfg, train)
    sft_cpu = float("nan") if ns.reuse else (time.process_time() - c0) / 60
    from transformers import AutoModelForCausalLM

    sft = evaluate_policy(AutoModelForCausalLM.from_pretrained(sft_dir), load_tokenizer(sft_dir), rows, pool,
                          examples=False, max_new_tokens=base_cfg.max_completion_length)
    table.append(("SFT only", sft, sft_cpu))
    for seed in range(ns.seeds):
        c0 = time.process_time()
        cfg = local_profile(ns.out / f"seed{seed}", model_name_or_path=str(sft_dir), max_steps=ns.steps, seed=seed,
                            train_seed=seed)
        if ns.reuse:
            seed_dir = ns.out / f"seed{seed}"
            model_dir = seed_dir / "best" if (seed_dir / "best").is_dir() else seed_dir / "model"
            label, cpu = f"GRPO seed {seed} (reused {model_dir.name})", float("nan")
        else:
            outcome = run_training(cfg, problems)
            cpu = (time.process_time() - c0) / 60
            model_dir = outcome.result.model_dir
            label = f"GRPO seed {seed} ({outcome.result.steps} steps, {outcome.result.stop_reason})"
        from transformers import AutoModelForCausalLM as M

        res = evaluate_policy(M.from_pretrained(model_dir), load_tokenizer(model_dir), rows,
                              pool, examples=False, max_new_tokens=cfg.max_completion_length)
        table.append((label, res, cpu + sft_cpu))

    lines = ["| method (simulated pool) | held-out acc | format | $/question | calls/question | CPU-min |", "|---|---|---|---|---|---|"]
    for name, r, cpu in table:
        lines.append(f"| {name} | {r.accuracy:.3f} | {r.format_rate:.2f} | {r.usd_per_question:.4f} | {r.calls_per_question:.2f} | {cpu:.1f} |")
    best_single = max(per_worker.values(), key=lambda r: r.accuracy).accuracy
    oracle = next(r for n, r, _ in table if n.startswith("per-domain")).accuracy
    grpo = [r.accuracy for n, r, _ in table if n.startswith("GRPO")]
    met = sum(a >= best_single + 0.10 and a >= oracle - 0.03 for a in grpo)
    verdict = (f"Test set: {ns.test_set}. Goal (>= best single + 10 points and within 3 of the oracle) met in {met} of {len(grpo)} seeds "
               f"(best single {best_single:.3f}, oracle {oracle:.3f}; {len(rows)} held-out problems).")
    note = (" Models reused from an earlier run (`--reuse`): CPU-minutes not measured here (nan)." if ns.reuse else "")
    body = "\n".join(lines) + "\n\n" + verdict + note + (
        " calls/question counts the Conductor's own planning call; baselines' CPU-min is 0 (no model).")
    print(body)
    if ns.write:
        write_section(ns.write, f"learning-{ns.test_set}", f"Learning to orchestrate, {ns.test_set} (benchmarks/learning.py, simulated pool)",
                      "CPU-minutes use `time.process_time` of this process (SFT included in each GRPO row).\n\n" + body)


if __name__ == "__main__":
    main()
