"""From the rows the warehouse returns (plain dicts) to the results table and the plots.
The figures themselves (accuracy, cost) are computed in SQL, once; this only arranges them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conductor.evaluation import plots
from conductor.evaluation.stats import mean_se, paired_bootstrap
from conductor.evaluation.table import RepeatScore, results_markdown, usd_per_question
from conductor.simulation import SIMULATED_BANNER, simulated_note

Rows = Sequence[Mapping[str, Any]]
PLOT_FILES = ("accuracy_vs_cost.png", "benchmark_bars.png", "worker_usage.png", "workflow_lengths.png")


@dataclass(frozen=True)
class EvaluationReport:
    """What a finished evaluation reports, as one value: the flow writes it, MLflow logs it
    (tasks/evaluation.py's `log_evaluation`) and the Prefect artifact shows it."""

    table_markdown: str  # the results table (results.md)
    costs_markdown: str  # the cost table (costs.md)
    plots: tuple[str, ...]  # the plot files written
    simulated: bool  # whether the pool was simulated (its banner heads every part)


def scores_of(rows: Rows) -> list[RepeatScore]:
    """The rows as scores. A row none of whose questions was judged (`correct` NULL: every one
    ended without a verdict) has an unknown accuracy: it is left out, never scored as 0."""
    return [RepeatScore(r["method"], r["benchmark"], int(r["repeat"]), int(r["questions"]), int(r["correct"]),
                        _known_usd(r)) for r in rows if r["correct"] is not None]


def _known_usd(row: Mapping[str, Any]) -> float | None:
    """A row's dollars, or None when they are unknown: `cost_known` false (some call's price is
    unknown; the sum counts only the known ones) or no figure at all."""
    if row.get("cost_known") is False or row["cost_usd"] is None:
        return None
    return float(row["cost_usd"])


def table_markdown(figures: Mapping[str, Rows], *, simulated: bool) -> str:
    scores = scores_of(figures["scores"])
    if not scores:
        return "No judged questions in this run (none finished, or none got a verdict).\n"
    return results_markdown(scores, simulated=simulated)


def paired_markdown(outcomes: Rows, baseline: str | None = None, seed: int = 0) -> str:
    """Each method against the first one, on the problems both answered: the difference in
    accuracy with a paired bootstrap 95 % CI (per problem: the share of repeats right)."""
    by: dict[str, dict[str, float]] = {}
    for r in outcomes:
        if r["correct"] is not None:  # no verdict: unknown, so the problem is not shared evidence
            by.setdefault(str(r["method"]), {})[str(r["problem_id"])] = float(r["correct"])
    methods = list(by)
    if len(methods) < 2:
        return ""
    base = baseline if baseline in by else methods[0]
    methods = [base] + [m for m in methods if m != base]
    lines = [f"Paired differences against {base} (accuracy points, bootstrap 95 % CI over problems):", "",
             "| method | difference | 95 % CI | problems |", "|---|---|---|---|"]
    for m in methods[1:]:
        shared = sorted(set(by[m]) & set(by[base]))
        if not shared:
            continue
        d = paired_bootstrap([by[m][p] for p in shared], [by[base][p] for p in shared], seed=seed)
        lines.append(f"| {m} | {100 * d.diff:+.2f} | [{100 * d.low:+.2f}, {100 * d.high:+.2f}] | {d.n} |")
    return "\n".join(lines) + "\n"


def method_points(scores: Sequence[RepeatScore]) -> list[plots.MethodPoint]:
    """One point per method: accuracy and $ per question over all its answers. A method whose
    cost is unknown has no place on the cost axis and is left out (not drawn at $0)."""
    by: dict[str, list[RepeatScore]] = {}
    for s in scores:
        by.setdefault(s.method, []).append(s)
    points = []
    for m, ss in by.items():
        usd = usd_per_question(ss)
        if usd is not None:
            points.append(plots.MethodPoint(m, sum(s.correct for s in ss) / max(1, sum(s.questions for s in ss)), usd))
    return points


def benchmark_bars(scores: Sequence[RepeatScore]) -> list[plots.BenchmarkBar]:
    by: dict[tuple[str, str], list[float]] = {}
    for s in scores:
        by.setdefault((s.method, s.benchmark), []).append(s.accuracy)
    out = []
    for (m, b), accs in by.items():
        ms = mean_se(accs)
        out.append(plots.BenchmarkBar(m, b, ms.mean, ms.se if not math.isnan(ms.se) else float("nan")))
    return out


def write_plots(figures: Mapping[str, Rows], out_dir: str | Path, *, simulated: bool) -> list[Path]:
    """The four evaluation plots under `out_dir` (a training run's curves: `plots.training_curves`);
    none for a run without finished questions (e.g. a training run)."""
    out = Path(out_dir)
    scores = scores_of(figures["scores"])
    if not scores:
        return []
    lengths: dict[int, int] = {}
    shapes: dict[str, int] = {}
    for r in figures["mix"]:
        lengths[int(r["n_steps"] or 0)] = lengths.get(int(r["n_steps"] or 0), 0) + int(r["questions"])
        shapes[str(r["shape"])] = shapes.get(str(r["shape"]), 0) + int(r["questions"])
    usage = {(str(r["worker_id"]), str(r["domain"])): int(r["calls"]) for r in figures["usage"]}
    # No worker calls at all (e.g. only Conductors that wrote no parseable workflow): no heatmap
    # (an empty grid is not an image).
    heatmap = [plots.worker_usage_heatmap(usage, out / PLOT_FILES[2], simulated=simulated)] if usage else []
    return [
        plots.accuracy_vs_cost(method_points(scores), out / PLOT_FILES[0], simulated=simulated),
        plots.benchmark_bars(benchmark_bars(scores), out / PLOT_FILES[1], simulated=simulated),
        *heatmap,
        plots.workflow_lengths(lengths, shapes, out / PLOT_FILES[3], simulated=simulated),
    ]


def write_table(figures: Mapping[str, Rows], out_dir: str | Path, *, simulated: bool,
                baseline: str | None = None) -> str:
    """results.md: the Table-7-shaped table, then each method's paired difference to `baseline`."""
    text = table_markdown(figures, simulated=simulated)
    paired = paired_markdown(figures.get("outcomes", []), baseline)
    if paired:
        text += "\n" + paired
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text(text, encoding="utf-8")
    return text


def conductor_generation_usd(by_worker: Rows) -> dict[str, float]:
    """method -> $ of the Conductor's own generation (calls of role `conductor`), part of the method's cost."""
    out: dict[str, float] = {}
    for r in by_worker:
        if r.get("role") == "conductor":
            out[str(r["method"])] = out.get(str(r["method"]), 0.0) + float(r["cost_usd"] or 0.0)
    return out


def costs_markdown(by_benchmark: Rows, by_worker: Rows, *, simulated: bool) -> str:
    """Per method: questions, calls, tokens, $, $ per question and per correct answer, and the
    Conductor's own generation (included in $, shown apart)."""
    per: dict[str, dict[str, float]] = {}
    unknown: set[str] = set()  # methods with a call of unknown price: their $ are a lower bound
    for r in by_benchmark:
        m = per.setdefault(str(r["method"]), {"questions": 0, "correct": 0, "calls": 0, "tokens": 0, "usd": 0.0})
        for key, col in (("questions", "questions"), ("correct", "correct"), ("calls", "calls"), ("tokens", "tokens")):
            m[key] += int(r[col] or 0)
        if _known_usd(r) is None:
            unknown.add(str(r["method"]))
        m["usd"] += float(r["cost_usd"] or 0.0)  # the known part (shown as "≥" when some is unknown)
    own = conductor_generation_usd(by_worker)
    title = "Cost per method" + simulated_note(simulated)  # simulated dollars, not a bill
    lines = [title, "", "| method | questions | calls | tokens | $ total | $/question | $/correct | Conductor's own $ |",
             "|---|---|---|---|---|---|---|---|"]
    for method, m in per.items():
        if method in unknown:  # the known part is a floor; the ratios are unknown
            total, per_q, per_correct = f"≥ {m['usd']:.4f} (some prices unknown)", "unknown", "unknown"
        else:
            total, per_q = f"{m['usd']:.4f}", f"{m['usd'] / max(1, m['questions']):.5f}"
            per_correct = f"{m['usd'] / m['correct']:.5f}" if m["correct"] else "–"
        lines.append(f"| {method} | {int(m['questions'])} | {int(m['calls'])} | {int(m['tokens'])} | {total} |"
                     f" {per_q} | {per_correct} | {own.get(method, 0.0):.4f} |")
    return "\n".join(lines) + "\n"


def artifact_markdown(report: EvaluationReport, out_dir: Path, mlflow_run: Mapping[str, str] | None) -> str:
    """The Prefect artifact: the results table, the cost table, links to the plots and the MLflow run."""
    head = f"**{SIMULATED_BANNER}**\n\n" if report.simulated else ""
    links = "\n".join(f"- [{Path(p).name}]({Path(p).resolve().as_uri()})" for p in report.plots)
    run = ""
    if mlflow_run:
        run = (f"\n\nMLflow run: `{mlflow_run['run_id']}` (experiment `{mlflow_run['experiment']}`,"
               f" tracking `{mlflow_run['tracking_uri']}`); plots also at [{mlflow_run['artifact_uri']}/plots]"
               f"({mlflow_run['artifact_uri']}/plots)")
    return f"{head}{report.table_markdown}\n{report.costs_markdown}\nPlots ({out_dir}):\n\n{links}{run}\n"


def outage_lines(rows: Rows) -> list[str]:
    """One line per outage (warehouse `outages` rows): which worker was down or failing, on how
    many steps, and who answered for it, e.g. `outage: worker w0 down for 24 steps (18 not
    called: breaker open), answered by w1 (template-fanout@pool)`."""
    lines = []
    for r in rows:
        by = f"answered by {r['answered_by']}" if r["answered_by"] else "no fallback answered (the steps failed)"
        lines.append(f"outage: worker {r['worker_id']} down for {int(r['steps'])} steps ({int(r['not_called'])} not"
                     f" called: breaker open), {by} ({r['method']})")
    return lines
