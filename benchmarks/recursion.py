"""Recursion as test-time scaling, on the SIMULATED local pool (numbers describe the simulation,
never a real model): each model answers the bank's held-out problems greedily in one round, then
writes a second round after reading its first round compactly (`conductor.prompts.recursion_messages`:
each step's worker, role and final answer, and how far they agree), run by the same
`WorkflowReward.second_round` training uses; the second round's steps read the first round's full
responses through `"prev"`. Printed per model: accuracy and worker calls per question after round 1
and after round 2 (an empty second workflow keeps the first answer), how often round 2 changed a
right answer to wrong and a wrong one to right, and what round 2 did per domain (stop / check /
add attempts / replace).

    python benchmarks/recursion.py MODEL_DIR [MODEL_DIR ...] [--test-n 509] [--write docs/benchmarks.md]
    python benchmarks/recursion.py MODEL_DIR --dice 0 1 2   # on three draws of the workers' dice, then their mean
    python benchmarks/recursion.py --train OUT --seed 1     # warm start + GRPO with second rounds, then measure
    python benchmarks/recursion.py --fixed                  # the environment's fixed one- and two-round rows
    python benchmarks/recursion.py M [M ...] --after-policy # each second-round plan after each model's own first rounds
    python benchmarks/recursion.py --train OUT --seed 1 --set 'effort_levels=["low","medium","high"]' \
        --effort low --effort medium --effort high        # effort rows too; round 1 at each level

`--train` runs the local profile from scratch with `sft_recursion_copies=1` (second rounds in the
warm start, after its own first rounds run over the pool) and `second_round_fraction=0.5` (half the
GRPO rows are second rounds after a first round the policy being trained writes as the row is
drawn, trained on with the final answer's reward), each second-round completion run 8 times for
the mean reward (`second_round_executions`) and advantages scaled per batch (`scale_rewards=batch`);
`--set` overrides any of these. `--fixed` runs each domain's
oracle worker with the phrase library's best wording (`compare.library_wording`, both picked on
as many training-split problems: a ceiling of the Conductor's vocabulary, not a policy), over
three dice seeds: after each level's usual first round
(one attempt, a self-check, 4 attempts + aggregator), every second round that fits its step limit
(keep; a check by the oracle or by another worker; k more attempts + an aggregator reading both
rounds), and after 4 attempts, 4 more only where they disagree.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.report import write_section  # noqa: E402
from conductor.effort import Effort  # noqa: E402
from conductor.executor import Round, RunOptions  # noqa: E402
from conductor.prompts import agreement  # noqa: E402
from conductor.training.compare import Wording, baselines, library_wording, selection_problems  # noqa: E402
from conductor.training.config import local_profile  # noqa: E402
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool  # noqa: E402
from conductor.training.problems import bank_splits, take_per_domain  # noqa: E402
from conductor.training.rollout import prior_steps, rollout  # noqa: E402
from conductor.training.second_round import SECOND_ROUND_ACTIONS  # noqa: E402
from conductor.training.strategies import PLAN_BY_NAME  # noqa: E402
from conductor.workflow import DEFAULT_MAX_STEPS, Workflow, later_round_max_steps, render  # noqa: E402

from benchmarks.recursion_rounds import DOMAINS, dice_note, mean_over_dice, measure, right, summary  # noqa: E402


# ---- the environment's fixed rows: each domain's oracle worker with the phrase library's best
# wording, both picked on training-split problems (the comparator benchmarks/test_time_scaling.py
# judges the effort levels by), never on the held-out rows they are scored on


@dataclasses.dataclass(frozen=True)
class Fixed:
    """How the fixed rows write a plan: on the domain's oracle worker, each step in its role's
    library wording (`compare.library_wording`)."""

    oracle: dict[str, int]
    wording: Wording

    def workflow(self, plan, problem) -> Workflow:  # noqa: ANN001
        role = {"check": "verify", "combine": "combine"}
        return Workflow(model_id=(self.oracle[problem.domain],) * plan.steps,
                        subtasks=tuple(self.wording(problem, role.get(r, "solve")) for r in plan.roles),
                        access_list=plan.access)


def fixed_choice(rows) -> Fixed:  # noqa: ANN001
    base = baselines(selection_problems([r.problem for r in rows]), local_profile("/tmp/unused").pool_file,
                     latency_scale=0.0)
    return Fixed(oracle=base.oracle_workers, wording=library_wording(base))


# The first rounds of the fixed rows: what each effort level's models write (low one attempt,
# medium a self-check, high 4 attempts + aggregator), and after each, every second round that fits
# its step limit (`later_round_max_steps`). A recheck is also run on a worker other than the oracle.
FIRST_PLANS = ("single", "check", "attempts_4")
OTHER = {0: 2, 1: 2, 2: 0}  # a worker that is not the domain's oracle (local.yaml), by oracle


def fixed_rows(rows, pool, dice: tuple[int, ...] = (0, 1, 2)) -> list[tuple[str, dict]]:  # noqa: ANN001
    """The environment's two-round ceilings: per first plan (on the oracle worker, best wording),
    each second round that fits, and for 4 attempts a second round only where they disagree; each
    question run once per `dice` seed (the rows are their pooled runs)."""
    from conductor.training.strategies import RECURSION_PLANS

    fixed = fixed_choice(rows)
    runs: dict[tuple[str, str], list[tuple[bool, bool, int, int]]] = collections.defaultdict(list)

    async def one(i: int, r, first_plan: str, k: int) -> None:  # noqa: ANN001
        d, offered = r.problem.domain, r.offered(pool)
        options = RunOptions().seeded(i + 100_003 * k)
        first = await rollout(render(fixed.workflow(PLAN_BY_NAME[first_plan], r.problem)), r.problem, offered,
                              options, messages=row_messages(r, pool, examples=False))
        prior = prior_steps(first)
        runs[(first_plan, "keep")].append((right(first), right(first), first.calls, first.calls))
        limit = later_round_max_steps(DEFAULT_MAX_STEPS, len(prior))
        seconds = [(p.name, fixed.workflow(p, r.problem)) for p in RECURSION_PLANS if 0 < p.steps <= limit]
        w = fixed.workflow(PLAN_BY_NAME["recheck"], r.problem)
        seconds.insert(1, ("recheck_other", w.model_copy(update={"model_id": (OTHER[fixed.oracle[d]],)})))
        for name, workflow in seconds:
            second = await rollout(render(workflow), r.problem, offered, options, messages=[],
                                   within=Round(depth=1, prior=tuple(prior)))
            runs[(first_plan, name)].append((right(first), right(second), first.calls, first.calls + second.calls))
            if name == "more_4":  # only where the first round's 4 attempts disagree
                act = agreement(prior[:4]) < 4
                runs[(first_plan, "more_4 where they disagree")].append(
                    (right(first), right(second) if act else right(first), first.calls,
                     first.calls + (second.calls if act else 0)))

    async def everything() -> None:
        for first_plan in FIRST_PLANS:
            for k in dice:
                for i, r in enumerate(rows):
                    await one(i, r, first_plan, k)

    asyncio.run(everything())
    out = []
    for (first_plan, second), v in runs.items():
        label = f"{first_plan}, then {SECOND_LABELS.get(second, second)}"
        out.append((label, summary([None] * len(v), [a for a, _, _, _ in v], [b for _, b, _, _ in v],
                                   [c for _, _, c, _ in v], [c for _, _, _, c in v])))
    return out


SECOND_LABELS = {"keep": "keep", "recheck": "a check by the oracle worker",
                 "recheck_other": "a check by another worker",
                 "more_4 where they disagree": "4 more + an aggregator reading both rounds, where the 4 disagree",
                 **{f"more_{k}": f"{k} more + an aggregator reading both rounds" for k in range(1, 5)}}


def plans_after_policy(model_dir: Path, rows, pool) -> list[str]:  # noqa: ANN001
    """What each second-round plan would earn after the model's OWN first rounds (greedy, as
    `measure` runs them): each plan written on the domain's oracle worker with the best wording,
    where it fits the step limit (else the first answer stands, as keeping it). Says whether the
    action a model learned (keep, check, add) is the one that pays after its first rounds."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer
    from conductor.training.evaluate import generate_workflows
    from conductor.training.strategies import RECURSION_PLANS

    model, tok = load_causal_lm(model_dir), load_tokenizer(model_dir)
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    texts = generate_workflows(model, tok, prompts, max_new_tokens=128)
    fixed = fixed_choice(rows)

    async def one(i: int, r):  # noqa: ANN001, ANN202
        offered = r.offered(pool)
        options = RunOptions().seeded(i)
        first = await rollout(texts[i], r.problem, offered, options, messages=prompts[i])
        prior = prior_steps(first)
        limit = later_round_max_steps(DEFAULT_MAX_STEPS, len(prior))
        out = {}
        for plan in RECURSION_PLANS:
            if not plan.steps or plan.steps > limit or not first.steps:
                out[plan.name] = (right(first), first.calls)
                continue
            second = await rollout(render(fixed.workflow(plan, r.problem)), r.problem, offered, options, messages=[],
                                   within=Round(depth=1, prior=tuple(prior)))
            out[plan.name] = (right(second), first.calls + second.calls)
        return out

    async def everything():  # noqa: ANN202
        return [await one(i, r) for i, r in enumerate(rows)]

    runs = asyncio.run(everything())
    lines = []
    for plan in RECURSION_PLANS:
        per = {d: [x[plan.name] for x, r in zip(runs, rows) if r.problem.domain == d] for d in DOMAINS}
        acc = sum(x[plan.name][0] for x in runs) / len(runs)
        calls = sum(x[plan.name][1] for x in runs) / len(runs)
        lines.append(f"| {model_dir} | {plan.name} | {acc:.3f} / {calls:.2f} | "
                     + " | ".join(f"{sum(a for a, _ in v) / len(v):.3f}" for v in per.values()) + " |")
        print(lines[-1], flush=True)
    return lines


