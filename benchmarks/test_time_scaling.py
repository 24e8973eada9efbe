"""Test-time scaling the user controls, on a SIMULATED pool (numbers describe the simulation, never a
real model): accuracy against worker calls and $ per question on the bank's held-out problems
(509), for each effort level (conductor/effort.py) of
- the template stand-in Conductor (`TemplatePlanner`, which obeys the level its prompt states:
  low one call, medium a solve and a check by another worker, high three attempts + an aggregator),
- each trained model directory given (greedy, the level stated in its prompt, and with none),
beside the environment's fixed strategies at the same calls: the best single worker, and on each
domain's oracle worker (the worker best on these rows: an upper bound no planner knows in
advance) one attempt, a self-check, k attempts + an aggregator for k = 2..4, and one round of 8
attempts + an aggregator reading all 8 (max_steps raised to 9: the two-round ceiling of issue 32).
The fixed strategies come in three vocabularies: the phrase library's best wording per domain and
role (`compare.library_wording`: the wordings a trained Conductor can write), picked on as many
training-split problems (what the bars compare a level with) or on the held-out rows themselves
(optimistic: the largest of noisy estimates, scored on the rows that made them, by 0.6-2.6 points
on the local pool), and the simulated pool's own instruction (`on_topic_instruction`: beyond them).

    python benchmarks/test_time_scaling.py [MODEL_DIR ...] [--pool local|paper-sim] [--seeds 0 1 2]
        [--recursion MODEL_DIR ...] [--test-n 509] [--write docs/benchmarks.md] [--plot docs/img/test_time_scaling.png]

A seed is the dice of the simulated workers (each worker's `seed` option shifted by 7919 x seed, as
an evaluation's repeat does); each method and seed runs on a fresh pool, so every method meets
the same dice (a pool counts identical calls, and a repeat of one draws anew). Without a model it measures the stand-in and the fixed strategies (about 1.5
CPU-s a method and seed). `--recursion` adds rounds 1-3 of models trained with second rounds, at
each level they were trained on (round k reads round k - 1: benchmarks/recursion.py `measure`; on
the dice of seed 0 only, a model's rounds being written one question at a time).
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import resource
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benchmarks.report import write_section  # noqa: E402
from conductor.config import REPO_ROOT, ExecutionConfig  # noqa: E402
from conductor.data.schema import Problem  # noqa: E402
from conductor.effort import Effort  # noqa: E402
from conductor.planners import TemplatePlanner  # noqa: E402
from conductor.training.compare import (Wording, attempts_text, baselines, library_wording,  # noqa: E402
                                         selection_problems, self_verify_text, single_text)
from conductor.training.dataset import PromptRow, row_messages, training_pool  # noqa: E402
from conductor.training.evaluate import EvalResult, score_texts  # noqa: E402
from conductor.training.problems import bank_splits, take_per_domain  # noqa: E402
from conductor.workers.pool import Pool  # noqa: E402
from conductor.workers.simulated.instructions import on_topic_instruction  # noqa: E402

POOLS = {"local": REPO_ROOT / "deployments" / "pools" / "local.yaml",
         "paper-sim": REPO_ROOT / "deployments" / "pools" / "paper-sim.yaml"}
ROUND = ", round "  # a recursion model's point: "MODEL, round k"
LEVELS: tuple[Effort | None, ...] = (*Effort, None)  # None: no level stated (the prompt as before)
# the fixed strategies' vocabularies, as their names end: the phrase library's best wording picked on
# training rows (the bars' comparator), the same picked on the held-out rows it is then scored on
# (optimistic: the best of noisy estimates, read on the rows that made them), the pool's own wording
LIBRARY, LIBRARY_HERE, POOL_WORDING = ", library wording", ", library wording picked on these rows", ""


@dataclasses.dataclass
class Point:
    """One method at one effort level (or a fixed strategy): its figures per seed."""

    method: str
    level: str  # low / medium / high / none, or "fixed"
    accuracy: list[float] = dataclasses.field(default_factory=list)
    calls: list[float] = dataclasses.field(default_factory=list)
    usd: list[float | None] = dataclasses.field(default_factory=list)
    writes: str = ""  # a trained model's: what it wrote, per domain (`what_it_writes`)

    def add(self, r: EvalResult) -> None:
        self.accuracy.append(r.accuracy)
        self.calls.append(r.calls_per_question)
        self.usd.append(r.usd_per_question)

    @property
    def mean_usd(self) -> float | None:  # unknown in any seed: unknown (never $0)
        return None if any(u is None for u in self.usd) else statistics.mean(u for u in self.usd if u is not None)


def fresh_pool(pool_file: Path, problems: Sequence[Problem], seed: int) -> Pool:
    """The pool with seed `seed`'s dice and no call seen yet (the Conductor offered too, as in training)."""
    return training_pool(pool_file, problems, latency_scale=0.0, repeat=seed)


