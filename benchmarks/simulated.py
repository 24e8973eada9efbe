"""The simulated pools as a learning environment: what each strategy is worth in them.

SIMULATED figures: they describe the environment (docs/simulated.md), never a real model.
For each pool (local.yaml, paper-sim.yaml), over the same seeded problems, every workflow run
through the real executor with real step messages and graded by the real verifiers:
  - each worker alone per domain (on-topic instruction) against its configured skill;
  - with the domain's best worker: one attempt, 3 attempts + aggregator (4 calls), attempt + verify (2 calls),
    attempt + 5 self-reviews (6 calls, reflect), 5 attempts + vote (6 calls, budget);
  - cross-review: the domain's second-best worker answers, then reviews itself or is reviewed by the best;
  - the same worker under on-topic, generic (the old template), off-topic, empty, kitchen-sink and
    another domain's instructions;
  - the per-domain oracle router (best worker of each domain) against the best single worker.

    python benchmarks/simulated.py [--per-domain 1000] [--problems FILE.jsonl] [--write docs/benchmarks.md]

Problems: a Problem JSONL file if given, else `conductor.data.synthetic.generate_bank` when it
exists, else the small factory of tests/sim_problems.py.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import section_parser, write_if_asked  # noqa: E402
from conductor.data.bank import load_problems  # noqa: E402
from conductor.data.schema import DOMAINS, Problem  # noqa: E402
from conductor.config import ExecutionConfig  # noqa: E402
from conductor.executor import RunOptions, execute  # noqa: E402
from conductor.types import Task  # noqa: E402
from conductor.workers.pool import Pool, read_pool_file  # noqa: E402
from conductor.workers.registry import BuildContext  # noqa: E402
from conductor.workers.simulated import (  # noqa: E402
    ProblemBank,
    SimulatedOptions,
    extract_answer,
    on_topic_instruction,
    verdict_of,
)
from conductor.workflow import ALL, Workflow  # noqa: E402

POOLS = {"local": "deployments/pools/local.yaml", "paper-sim": "deployments/pools/paper-sim.yaml"}
OLD_TEMPLATE = "Solve the task. Show your reasoning briefly and end with the final answer in the requested format."
KITCHEN_SINK = ("Solve it: compute the algebra equation, recall the facts and concepts, use scientific "
                "estimates, implement the algorithm with input and output; answer with \\boxed{}, a letter "
                "option, a short phrase or a fenced python block.")
INSTRUCTIONS: dict[str, Callable[[Problem], str]] = {
    "on-topic": on_topic_instruction,
    "generic (old template)": lambda _p: OLD_TEMPLATE,
    "off-topic (haiku)": lambda _p: "Write a haiku about cats.",
    "empty": lambda _p: "",
    "kitchen sink": lambda _p: KITCHEN_SINK,
    "another domain's on-topic": lambda p: on_topic_instruction(
        Problem(id="x", source="x", domain=DOMAINS[(DOMAINS.index(p.domain) + 1) % len(DOMAINS)], question="x")),
}


def load_bank(args: argparse.Namespace) -> tuple[list[Problem], str]:
    if args.problems:
        return load_problems(args.problems), str(args.problems)
    try:
        from conductor.data.synthetic import generate_bank  # type: ignore[import-not-found]
    except ImportError:
        from tests.sim_problems import make_problems

        return make_problems(args.per_domain, seed=args.seed), "tests/sim_problems.py factory"
    return list(generate_bank(args.per_domain * len(DOMAINS), args.seed)), "conductor.data.synthetic"


def fast_pool(path: str, bank: ProblemBank) -> Pool:
    """The pool file's workers with no latency (accuracy is measured here, not speed)."""
    specs = [s.model_copy(update={"concurrency": 100_000, "options": {**s.options, "latency_ms": {"median": 0.001}}})
             for s in read_pool_file(path).workers]
    return Pool.from_specs(specs, BuildContext(bank=bank))


def grade(problem: Problem, text: str | None) -> bool:
    """The real verifier, on the answer read as the verifiers read it (cached per distinct answer)."""
    value = extract_answer(problem, text or "")
    return value is not None and verdict_of(problem, value)


class Runner:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.calls = 0

    async def run(self, wf: Workflow, problem: Problem) -> tuple[bool, float]:
        # reflect and budget take 6 steps: the 5-step limit is on what the Conductor writes, not on baselines
        options = RunOptions(config=ExecutionConfig(max_steps=max(len(wf), 5)))
        trace = await execute(wf, Task.of(problem), self.pool, options)
        self.calls += len(wf)
        return grade(problem, trace.answer), trace.usage.cost_usd

    async def many(self, make: Callable[[Problem], Workflow], problems: Sequence[Problem]) -> tuple[float, float]:
        gate = asyncio.Semaphore(512)

        async def one(p: Problem) -> tuple[bool, float]:
            async with gate:
                return await self.run(make(p), p)

        results = await asyncio.gather(*(one(p) for p in problems))
        return mean(r for r, _ in results), mean(c for _, c in results)


