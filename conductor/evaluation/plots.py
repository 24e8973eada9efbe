"""The plots people look at, as PNGs (matplotlib, Agg backend). Each function takes plain data
(rows from the warehouse's views, already fetched) and a path; none runs SQL."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from conductor.shapes import STRATEGY_GROUPS, parse_share_metric, strategy_group  # noqa: E402
from conductor.simulation import simulated_note  # noqa: E402

SIZE_IN = (8.0, 5.0)
DPI = 100  # 800 x 500 px


@dataclass(frozen=True)
class MethodPoint:
    method: str
    accuracy: float
    usd_per_question: float


@dataclass(frozen=True)
class BenchmarkBar:
    method: str
    benchmark: str
    accuracy: float
    se: float  # NaN when there is one repeat


@dataclass(frozen=True)
class ShapeShare:
    """At training step `step`, the share of `domain`'s rollouts whose workflow had `shape`
    (a name in conductor.shapes.TRACE_SHAPES): a row of v_training_shapes, or a logged metric."""

    step: int
    domain: str
    shape: str
    share: float


def shares_from_metrics(rows: Sequence[Mapping[str, float]]) -> list[ShapeShare]:
    """The `shape_share/<domain>/<shape>` metrics of a run's logged steps (each row has `step`)."""
    out = []
    for row in rows:
        for name, value in row.items():
            parsed = parse_share_metric(name)
            if parsed is not None:
                out.append(ShapeShare(int(row["step"]), parsed[0], parsed[1], float(value)))
    return out


def _save(fig: plt.Figure, path: Path, title: str, simulated: bool) -> Path:
    fig.suptitle(title + simulated_note(simulated), fontsize=11)
    if fig.get_layout_engine() is None:  # a tall figure brings constrained layout, which keeps the title clear
        fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def short_names(methods: Sequence[str]) -> tuple[dict[str, str], str]:
    """Drop the `@pool` suffix every method shares (said once in the title instead)."""
    pools = {m.rpartition("@")[2] for m in methods if "@" in m}
    if len(pools) == 1 and all("@" in m for m in methods):
        pool = pools.pop()
        return {m: m.rpartition("@")[0] for m in methods}, f" on {pool}"
    return {m: m for m in methods}, ""


def pareto_front(points: Sequence[MethodPoint]) -> list[MethodPoint]:
    """Points no other point beats on both cost (lower) and accuracy (higher), by cost."""
    front: list[MethodPoint] = []
    for p in sorted(points, key=lambda p: (p.usd_per_question, -p.accuracy)):
        if not front or p.accuracy > front[-1].accuracy:
            front.append(p)
    return front


def accuracy_vs_cost(points: Sequence[MethodPoint], path: Path, *, simulated: bool = False) -> Path:
    names, pool = short_names([p.method for p in points])
    fig, ax = plt.subplots(figsize=SIZE_IN)
    for p in points:
        ax.scatter(p.usd_per_question, 100 * p.accuracy, s=40)
        ax.annotate(names[p.method], (p.usd_per_question, 100 * p.accuracy), textcoords="offset points",
                    xytext=(5, 4), fontsize=8)
    ax.margins(x=0.15, y=0.1)
    front = pareto_front(points)
    ax.step([p.usd_per_question for p in front], [100 * p.accuracy for p in front], where="post", color="black",
            linestyle="--", linewidth=1, label="Pareto frontier")
    if points and min(p.usd_per_question for p in points) > 0:
        ax.set_xscale("log")
    ax.set_xlabel("$ per question")
    ax.set_ylabel("accuracy %")
    ax.legend(loc="best")
    ax.grid(alpha=0.3)
    return _save(fig, path, "Accuracy vs cost" + pool, simulated)


def benchmark_bars(bars: Sequence[BenchmarkBar], path: Path, *, simulated: bool = False) -> Path:
    methods = list(dict.fromkeys(b.method for b in bars))
    names, pool = short_names(methods)
    benchmarks = sorted({b.benchmark for b in bars})
    by = {(b.method, b.benchmark): b for b in bars}
    fig, ax = plt.subplots(figsize=SIZE_IN)
    width = 0.8 / max(1, len(methods))
    for i, m in enumerate(methods):
        xs = [j + (i - (len(methods) - 1) / 2) * width for j in range(len(benchmarks))]
        ys = [100 * by[(m, b)].accuracy if (m, b) in by else 0.0 for b in benchmarks]
        es = [100 * by[(m, b)].se if (m, b) in by and not math.isnan(by[(m, b)].se) else 0.0 for b in benchmarks]
        ax.bar(xs, ys, width, yerr=es, capsize=2, label=names[m])
    ax.set_xticks(range(len(benchmarks)), benchmarks)
    ax.set_ylabel("accuracy % (± SE over repeats)")
    ax.set_ylim(0, 118)  # headroom for the legend above the bars
    ax.set_yticks(range(0, 101, 20))
    ax.legend(fontsize=7, ncol=3, loc="upper center")
    return _save(fig, path, "Accuracy per benchmark" + pool, simulated)


def worker_usage_heatmap(usage: dict[tuple[str, str], int], path: Path, *, simulated: bool = False) -> Path:
    """usage[(worker, domain)] = calls."""
    workers = sorted({w for w, _ in usage})
    domains = sorted({d for _, d in usage})
    grid = [[usage.get((w, d), 0) for d in domains] for w in workers]
    fig, ax = plt.subplots(figsize=SIZE_IN)
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(domains)), domains)
    ax.set_yticks(range(len(workers)), workers)
    top = max((max(r) for r in grid), default=0)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=8, color="white" if v < top / 2 else "black")
    fig.colorbar(image, ax=ax, label="calls")
    return _save(fig, path, "Worker usage by domain", simulated)


