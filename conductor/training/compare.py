"""The trained Conductor against the baselines it must beat, on the same held-out rows: each
single worker (one step with an on-topic instruction: the strongest single-call baseline the
simulated pool allows), the per-domain oracle router (per domain, the worker best *on these
rows*: an upper bound no router can know in advance), the oracle's strategies (self-verify, 3 or 4
attempts + an aggregator, all on the oracle worker) and a random single worker. What
`conductor train` prints at its end and benchmarks/learning.py tabulates. On a simulated pool
the figures describe the simulation, never a real model."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from conductor.data.schema import Problem
from conductor.models.tiny import load_tokenizer
from conductor.simulation import simulated_note
from conductor.training.dataset import PoolSampling, PromptRow, build_rows, training_pool
from conductor.training.evaluate import EvalResult, evaluate_policy, score_texts
from conductor.training.problems import bank_splits, take_per_domain
from conductor.workers.pool import Pool
from conductor.workers.simulated.instructions import on_topic_instruction
from conductor.workflow import Workflow, render


# A step's wording for a problem and a role ("solve", "verify": a step reading one earlier
# answer, "combine": reading several): by default the simulated pool's own on-topic instruction.
Wording = Callable[[Problem, str], str]


def single_text(worker: int, problem: Problem, wording: Wording = on_topic_instruction) -> str:
    return render(Workflow(model_id=(worker,), subtasks=(wording(problem, "solve"),), access_list=((),)))


# The oracle's strategies: every step on the domain's oracle worker, each subtask the simulated
# pool's own `on_topic_instruction` for its role (solve, verify, combine), which is what a
# strategy-aware oracle (one that knows the wording the simulated workers reward) would write.
# Upper bounds, like the oracle router: what a perfect strategy choice reaches here.

def self_verify_text(worker: int, problem: Problem, wording: Wording = on_topic_instruction) -> str:
    """The worker solves, then the same worker checks its answer (reading it)."""
    return render(Workflow(model_id=(worker, worker),
                           subtasks=(wording(problem, "solve"), wording(problem, "verify")),
                           access_list=((), (0,))))


def attempts_text(worker: int, problem: Problem, attempts: int, wording: Wording = on_topic_instruction) -> str:
    """`attempts` independent solves by the worker, then the worker as aggregator reading them all."""
    if attempts < 2:
        raise ValueError(f"an aggregator needs at least 2 attempts (got {attempts})")
    return render(Workflow(model_id=(worker,) * (attempts + 1),
                           subtasks=(wording(problem, "solve"),) * attempts + (wording(problem, "combine"),),
                           access_list=((),) * attempts + (tuple(range(attempts)),)))


ORACLE_STRATEGIES = {
    "oracle + self-verify": self_verify_text,
    "oracle + 3 attempts + aggregator": lambda w, p: attempts_text(w, p, 3),
    "oracle + 4 attempts + aggregator": lambda w, p: attempts_text(w, p, 4),
}


def _correct(r: EvalResult, k: int) -> bool:
    v = r.traces[k].verdict
    return bool(v and v.correct)


@dataclass
class Baselines:
    """Per-worker results, the oracle's and a random single worker's, on `rows`."""

    rows: list[PromptRow]
    pool: Pool
    single: dict[str, EvalResult] = field(default_factory=dict)
    oracle: EvalResult | None = None
    random_single: EvalResult | None = None
    oracle_workers: dict[str, int] = field(default_factory=dict)  # domain -> the oracle's worker index

    @property
    def best_single(self) -> tuple[str, EvalResult]:
        name = max(self.single, key=lambda w: self.single[w].accuracy)
        return name, self.single[name]


def score(texts: Sequence[str], rows: Sequence[PromptRow], pool: Pool) -> EvalResult:
    return asyncio.run(score_texts(texts, rows, pool, examples=False))


def baselines(problems: Sequence[Problem], pool_file: str | Path, *, seed: int = 0, latency_scale: float = 1.0) -> Baselines:
    pool = training_pool(pool_file, problems, latency_scale=latency_scale)
    rows = build_rows(problems, pool, PoolSampling(), seed=seed)  # the full pool, in its order
    workers = [i for i, s in enumerate(pool.specs) if s.provider != "conductor"]
    out = Baselines(rows=rows, pool=pool)
    by_index: dict[int, EvalResult] = {}
    for i in workers:
        by_index[i] = score([single_text(i, r.problem) for r in rows], rows, pool)
        out.single[pool.specs[i].id] = by_index[i]
    best: dict[str, int] = {}
    for d in {r.problem.domain for r in rows}:
        idx = [k for k, r in enumerate(rows) if r.problem.domain == d]
        best[d] = max(by_index, key=lambda i: sum(_correct(by_index[i], k) for k in idx))
    out.oracle_workers = best
    out.oracle = score([single_text(best[r.problem.domain], r.problem) for r in rows], rows, pool)
    rng = random.Random(seed)
    out.random_single = score([single_text(rng.choice(workers), r.problem) for r in rows], rows, pool)
    return out


def oracle_strategy(base: Baselines, strategy: str) -> EvalResult:
    """One of `ORACLE_STRATEGIES` on the baselines' rows, each domain on its oracle worker."""
    if not base.oracle_workers:
        raise ValueError("no oracle workers: run baselines() first")
    text_of = ORACLE_STRATEGIES[strategy]
    return score([text_of(base.oracle_workers[r.problem.domain], r.problem) for r in base.rows], base.rows, base.pool)