def single(i: int, instruction: Callable[[Problem], str] = on_topic_instruction) -> Callable[[Problem], Workflow]:
    return lambda p: Workflow(model_id=(i,), subtasks=(instruction(p),), access_list=((),))


def ensemble(i: int) -> Callable[[Problem], Workflow]:
    return lambda p: Workflow(model_id=(i, i, i, i), subtasks=(*[on_topic_instruction(p)] * 3,
                              on_topic_instruction(p, "combine")), access_list=((), (), (), ALL))


def verified(i: int) -> Callable[[Problem], Workflow]:
    return lambda p: Workflow(model_id=(i, i), subtasks=(on_topic_instruction(p), on_topic_instruction(p, "verify")),
                              access_list=((), ALL))


def self_reviewed(i: int, rounds: int = 5) -> Callable[[Problem], Workflow]:
    """One attempt, then `rounds` reviews by the same worker, each reading the last (reflect)."""
    return lambda p: Workflow(model_id=(i,) * (rounds + 1),
                              subtasks=(on_topic_instruction(p), *[on_topic_instruction(p, "verify")] * rounds),
                              access_list=((), *[(k,) for k in range(rounds)]))


def cross_reviewed(i: int, j: int) -> Callable[[Problem], Workflow]:
    """Worker i attempts, a different worker j reviews."""
    return lambda p: Workflow(model_id=(i, j), subtasks=(on_topic_instruction(p), on_topic_instruction(p, "verify")),
                              access_list=((), ALL))


def voted(i: int, samples: int = 5) -> Callable[[Problem], Workflow]:
    """`samples` attempts by the same worker, then it settles them (budget)."""
    return lambda p: Workflow(model_id=(i,) * (samples + 1),
                              subtasks=(*[on_topic_instruction(p)] * samples, on_topic_instruction(p, "combine")),
                              access_list=(*[()] * samples, ALL))


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


