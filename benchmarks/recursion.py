"""Recursion as test-time scaling, on the SIMULATED local pool (numbers describe the simulation,
never a real model): each model answers the bank's held-out problems greedily in one round, then
writes a second round after reading its first round's steps and outputs (the paper's recursive
topology: `conductor.prompts.recursion_messages`, run by the same `WorkflowReward.second_round`
training uses). Printed per model: accuracy and worker calls per question after round 1 and after
round 2 (an empty second workflow keeps the first answer), and how often round 2 changed a right
answer to wrong and a wrong one to right.

    python benchmarks/recursion.py MODEL_DIR [MODEL_DIR ...] [--test-n 509] [--write docs/benchmarks.md]

Train a model with recursion rows with `conductor train --set recursion_fraction=0.5` (the second
round's reward is blended into the first round's; its text is not trained on).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.report import write_section  # noqa: E402
from conductor.models.constrained import load_causal_lm  # noqa: E402
from conductor.models.tiny import load_tokenizer  # noqa: E402
from conductor.training.config import local_profile  # noqa: E402
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool  # noqa: E402
from conductor.training.evaluate import generate_workflows  # noqa: E402
from conductor.training.policy import TransformersPolicy  # noqa: E402
from conductor.training.problems import bank_splits, take_per_domain  # noqa: E402
from conductor.training.reward import WorkflowReward  # noqa: E402


def right(trace) -> bool:  # noqa: ANN001
    return bool(trace is not None and trace.verdict is not None and trace.verdict.correct)


async def two_rounds(reward: WorkflowReward, texts: list[str], rows) -> list:  # noqa: ANN001
    rng = random.Random(0)
    return [await reward.score_one(t, r.problem, list(r.pool_ids), True, rng) for t, r in zip(texts, rows)]


def measure(model_dir: Path, rows, pool) -> dict[str, float]:  # noqa: ANN001
    model, tok = load_causal_lm(model_dir), load_tokenizer(model_dir)
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    texts = generate_workflows(model, tok, prompts, max_new_tokens=128)
    policy = TransformersPolicy(model, tok, max_new_tokens=128, temperature=0.0)  # greedy, as round 1
    reward = WorkflowReward(pool, examples=False, policy=policy, concurrency=1)
    scored = asyncio.run(two_rounds(reward, texts, rows))
    n = len(rows)
    first = [right(s.trace) for s in scored]
    # The answer after round 2: the second round's, unless it wrote nothing (the first stands) or
    # there was none (the first workflow did not parse or ran no step).
    def after(s) -> bool:  # noqa: ANN001
        if s.second is None or (s.second.workflow is not None and s.second.workflow.is_empty):
            return right(s.trace)
        return right(s.second)
    second = [after(s) for s in scored]
    calls1 = sum(len(s.trace.all_calls()) for s in scored)
    calls2 = calls1 + sum(len(s.second.all_calls()) for s in scored if s.second is not None)
    return {"n": n, "acc1": sum(first) / n, "acc2": sum(second) / n, "calls1": calls1 / n, "calls2": calls2 / n,
            "r2w": sum(a and not b for a, b in zip(first, second)) / n,
            "w2r": sum(b and not a for a, b in zip(first, second)) / n,
            "parsed2": sum(s.second is not None and s.second.workflow is not None for s in scored) / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", type=Path, help="model directories (label: the directory's path)")
    ap.add_argument("--test-n", type=int, default=None, help="held-out problems (default: the whole split, 509)")
    ap.add_argument("--write", type=Path, default=None, help="write the table into this markdown file's section")
    ns = ap.parse_args()
    test = bank_splits().test
    if ns.test_n:
        test = take_per_domain(test, ns.test_n, seed=0)
    pool = training_pool(local_profile("/tmp/unused").pool_file, test, latency_scale=0.0)
    rows = build_rows(test, pool, PoolSampling(), seed=0)
    lines = ["| model (simulated local pool) | round 1: accuracy / calls | after round 2: accuracy / calls "
             "| right -> wrong | wrong -> right | round 2 parsed |", "|---|---|---|---|---|---|"]
    for md in ns.models:
        m = measure(md, rows, pool)
        line = (f"| {md} | {m['acc1']:.3f} / {m['calls1']:.2f} | {m['acc2']:.3f} / {m['calls2']:.2f} | "
                f"{m['r2w']:.3f} | {m['w2r']:.3f} | {m['parsed2']:.2f} |")
        print(line, flush=True)
        lines.append(line)
    body = "\n".join(lines) + f"\n\n{len(rows)} held-out bank problems, greedy, SIMULATED local pool."
    print(body)
    if ns.write:
        write_section(ns.write, "recursion", "Recursion as test-time scaling (benchmarks/recursion.py, simulated)",
                      body)


if __name__ == "__main__":
    main()