def evaluate_model_dir(model_dir: str | Path, base: Baselines, *, max_new_tokens: int) -> EvalResult:
    """The model on the baselines' rows, asked as a deployed Conductor is: at the effort level its
    directory says it is told by default (a model trained with effort rows; `ModelPlanner`), else
    with none stated."""
    from conductor.effort import Effort
    from conductor.models.constrained import load_causal_lm
    from conductor.models.prompt_format import read_prompt_format

    fmt = read_prompt_format(model_dir)
    level = Effort(fmt.default_effort) if fmt is not None and fmt.default_effort else None
    rows = [replace(r, effort=level) for r in base.rows]
    model = load_causal_lm(model_dir)
    return evaluate_policy(model, load_tokenizer(model_dir), rows, base.pool, examples=False,
                           max_new_tokens=max_new_tokens)


def comparison_lines(trained: EvalResult, base: Baselines, *, label: str = "trained Conductor") -> list[str]:
    name, best = base.best_single
    assert base.oracle is not None
    verdict = "beats" if trained.accuracy > best.accuracy else "does NOT beat"
    return [
        f"held-out ({len(base.rows)} problems of the generated bank){simulated_note(base.pool.simulated)}:",
        f"  {label}: accuracy {trained.accuracy:.3f}, format {trained.format_rate:.2f}, "
        f"{trained.calls_per_question:.2f} calls and {trained.usd_text} per question",
        f"  best single worker ({name}): {best.accuracy:.3f}; per-domain oracle: {base.oracle.accuracy:.3f}",
        f"  the {label} {verdict} the best single worker ({trained.accuracy - best.accuracy:+.3f})",
    ]


# The warm start's library names a checking step's role "check"; the simulated pool's instruction "verify".
_LIBRARY_ROLE = {"solve": "solve", "verify": "check", "combine": "combine"}


def library_wording(base: Baselines) -> Wording:
    """The best wording the Conductor's phrase library offers (`strategies.phrases`: the only
    wordings the tiny model can write) for each domain and role, on the domain's oracle worker and
    these rows, as the oracle worker is picked: the solve wording by one attempt, then with it the
    check wording by a self-check and the combine wording by 4 attempts + an aggregator. What the
    fixed strategies reach in the Conductor's own vocabulary (an upper bound of that vocabulary,
    not a policy); `on_topic_instruction` is the simulated pool's own, beyond it."""
    from conductor.training.strategies import phrases

    chosen: dict[tuple[str, str], str] = {}

    def pick(domain: str, role: str, text_of: Callable[[int, Problem, Wording], str]) -> None:
        idx = [k for k, r in enumerate(base.rows) if r.problem.domain == domain]
        rows = [base.rows[k] for k in idx]
        worker = base.oracle_workers[domain]

        def accuracy(phrase: str) -> float:
            trial = {**chosen, (domain, role): phrase}
            wording: Wording = lambda p, r: trial[(p.domain, r)]  # noqa: E731
            return score([text_of(worker, r.problem, wording) for r in rows], rows, base.pool).accuracy

        chosen[(domain, role)] = max(phrases(domain, _LIBRARY_ROLE[role]), key=accuracy)

    for domain in sorted(base.oracle_workers):
        pick(domain, "solve", single_text)
        pick(domain, "verify", self_verify_text)
        pick(domain, "combine", lambda w, p, wd: attempts_text(w, p, 4, wd))
    return lambda problem, role: chosen[(problem.domain, role)]


def selection_problems(problems: Sequence[Problem]) -> list[Problem]:
    """As many training-split problems as `problems`, spread evenly over the domains
    (`take_per_domain`), none of them one of `problems`: where a comparator's wording
    (`library_wording`) is picked before it is scored on `problems`, so that it is not picked on
    the rows it is scored on (the largest of several noisy estimates is biased upward)."""
    held_out = {p.id for p in problems}
    return take_per_domain([p for p in bank_splits().train if p.id not in held_out], len(problems), seed=0)