async def bench_pool(name: str, path: str, problems: list[Problem]) -> str:
    bank = ProblemBank(problems)
    runner = Runner(fast_pool(path, bank))
    specs = runner.pool.specs
    by_domain = {d: [p for p in problems if p.domain == d] for d in DOMAINS}
    domains = [d for d in DOMAINS if by_domain[d]]
    t0 = time.perf_counter()
    out = [f"### Pool `{name}` ({path}) — simulated\n"]

    alone: dict[tuple[int, str], float] = {}
    rows = ["| worker | " + " | ".join(f"{d} (skill)" for d in domains) + " | mean |",
            "|---|" + "---|" * (len(domains) + 1)]
    for i, spec in enumerate(specs):
        opts = SimulatedOptions.model_validate(spec.options)
        cells = []
        for d in domains:
            alone[i, d], _ = await runner.many(single(i), by_domain[d])
            cells.append(f"{pct(alone[i, d])} ({pct(opts.skill_for(d, ''))})")
        rows.append(f"| {spec.id} | " + " | ".join(cells) + f" | {pct(mean(alone[i, d] for d in domains))} |")
    out += ["Each worker alone, on-topic instruction: measured accuracy % (configured skill %).\n", *rows, ""]

    # the environment knows every worker's skill: the oracle routes by it (not by a noisy measurement)
    skill = {(i, d): SimulatedOptions.model_validate(s.options).skill_for(d, "") for i, s in enumerate(specs) for d in domains}
    best = {d: max(range(len(specs)), key=lambda i, d=d: skill[i, d]) for d in domains}
    second = {d: max((i for i in range(len(specs)) if i != best[d]), key=lambda i, d=d: skill[i, d]) for d in domains}
    rows = ["| domain (best worker) | 1 attempt (1 call) | 3 attempts + aggregator (4 calls) | attempt + verify (2 calls) "
            "| attempt + 5 self-reviews (6 calls) | 5 attempts + vote (6 calls) |",
            "|---|---|---|---|---|---|"]
    strat: dict[str, list[float]] = {"one": [], "ens": [], "ver": [], "self5": [], "vote5": []}
    for d in domains:
        i = best[d]
        one, c1 = await runner.many(single(i), by_domain[d])
        ens, c4 = await runner.many(ensemble(i), by_domain[d])
        ver, c2 = await runner.many(verified(i), by_domain[d])
        self5, c6 = await runner.many(self_reviewed(i), by_domain[d])
        vote5, c6v = await runner.many(voted(i), by_domain[d])
        for key, value in (("one", one), ("ens", ens), ("ver", ver), ("self5", self5), ("vote5", vote5)):
            strat[key].append(value)
        rows.append(f"| {d} ({specs[i].id}) | {pct(one)} (${c1:.4f}) | {pct(ens)} (${c4:.4f}) | {pct(ver)} (${c2:.4f}) "
                    f"| {pct(self5)} (${c6:.4f}) | {pct(vote5)} (${c6v:.4f}) |")
    rows.append("| mean | " + " | ".join(pct(mean(strat[k])) for k in ("one", "ens", "ver", "self5", "vote5")) + " |")
    out += ["Strategies with each domain's best worker: accuracy % (mean simulated $ per question). "
            "Self-review: the worker checks and revises its own answer, each round reading the last (reflect); "
            "a worker's judgement of a problem is mostly fixed (`review_fresh`), so rounds 2-5 add little.\n", *rows, ""]

    rows = ["| domain (solver -> reviewer) | attempt (1 call) | + self-review (2 calls) | + review by the other worker (2 calls) "
            "| + 5 self-reviews (6 calls) |", "|---|---|---|---|---|"]
    cross: dict[str, list[float]] = {"one": [], "self1": [], "cross": [], "self5": []}
    for d in domains:
        i, j = second[d], best[d]  # the second-best worker answers; the best one reviews it
        one, _ = await runner.many(single(i), by_domain[d])
        self1, _ = await runner.many(verified(i), by_domain[d])
        crossed, _ = await runner.many(cross_reviewed(i, j), by_domain[d])
        self5, _ = await runner.many(self_reviewed(i), by_domain[d])
        for key, value in (("one", one), ("self1", self1), ("cross", crossed), ("self5", self5)):
            cross[key].append(value)
        rows.append(f"| {d} ({specs[i].id} -> {specs[j].id}) | {pct(one)} | {pct(self1)} | {pct(crossed)} | {pct(self5)} |")
    rows.append("| mean | " + " | ".join(pct(mean(cross[k])) for k in ("one", "self1", "cross", "self5")) + " |")
    out += ["Cross-review against self-review: each domain's second-best worker answers; it reviews itself, "
            "or the domain's best worker reviews it: accuracy %.\n", *rows, ""]

    rows = ["| instruction | " + " | ".join(domains) + " | mean |", "|---|" + "---|" * (len(domains) + 1)]
    for label, instruction in INSTRUCTIONS.items():
        accs = [(await runner.many(single(best[d], instruction), by_domain[d]))[0] for d in domains]
        rows.append(f"| {label} | " + " | ".join(pct(a) for a in accs) + f" | {pct(mean(accs))} |")
    out += ["Instructions, each domain's best worker alone: accuracy %.\n", *rows, ""]

    best_single = max(range(len(specs)), key=lambda i: mean(skill[i, d] for d in domains))
    oracle = mean(alone[best[d], d] for d in domains)
    out += [
        "Routing: the per-domain oracle sends each domain to its best worker "
        f"({', '.join(f'{d}: {specs[best[d]].id}' for d in domains)}).\n",
        "| method | mean accuracy % over domains |", "|---|---|",
        f"| best single worker ({specs[best_single].id}) | {pct(mean(alone[best_single, d] for d in domains))} |",
        f"| per-domain oracle router | {pct(oracle)} |",
        f"| oracle router + 3 attempts + aggregator | {pct(mean(strat['ens']))} |",
        f"| oracle router + attempt + verify | {pct(mean(strat['ver']))} |",
        f"| oracle router + attempt + 5 self-reviews | {pct(mean(strat['self5']))} |",
        f"| oracle router + 5 attempts + vote | {pct(mean(strat['vote5']))} |",
        "",
        f"_{runner.calls:,} simulated calls in {time.perf_counter() - t0:.0f} s._\n",
    ]
    return "\n".join(out)


async def main(args: argparse.Namespace) -> str:
    problems, origin = load_bank(args)
    counts = {d: sum(p.domain == d for p in problems) for d in DOMAINS}
    head = (f"**Simulated environment, not results.** `python benchmarks/simulated.py --per-domain {args.per_domain}`: "
            f"{len(problems):,} problems from {origin} ({', '.join(f'{d} {n}' for d, n in counts.items())}), "
            "every workflow through the real executor and graded by the real verifiers (code in the sandbox, "
            "verdicts cached per distinct program). The model is docs/simulated.md.\n")
    print(head)
    parts = [head]
    for name, path in POOLS.items():
        section = await bench_pool(name, path, problems)
        print(section)
        parts.append(section)
    return "\n".join(parts)


if __name__ == "__main__":
    parser = section_parser(__doc__, "simulated")
    parser.add_argument("--per-domain", type=int, default=1000, help="problems per domain (generated banks)")
    parser.add_argument("--problems", type=Path, help="a Problem JSONL file instead of a generated bank")
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args()
    write_if_asked(ns.write, "simulated", "The simulated pools as a learning environment (simulated)",
                   asyncio.run(main(ns)))