def at_level(rows: Sequence[PromptRow], level: Effort | None) -> list[PromptRow]:
    return [dataclasses.replace(r, effort=level) for r in rows]


def template_texts(rows: Sequence[PromptRow], pool: Pool) -> list[str]:
    """What the stand-in writes for each row's prompt (the level it states picks the shape)."""
    planner = TemplatePlanner()

    async def plan_all() -> list[str]:
        return [(await planner.plan(row_messages(r, pool, examples=False), r.offered(pool).specs)).text for r in rows]

    return asyncio.run(plan_all())


def model_texts(model_dir: Path, rows: Sequence[PromptRow], pool: Pool) -> list[str]:
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer
    from conductor.training.evaluate import generate_workflows

    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    return generate_workflows(load_causal_lm(model_dir), load_tokenizer(model_dir), prompts, max_new_tokens=128)


def what_it_writes(result: EvalResult, pool: Pool) -> str:
    """Per domain, from a scored run's traces (each workflow as the run parsed it, within its
    level's budget): the most written plan and workers with their share, and each role's most
    written wording with its share of that role's steps ("unparsed" counts what did not parse)."""
    import collections

    from conductor.training.strategies import plan_of

    by_domain: dict[str, list] = {}
    for trace in result.traces:
        by_domain.setdefault(trace.domain, []).append(trace.workflow)
    parts = []
    for domain, got in sorted(by_domain.items()):
        shapes = collections.Counter((p.name if (p := plan_of(wf)) else f"{len(wf)} steps") if wf else "unparsed"
                                     for wf in got)
        shape, n = shapes.most_common(1)[0]
        workers = collections.Counter(wf.model_id for wf in got if wf)
        words: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for wf in got:
            plan = plan_of(wf) if wf else None
            for role, sub in zip(plan.roles if plan else (), wf.subtasks if wf else ()):
                words[role][sub] += 1
        said = "; ".join(f"{role}: \"{' '.join(c.most_common(1)[0][0].split()[:4])} ...\" "
                         f"{c.most_common(1)[0][1] / sum(c.values()):.2f}" for role, c in words.items())
        top = workers.most_common(1)[0][0] if workers else ()
        names = ", ".join(pool.specs[i].id for i in dict.fromkeys(top))
        parts.append(f"{domain}: {shape} {n / len(got):.2f} on {names or '-'} ({said})")
    return " | ".join(parts)


def trained_levels(model_dir: Path) -> list[Effort | None]:
    """The levels a model was trained on (its prompt format's default says it had effort rows), else
    no level."""
    from conductor.models.prompt_format import read_prompt_format

    fmt = read_prompt_format(model_dir)
    return list(Effort) if fmt is not None and fmt.default_effort else [None]


def recursion_points(models: Sequence[Path], rows: Sequence[PromptRow], pool_file: Path, problems: Sequence[Problem],
                     rounds: int = 3) -> list[Point]:
    """Rounds 1..`rounds` of each model (trained with second rounds) at each level it was trained on,
    each later round reading the one before (benchmarks/recursion.py `measure`), on dice seed 0."""
    from benchmarks.recursion_rounds import measure as measure_rounds

    out = []
    for md in models:
        for level in trained_levels(md):
            m = measure_rounds(md, at_level(rows, level), fresh_pool(pool_file, problems, 0), rounds)
            for k in range(1, rounds + 1):
                p = Point(f"{md}{ROUND}{k}", str(level or "none"))
                p.accuracy, p.calls, p.usd = [m[f"acc{k}"]], [m[f"calls{k}"]], [m[f"usd{k}"]]
                out.append(p)
    return out


