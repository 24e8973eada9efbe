"""Rounds of a trained Conductor, each later one reading the one before, on a SIMULATED pool
(numbers describe the simulation, never a real model): round 1 greedily, round 2 by the same
`WorkflowReward.second_round` training uses, and optionally round 3; per question its answer,
worker calls and $ after each round. Used by benchmarks/recursion.py and
benchmarks/test_time_scaling.py."""
from __future__ import annotations

import asyncio
import collections
import random
from pathlib import Path

from conductor.executor import RunOptions
from conductor.training.dataset import row_messages
from conductor.training.reward import WorkflowReward
from conductor.training.second_round import second_round_action

DOMAINS = ("math", "choice", "freeform", "code")


def right(trace) -> bool:  # noqa: ANN001
    return bool(trace is not None and trace.verdict is not None and trace.verdict.correct)


async def two_rounds(reward: WorkflowReward, texts: list[str], rows) -> list:  # noqa: ANN001
    rng = random.Random(0)
    return [await reward.score_one(t, r.problem, list(r.pool_ids), True, rng, r.effort) for t, r in zip(texts, rows)]


def kept(second) -> bool:  # noqa: ANN001
    return second is None or (second.workflow is not None and second.workflow.is_empty)


def summary(rows, firsts: list[bool], afters: list[bool], calls1: list[int], calls2: list[int],  # noqa: ANN001
            actions: list[str] | None = None) -> dict:
    n = len(rows)
    out = {"n": n, "acc1": sum(firsts) / n, "acc2": sum(afters) / n, "calls1": sum(calls1) / n,
           "calls2": sum(calls2) / n, "r2w": sum(a and not b for a, b in zip(firsts, afters)) / n,
           "w2r": sum(b and not a for a, b in zip(firsts, afters)) / n}
    if actions is not None:
        per: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for r, a in zip(rows, actions):
            per[r.problem.domain][a] += 1
        out["actions"] = per
    return out


async def later_rounds(reward: WorkflowReward, scored, rows, rounds: int) -> list[list]:  # noqa: ANN001
    """Each question's rounds after the second, up to `rounds` in all: round k reads round k - 1
    (`WorkflowReward.second_round`, as round 2 reads round 1). A round that keeps the answer, or
    does not parse, ends its question's rounds (its answer stands). Per question, its later rounds."""
    rng = random.Random(1)
    out = []
    for s, r in zip(scored, rows):
        chain, last = [], s.second
        while len(chain) < rounds - 2 and last is not None and not kept(last) and last.parse_status == "ok":
            options = RunOptions(config=reward.execution, rng=rng)
            last = await reward.second_round(last, r.problem, reward.pool.offer(list(r.pool_ids)), options)
            chain.append(last)
        out.append(chain)
    return out


def measure(model_dir: Path, rows, pool, rounds: int = 2) -> dict:  # noqa: ANN001
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer
    from conductor.training.evaluate import generate_workflows
    from conductor.training.policy import TransformersPolicy

    model, tok = load_causal_lm(model_dir), load_tokenizer(model_dir)
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    texts = generate_workflows(model, tok, prompts, max_new_tokens=128)
    policy = TransformersPolicy(model, tok, max_new_tokens=128, temperature=0.0)  # greedy, as round 1
    reward = WorkflowReward(pool, examples=False, policy=policy, concurrency=1)
    scored = asyncio.run(two_rounds(reward, texts, rows))
    firsts = [right(s.trace) for s in scored]
    # The answer after round 2: the second round's, unless it wrote nothing (the first stands) or
    # there was none (the first workflow did not parse or ran no step).
    afters = [right(s.trace) if kept(s.second) else right(s.second) for s in scored]
    calls1 = [len(s.trace.all_calls()) for s in scored]
    calls2 = [c + (len(s.second.all_calls()) if s.second is not None else 0) for c, s in zip(calls1, scored)]
    actions = [second_round_action(s.second.workflow) if s.second is not None else "unparsed" for s in scored]
    out = summary(rows, firsts, afters, calls1, calls2, actions)
    # which workers round 2 calls, per domain (every step of every acting second round)
    workers: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r, s in zip(rows, scored):
        for step in (s.second.steps if s.second is not None else ()):
            workers[r.problem.domain][step.worker_id] += 1
    out["workers2"] = workers
    # $ per question after each round: unknown (None) when any call's cost is unknown, never $0
    usd = [cost(s.trace) for s in scored]
    out["usd1"] = mean_usd(usd)
    usd = [add(u, cost(s.second)) for u, s in zip(usd, scored)]
    out["usd2"] = mean_usd(usd)
    # rounds 3.. (each question's answer is its last acting round's; calls and $ add up)
    answer, calls = list(afters), list(calls2)
    chains = asyncio.run(later_rounds(reward, scored, rows, rounds)) if rounds > 2 else [[] for _ in rows]
    for k in range(3, rounds + 1):
        for i, chain in enumerate(chains):
            if len(chain) >= k - 2:
                t = chain[k - 3]
                calls[i] += len(t.all_calls())
                usd[i] = add(usd[i], cost(t))
                if not kept(t):
                    answer[i] = right(t)
        out[f"acc{k}"], out[f"calls{k}"], out[f"usd{k}"] = sum(answer) / len(rows), sum(calls) / len(rows), mean_usd(usd)
    return out


def cost(trace) -> float | None:  # noqa: ANN001 - a round's $ (0 for no round; None: unknown)
    return 0.0 if trace is None else trace.usage.cost_usd


def add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def mean_usd(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None) / len(values)


def mean_over_dice(ms: list[dict]) -> dict:
    """One model's figures over several dice draws: each rate and count the mean of the draws, the
    round-2 actions and workers pooled; $ unknown when any draw's is."""
    out: dict = {}
    for key, value in ms[0].items():
        if all(isinstance(m[key], (int, float)) for m in ms):
            out[key] = sum(m[key] for m in ms) / len(ms)
        elif key in ("actions", "workers2"):
            pooled: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
            for m in ms:
                for domain, counts in m[key].items():
                    pooled[domain].update(counts)
            out[key] = pooled
        else:
            out[key] = None if any(m[key] is None for m in ms) else value
    return out


def dice_note(ms: list[dict], dice: list[int]) -> str:
    """The label of a mean-over-dice row: the draws and each one's round-2 gain, in points."""
    gains = " / ".join(f"{100 * (m['acc2'] - m['acc1']):+.1f}" for m in ms)
    return f"mean of dice {' '.join(map(str, dice))} (gain per draw {gains})"