def workflow_lengths(lengths: dict[int, int], shapes: dict[str, int], path: Path, *, simulated: bool = False) -> Path:
    """lengths[n_steps] = questions; shapes[shape] = questions."""
    fig, (left, right) = plt.subplots(1, 2, figsize=SIZE_IN)
    ks = sorted(lengths)
    left.bar([str(k) for k in ks], [lengths[k] for k in ks], color="tab:blue")
    left.set_xlabel("steps per workflow")
    left.set_ylabel("questions")
    names = sorted(shapes, key=lambda s: -shapes[s])
    right.barh(names, [shapes[s] for s in names], color="tab:orange")
    right.invert_yaxis()
    right.set_xlabel("questions")
    right.set_title("shape mix", fontsize=10)
    return _save(fig, path, "Workflow length and shape", simulated)


def training_curves(steps: Sequence[int], series: dict[str, Sequence[float | None]], path: Path, *,
                    simulated: bool) -> Path:
    """series[name] = value per step (None where not logged): reward, format rate, accuracy, from
    the warehouse (`conductor plot RUN`)."""
    fig, ax = plt.subplots(figsize=SIZE_IN)
    for name, values in series.items():
        pts = [(s, v) for s, v in zip(steps, values) if v is not None]
        if pts:
            ax.plot([s for s, _ in pts], [v for _, v in pts], marker=".", label=name)
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
    ax.legend()
    ax.grid(alpha=0.3)
    return _save(fig, path, "Training curves", simulated)


# The trainer's per-step figures, in panel order (those a run logged).
HISTORY_PANELS = ("reward", "reward_std", "format_rate", "accuracy", "calls_per_rollout", "usd_per_rollout", "usd_total")


def training_history(history: Sequence[dict[str, float]], eval_history: Sequence[dict[str, float]], path: Path, *,
                     simulated: bool) -> Path:
    """The trainer's logged figures, one panel each, and held-out accuracy at each evaluation: the
    training run's `plots/curves.png` in MLflow."""
    names = [n for n in HISTORY_PANELS if any(n in row for row in history)]
    fig, axes = plt.subplots(len(names) + bool(eval_history), 1, figsize=(7, 2.2 * (len(names) + 1)), sharex=True,
                             squeeze=False, layout="constrained")
    for ax, name in zip(axes[:, 0], names):
        rows = [r for r in history if name in r]
        ax.plot([r["step"] for r in rows], [r[name] for r in rows])
        ax.set_ylabel(name, fontsize=8)
    if eval_history:
        ax = axes[-1, 0]
        ax.plot([r["step"] for r in eval_history], [r["eval_accuracy"] for r in eval_history], marker="o")
        ax.set_ylabel("held-out accuracy", fontsize=8)
    axes[-1, 0].set_xlabel("step")
    axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
    return _save(fig, path, "Conductor GRPO", simulated)


# One colour per strategy group, the same in every panel and every run.
STRATEGY_COLOURS = dict(zip(STRATEGY_GROUPS, ("tab:blue", "tab:green", "tab:orange", "tab:purple", "tab:cyan",
                                              "tab:gray", "tab:red")))


def strategies_over_training(shares: Sequence[ShapeShare], path: Path, *, simulated: bool, run: str = "") -> Path:
    """The paper's Figure 3: per domain, the stacked share of each workflow shape (grouped as
    `conductor.shapes.STRATEGY_GROUPS`) against the training step. A step where a domain had no
    rollout is left out of that domain's panel (unknown, not 0)."""
    if not shares:
        raise ValueError("no shape shares to plot (did the run log shape_share/<domain>/<shape>?)")
    domains = sorted({s.domain for s in shares})
    grid: dict[tuple[str, int], dict[str, float]] = {}
    for s in shares:
        by = grid.setdefault((s.domain, s.step), dict.fromkeys(STRATEGY_GROUPS, 0.0))
        by[strategy_group(s.shape)] += s.share
    cols = min(2, len(domains))
    rows = math.ceil(len(domains) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(SIZE_IN[0], max(SIZE_IN[1], 2.6 * rows)), sharex=True,
                             sharey=True, squeeze=False, layout="constrained")
    for ax, domain in zip(axes.flat, domains):
        steps = sorted(step for d, step in grid if d == domain)
        stacks = [[100 * grid[(domain, st)][g] for st in steps] for g in STRATEGY_GROUPS]
        if len(steps) > 1:
            ax.stackplot(steps, stacks, labels=STRATEGY_GROUPS, colors=[STRATEGY_COLOURS[g] for g in STRATEGY_GROUPS])
        else:  # one step: a stacked area of zero width would draw nothing, so one stacked bar
            bottom = 0.0
            for g, (v,) in zip(STRATEGY_GROUPS, stacks):
                ax.bar(steps, [v], bottom=bottom, width=0.8, color=STRATEGY_COLOURS[g], label=g)
                bottom += v
            ax.set_xticks(steps)
        ax.set_title(domain, fontsize=10)
        ax.set_ylim(0, 100)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in axes.flat[len(domains):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("% of rollouts")
    for ax in axes[-1, :]:
        ax.set_xlabel("training step")
    # The legend names the groups some rollout took, top of the stack first.
    present = {g for by in grid.values() for g, v in by.items() if v > 0}
    handles, labels = axes.flat[0].get_legend_handles_labels()
    keep = [(h, lab) for h, lab in zip(handles, labels) if lab in present][::-1]
    fig.legend([h for h, _ in keep], [lab for _, lab in keep], loc="outside right center", fontsize=8)
    return _save(fig, path, "Strategies over training" + (f": run {run}" if run else ""), simulated)