def measure(problems: list[Problem], pool_file: Path, models: Sequence[Path], seeds: Sequence[int],
            recursion: Sequence[Path] = ()) -> list[Point]:
    base = baselines(problems, pool_file, latency_scale=0.0)  # the oracle's worker per domain, on seed 0's dice
    rows, pool = base.rows, base.pool
    oracle = [base.oracle_workers[r.problem.domain] for r in rows]
    shapes: dict[str, Callable[[int, Problem, Wording], str]] = {
        "one attempt": single_text,
        "self-check": self_verify_text,
        **{f"{k} attempts + aggregator": (lambda k: lambda w, p, wd: attempts_text(w, p, k, wd))(k) for k in (2, 3, 4)},
    }
    # each shape in the Conductor's own vocabulary (the phrase library's best wording per domain
    # and role), picked as a person tuning prompts would, on training rows (what the bars compare
    # with), and picked on these held-out rows themselves; and in the simulated pool's own wording
    tuned = library_wording(baselines(selection_problems(problems), pool_file, latency_scale=0.0))
    texts: dict[tuple[str, str], tuple[list[str], list[PromptRow], ExecutionConfig | None]] = {}
    for vocabulary, wording in ((LIBRARY, tuned), (LIBRARY_HERE, library_wording(base)),
                                (POOL_WORDING, on_topic_instruction)):
        for name, text_of in shapes.items():
            texts[(f"oracle worker, {name}{vocabulary}", "fixed")] = (
                [text_of(w, r.problem, wording) for w, r in zip(oracle, rows)], rows, None)
    wide = ExecutionConfig(max_steps=9)
    texts[("oracle worker, 8 attempts + aggregator (max_steps 9)", "fixed")] = (
        [attempts_text(w, r.problem, 8) for w, r in zip(oracle, rows)], rows, wide)
    workers = [i for i, s in enumerate(pool.specs) if s.provider != "conductor"]
    for i in workers:
        texts[(f"single: {pool.specs[i].id}", "single")] = ([single_text(i, r.problem) for r in rows], rows, None)
    for level in LEVELS:
        leveled = at_level(rows, level)
        texts[("template stand-in", str(level or "none"))] = (template_texts(leveled, pool), leveled, None)
        for md in models:
            texts[(str(md), str(level or "none"))] = (model_texts(md, leveled, pool), leveled, None)
    points = {key: Point(*key) for key in texts}
    trained = {(str(md), str(level or "none")) for md in models for level in LEVELS}
    for seed in seeds:
        for key, (t, rs, execution) in texts.items():
            fresh = fresh_pool(pool_file, problems, seed)
            result = asyncio.run(score_texts(t, rs, fresh, examples=False, seed=seed, execution=execution))
            points[key].add(result)
            if key in trained and seed == seeds[0]:  # what it wrote: the same texts on every seed
                points[key].writes = what_it_writes(result, fresh)
    # the best single worker, by mean accuracy over the seeds: one row
    singles = [p for k, p in points.items() if k[1] == "single"]
    best = max(singles, key=lambda p: statistics.mean(p.accuracy))
    best.method, best.level = f"best single worker ({best.method.removeprefix('single: ')})", "fixed"
    return [p for p in points.values() if p.level != "single"] + recursion_points(recursion, rows, pool_file, problems)


def table(points: Sequence[Point], seeds: Sequence[int]) -> list[str]:
    lines = ["| method | effort | worker calls / question | $ / question | accuracy (mean) | per seed |",
             "|---|---|---|---|---|---|"]
    for p in points:
        usd = "unknown" if p.mean_usd is None else f"{p.mean_usd:.4f}"
        lines.append(f"| {p.method} | {p.level} | {statistics.mean(p.calls):.2f} | {usd} | "
                     f"{statistics.mean(p.accuracy):.3f} | {' / '.join(f'{a:.3f}' for a in p.accuracy)} |")
    return lines