def with_limit_marks(model, tok, pool) -> str:  # noqa: ANN001
    """A model saved before its automaton knew step limits or later rounds: the same grammar
    rebuilt over its own tokenizer, now with the limit and later-round marks (refused if the
    grammar came out any different)."""
    from conductor.models.automaton import DecisionAutomaton
    from conductor.training.base_model import conductor_automaton

    saved = DecisionAutomaton.from_config(model.config.decision_automaton)
    if saved.limit_marks and saved.later_round_mark:
        return "as saved"
    rebuilt = conductor_automaton(tok, pool.specs)
    if rebuilt.edges != saved.edges:
        raise SystemExit("the rebuilt grammar differs from the saved one: not the same model's")
    model.config.decision_automaton = rebuilt.to_config()
    return "marks added"


def parse_rates(model_dir: Path, rows, pool, *, n: int = 32, samples: int = 4,  # noqa: ANN001
                limit_marks: bool = False) -> list[str]:
    """Sampled at temperature 1 (as GRPO samples): the share of first rounds that parse as first
    rounds, and per first-round plan (run over the pool, shown in the recursion prompt) the share
    of second rounds that parse as second rounds, with what the second rounds write.
    `limit_marks`: decode a model saved without step-limit marks with them (`with_limit_marks`)."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer
    from conductor.training.second_round import run_first_rounds, sample_workflows, second_round_messages
    from conductor.training.sft_data import completion_text
    from conductor.training.strategies import PLANS, draw_workflow, stated_plan
    from conductor.workflow import ParseError, parse

    model, tok = load_causal_lm(model_dir), load_tokenizer(model_dir)
    label = f"{model_dir} ({with_limit_marks(model, tok, pool)})" if limit_marks else str(model_dir)
    rows = rows[:n]
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows for _ in range(samples)]
    texts = sample_workflows(model, tok, prompts, max_new_tokens=128)
    ok = sum(not isinstance(parse(t, len(pool.specs) - 1), ParseError) for t in texts)
    out = [f"| {label} | first round | {ok / len(texts):.3f} ({len(texts)}) | "
           f"{dict(collections.Counter(getattr(stated_plan(t), 'name', '?') for t in texts).most_common(4))} |"]
    print(out[-1], flush=True)
    rng = random.Random(0)
    for plan in PLANS:
        firsts = [completion_text(r.problem, draw_workflow(plan, r.problem.domain, [0, 1, 2, 3], rng), plan) for r in rows]
        traces = asyncio.run(run_first_rounds(firsts, rows, pool, examples=False))
        prompts = [[m.model_dump() for m in second_round_messages(r.problem, r.offered(pool), prior_steps(t))]
                   for r, t in zip(rows, traces) for _ in range(samples)]
        texts = sample_workflows(model, tok, prompts, max_new_tokens=128)
        # within the step limit the second round's prompt states (as many steps as the first ran)
        limits = [later_round_max_steps(DEFAULT_MAX_STEPS, len(t.steps)) for t in traces for _ in range(samples)]
        ok = sum(not isinstance(parse(t, len(pool.specs) - 1, max_steps=k, allow_empty=True, earlier_round=True),
                                ParseError) for t, k in zip(texts, limits))
        written = collections.Counter(getattr(stated_plan(t), "name", "?") for t in texts)
        out.append(f"| {label} | second round after {plan.name} | {ok / len(texts):.3f} ({len(texts)}) | "
                   f"{dict(written.most_common(5))} |")
        print(out[-1], flush=True)
    return out


# How a second round's advantage is made to follow what it is worth (docs/training.md "Second
# rounds whose advantage follows their worth"): each second-round completion runs 8 times and
# earns the mean, and advantages are scaled by the batch's std, not each group's. With one run
# and per-group scaling, 3 of 9 models kept every answer after one attempt (+0.0); with both,
# 5 of 6 checked and met the recursion bar (SIMULATED local pool).
SECOND_ROUND_SIGNAL = {"second_round_executions": 8, "scale_rewards": "batch"}


def train_seed(out: Path, seed: int, second_round_cost_weight: float | None = None,
               settings: dict | None = None) -> Path:
    """The local profile from scratch (its own warm start) with second rounds in the warm start and
    in GRPO; returns the trained model's directory. An OUT holding only an earlier run's sft/
    reuses that warm start."""
    from conductor.training.pipeline import run_training

    recipe = {"sft_recursion_copies": 1, "second_round_fraction": 0.5, **SECOND_ROUND_SIGNAL}
    cfg = local_profile(out, seed=seed, train_seed=seed, second_round_cost_weight=second_round_cost_weight,
                        **(recipe | (settings or {})))
    t0, c0 = time.perf_counter(), time.process_time()
    outcome = run_training(cfg)
    print(f"trained seed {seed}: {outcome.result.model_dir} ({(time.perf_counter() - t0) / 60:.1f} wall-min, "
          f"{(time.process_time() - c0) / 60:.1f} CPU-min of this process)", flush=True)
    return outcome.result.model_dir


def actions_text(per, workers=None) -> str:  # noqa: ANN001
    """Per domain, the share of each round-2 action, then the workers round 2 called (share of its steps)."""
    parts = []
    for d in DOMAINS:
        c = per.get(d)
        if c:
            n = sum(c.values())
            text = f"{d}: " + ", ".join(f"{a} {c[a] / n:.2f}" for a in SECOND_ROUND_ACTIONS if c[a])
            w = (workers or {}).get(d)
            if w:
                k = sum(w.values())
                text += " (" + ", ".join(f"{name} {v / k:.2f}" for name, v in w.most_common(2)) + ")"
            parts.append(text)
        else:
            parts.append(f"{d}: -")
    return "; ".join(parts)


def line(label: str, m: dict, rounds: int = 2) -> str:
    acts = actions_text(m["actions"], m.get("workers2")) if "actions" in m else "(fixed)"
    later = "".join(f" {m[f'acc{k}']:.3f} / {m[f'calls{k}']:.2f} |" if f"acc{k}" in m else " - |"
                    for k in range(3, rounds + 1))
    return (f"| {label} | {m['acc1']:.3f} / {m['calls1']:.2f} | {m['acc2']:.3f} / {m['calls2']:.2f} | "
            f"{m['r2w']:.3f} | {m['w2r']:.3f} | {acts} |{later}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path, help="model directories (label: the directory's path)")
    ap.add_argument("--train", type=Path, default=None, help="train a model from scratch here first (see above)")
    ap.add_argument("--seed", type=int, default=1, help="with --train: the seed")
    ap.add_argument("--second-round-cost-weight", type=float, default=None,
                    help="with --train: reward - this x $ of a second-round row's own calls (default: none)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="with --train: a training config field over the profile's (repeat), e.g. scale_rewards=batch")
    ap.add_argument("--fixed", action="store_true", help="also the environment's fixed one- and two-round rows")
    ap.add_argument("--parse", action="store_true",
                    help="only the parse rates at temperature 1 (first rounds, and second rounds after each plan)")
    ap.add_argument("--limit-marks", action="store_true",
                    help="with --parse: decode models saved before step-limit or later-round marks with them "
                         "(same grammar)")
    ap.add_argument("--after-policy", action="store_true",
                    help="only what each second-round plan (oracle worker, best wording) earns after each model's "
                         "own first rounds")
    ap.add_argument("--effort", action="append", default=[], choices=[str(e) for e in Effort],
                    help="round 1 at this effort level (its prompt states it; repeat for several): a model trained "
                         "with effort rows (--set effort_levels=...). Default: no level stated")
    ap.add_argument("--rounds", type=int, default=2, choices=(2, 3),
                    help="rounds to run: 3 adds a third, reading the second (where the second acted)")
    ap.add_argument("--dice", type=int, nargs="+", default=[0],
                    help="the simulated workers' dice: each model and level is measured on each draw (an evaluation "
                         "repeat's seeds), then their mean (one draw of 509 questions moves round 1 by up to ~3 points)")
    ap.add_argument("--test-n", type=int, default=None, help="held-out problems (default: the whole split, 509)")
    ap.add_argument("--write", type=Path, default=None, help="write the table into this markdown file's section")
    ap.add_argument("--note", default="", help="a sentence for the table's footnote (what the models are)")
    ns = ap.parse_args()
    models = list(ns.models)
    if ns.train is not None:
        from conductor.cli.common import parse_settings, training_fields

        models.append(train_seed(ns.train, ns.seed, ns.second_round_cost_weight,
                                 parse_settings(ns.set, training_fields())))
    test = bank_splits().test
    if ns.test_n:
        test = take_per_domain(test, ns.test_n, seed=0)
    pool = training_pool(local_profile("/tmp/unused").pool_file, test, latency_scale=0.0)
    rows = build_rows(test, pool, PoolSampling(), seed=0)
    if ns.after_policy:
        print("| model (SIMULATED local pool) | second round (oracle worker, best wording; keep where it does not fit) "
              "| after round 2: accuracy / calls | " + " | ".join(DOMAINS) + " |\n|---|---|---|" + "---|" * len(DOMAINS))
        for md in models:
            plans_after_policy(md, rows, pool)
        return
    if ns.parse:
        print("| model (SIMULATED local pool) | prompt | parses (samples) | plans written |\n|---|---|---|---|")
        for md in models:
            parse_rates(md, rows, pool, limit_marks=ns.limit_marks)  # prints each row as it is measured
        return
    lines = ["| model or fixed workflow (simulated local pool) | round 1: accuracy / calls "
             "| after round 2: accuracy / calls | right -> wrong | wrong -> right | round 2 does, per domain (the workers it calls) |"
             + "".join(f" after round {k}: accuracy / calls |" for k in range(3, ns.rounds + 1)),
             "|---|---|---|---|---|---|" + "---|" * (ns.rounds - 2)]
    # A simulated pool draws anew for a call it has answered before, so each model and level (and
    # the fixed rows) gets a fresh pool: a row's dice do not depend on what was measured before it.
    def fresh(dice: int = 0):  # noqa: ANN202
        return training_pool(local_profile("/tmp/unused").pool_file, test, latency_scale=0.0, repeat=dice)

    for md in models:
        for level in ns.effort or [None]:
            at = [dataclasses.replace(r, effort=Effort(level) if level else None) for r in rows]
            label = str(md) + (f", round 1 at effort {level}" if level else "")
            ms = []
            for dice in ns.dice:
                ms.append(measure(md, at, fresh(dice), ns.rounds))
                lines.append(line(label + (f", dice {dice}" if len(ns.dice) > 1 else ""), ms[-1], ns.rounds))
                print(lines[-1], flush=True)
            if len(ms) > 1:
                lines.append(line(label + ", " + dice_note(ms, ns.dice), mean_over_dice(ms), ns.rounds))
                print(lines[-1], flush=True)
    if ns.fixed:
        for label, m in fixed_rows(rows, fresh()):
            lines.append(line(f"fixed, oracle workers: {label}", m, ns.rounds))
            print(lines[-1], flush=True)
    body = "\n".join(lines) + f"\n\n{len(rows)} held-out bank problems, greedy, SIMULATED local pool. {ns.note}".rstrip()
    print(body)
    if ns.write:
        write_section(ns.write, "recursion", "Recursion as test-time scaling (benchmarks/recursion.py, simulated)",
                      body)


if __name__ == "__main__":
    main()