def bar_lines(points: Sequence[Point]) -> list[str]:
    """Issue 32's effort bars, per trained model: accuracy and calls rise strictly from low to
    medium to high; each level within 1 point of (or above) the fixed strategy nearest its mean
    calls; low above the best single worker at <= 2 calls a question."""
    mean = statistics.mean
    fixed = [p for p in points if p.level == "fixed" and p.method.endswith(LIBRARY)]
    single = next(p for p in points if p.method.startswith("best single"))
    out = []
    for model in dict.fromkeys(p.method for p in points if p.level in ("low", "medium", "high")):
        if model == "template stand-in":
            continue
        at = {p.level: p for p in points if p.method == model}
        levels = [at["low"], at["medium"], at["high"]]
        rises = all(mean(a.accuracy) < mean(b.accuracy) and mean(a.calls) < mean(b.calls)
                    for a, b in zip(levels, levels[1:]))
        gaps = []
        for level in ("low", "medium", "high"):
            p = at[level]
            near = min(fixed, key=lambda f: abs(mean(f.calls) - mean(p.calls)))
            shape = near.method.removesuffix(LIBRARY)
            here, own = (next(f for f in points if f.method == shape + v) for v in (LIBRARY_HERE, POOL_WORDING))
            gaps.append(f"{level} {100 * (mean(p.accuracy) - mean(near.accuracy)):+.1f} against {near.method}"
                        f" ({100 * (mean(p.accuracy) - mean(here.accuracy)):+.1f} against it picked on these rows,"
                        f" {100 * (mean(p.accuracy) - mean(own.accuracy)):+.1f} against the pool's own wording)")
        low = at["low"]
        beats = mean(low.accuracy) > mean(single.accuracy) and mean(low.calls) <= 2
        out.append(f"- {model}: rises strictly from low to high: {'yes' if rises else 'no'}; points against the"
                   f" fixed strategy at the nearest calls: {'; '.join(gaps)} (bar: >= -1.0); low above the best single"
                   f" worker at <= 2 calls: {'yes' if beats else 'no'} ({100 * (mean(low.accuracy) - mean(single.accuracy)):+.1f}"
                   f" at {mean(low.calls):.2f} calls)")
    return out


def plot(points: Sequence[Point], path: Path, title: str) -> None:
    """Accuracy against calls and against $ (the fixed strategies, the best single worker, the
    stand-in and each effort model, low -> medium -> high), and where recursion models were
    measured a third panel: accuracy against calls over rounds 1 -> 2 -> 3, a line per model and
    level, beside the fixed strategies in library wording."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rounds = [p for p in points if ROUND in p.method]
    fig, axes = plt.subplots(1, 3 if rounds else 2, figsize=(18 if rounds else 12, 5.5))
    series: dict[str, list[Point]] = {}
    for p in points:
        if p.method.endswith(LIBRARY_HERE) or ROUND in p.method:  # LIBRARY_HERE: in the table, beside the tuned one
            continue
        name = ("best single worker" if p.method.startswith("best single") else
                "fixed strategies (oracle worker, library wording)" if p.method.endswith(LIBRARY) else
                "fixed strategies (oracle worker, the pool's wording)" if p.level == "fixed" else p.method)
        series.setdefault(name, []).append(p)
    for ax, x_of, label in ((axes[0], lambda p: statistics.mean(p.calls), "worker calls per question"),
                            (axes[1], lambda p: p.mean_usd, "$ per question")):
        for name, ps in series.items():
            ps = sorted((p for p in ps if x_of(p) is not None), key=x_of)
            line = [p for p in ps if p.level != "none"]  # fixed, or low -> medium -> high
            drawn = ax.plot([x_of(p) for p in line], [statistics.mean(p.accuracy) for p in line],
                            "s--" if name.startswith("fixed") else "D" if name.startswith("best") else "o-", label=name)
            for p in ps:
                x, y = x_of(p), statistics.mean(p.accuracy)
                if p.level == "none":  # no level stated: a marker of the series' colour, off its line
                    ax.plot([x], [y], "x", color=drawn[0].get_color())
                tag = {"fixed": p.method.replace("oracle worker, ", "").replace(LIBRARY, "")
                       .replace(" + aggregator", "+agg").replace(" (max_steps 9)", ""), "none": "no level"}.get(
                           p.level, p.level)
                ax.annotate(tag, (x, y), fontsize=7, xytext=(3, 3 if p.level != "none" else -9),
                            textcoords="offset points")
        ax.set_xlabel(label)
        ax.set_ylabel("accuracy (held-out)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="lower right")
    if rounds:
        ax = axes[2]
        fixed = sorted(series.get("fixed strategies (oracle worker, library wording)", []),
                       key=lambda p: statistics.mean(p.calls))
        ax.plot([statistics.mean(p.calls) for p in fixed], [statistics.mean(p.accuracy) for p in fixed], "s--",
                color="grey", label="fixed strategies (oracle worker, library wording)")
        by_run: dict[tuple[str, str], list[Point]] = {}
        for p in rounds:
            by_run.setdefault((p.method.split(ROUND)[0], p.level), []).append(p)
        for (model, level), ps in by_run.items():
            ps = sorted(ps, key=lambda p: int(p.method.split(ROUND)[1]))
            xs, ys = [statistics.mean(p.calls) for p in ps], [statistics.mean(p.accuracy) for p in ps]
            ax.plot(xs, ys, {"low": "o-", "medium": "^-", "high": "s-"}.get(level, "x-"),
                    label=f"{Path(model).parent.name}, {level}")
            ax.annotate("1", (xs[0], ys[0]), fontsize=7, xytext=(-8, 3), textcoords="offset points")
        ax.set_xlabel("worker calls per question, rounds 1 -> 2 -> 3")
        ax.set_ylabel("accuracy (held-out)")
        ax.set_title("recursion: each later round reads the one before", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right", ncol=2)
    fig.suptitle(title + " (SIMULATED pool)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path, help="trained model directories (each level stated in its prompt)")
    ap.add_argument("--recursion", type=Path, nargs="+", default=[], metavar="MODEL_DIR",
                    help="models trained with second rounds: rounds 1-3 at each level they were trained on (dice seed 0)")
    ap.add_argument("--pool", choices=sorted(POOLS), default="local")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="dice of the simulated calls")
    ap.add_argument("--test-n", type=int, default=None, help="held-out problems (default: the whole split, 509)")
    ap.add_argument("--write", type=Path, default=None, help="write the table into this markdown file's section")
    ap.add_argument("--plot", type=Path, default=None, help="write the accuracy-vs-calls and -$ plot here (PNG)")
    ap.add_argument("--note", default="", help="a sentence for the footnote: what the trained models are")
    ns = ap.parse_args()
    test = bank_splits().test
    if ns.test_n:
        test = take_per_domain(test, ns.test_n, seed=0)
    points = measure(test, POOLS[ns.pool], ns.models, ns.seeds, ns.recursion)
    cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) / 60
    lines = table(points, ns.seeds)
    models = (f"Trained models: {ns.note} Their rows: one per level, and none stated." if ns.models else
              "A trained model's rows (one per level, and none stated) come with MODEL_DIR.")
    bars = bar_lines(points)
    writes = [f"- {p.method}, {p.level}: {p.writes}" for p in points if p.writes]
    body = "\n".join(lines) + (
        f"\n\n{len(test)} held-out bank problems, SIMULATED {ns.pool} pool, seeds {' '.join(map(str, ns.seeds))} "
        f"(the simulated workers' dice; every method meets the same); {cpu:.1f} CPU-minutes in all. Worker calls "
        "leave out the Conductor's own; $ are the simulated pool's invented prices. The oracle worker is each "
        "domain's best on these rows (an upper bound); \"library wording\" is the Conductor's phrase library's best "
        "wording per domain and role (what a trained Conductor can write), picked on as many training-split problems "
        "(the bars' comparator) or on these rows (optimistic: the best of noisy estimates, scored on the rows that "
        "picked it); the others the simulated pool's own instruction (beyond that vocabulary). The template stand-in writes generic wordings over the "
        "pool's first workers (no routing), so it sits below them; it shows the level moving the calls (1 / 2 / 4) "
        f"and accuracy with them. {models} "
        f"`python benchmarks/test_time_scaling.py [MODEL_DIR ...] --pool {ns.pool}`."
        + ("\n\nWhat each model writes (greedy; per domain: its most written plan and its share, the workers, each "
           "role's most written wording and its share of that role's steps):\n" + "\n".join(writes) if writes else "")
        + ("\n\nThe effort bars (issue 32), per model:\n" + "\n".join(bars) if bars else ""))
    print(body, flush=True)
    title = f"Test-time scaling by effort, {ns.pool} pool, {len(test)} held-out"
    if ns.plot:
        plot(points, ns.plot, title)
        body += f"\n\n![accuracy against calls and $ per question, SIMULATED]({os.path.relpath(ns.plot, 'docs')})"
    if ns.write:
        write_section(ns.write, f"test-time-scaling-{ns.pool}",
                      f"Test-time scaling by effort, {ns.pool} pool (benchmarks/test_time_scaling.py, SIMULATED)", body)


if __name__ == "__main__":
    main()
