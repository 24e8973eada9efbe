"""`conductor solve`: run a problem set through Conductor plans and summarise."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from conductor.cli.common import console, user_errors
from conductor.config import load_settings
from conductor.simulation import simulated_note
from conductor.config import ExecutionConfig
from conductor.methods import Method
from conductor.planners import DEFAULT_SHAPE, SHAPES, TemplatePlanner
from conductor.executor import RunOptions
from conductor.solve import GroupSummary, solve_many, summarize
from conductor.trace import Trace, new_id
from conductor.types import Task
from conductor.workers.pool import PoolError
from conductor.workers.registry import BuildContext


def summary_table(summaries: list[GroupSummary], title: str = "summary") -> Table:
    table = Table(title=title, caption="calls, tokens, $ and seconds are per question")
    for col in ("set", "n", "acc", "reward", "parsed", "calls", "tokens", "$", "s"):
        table.add_column(col, justify="left" if col == "set" else "right", no_wrap=True)
    for i, s in enumerate(summaries):
        n = max(s.n, 1)
        table.add_row(
            s.group, str(s.n), f"{s.accuracy:.1%}", f"{s.mean_reward:.3f}", f"{s.parsed / n:.0%}",
            f"{s.calls / n:.2f}", f"{s.tokens / n:,.0f}",
            f"{s.cost_usd / n:.4f}" if s.cost_usd is not None else "unknown", f"{s.wall_s / n:.2f}",
            end_section=i == len(summaries) - 2,
        )
    return table


def solve(
    pool_file: Path = typer.Option(None, "--pool", help="Pool YAML file (default: the profile's pool)."),
    problems_file: Path = typer.Option(None, "--problems", help="Problems as JSON lines (default: the sample set)."),
    shape: str = typer.Option(DEFAULT_SHAPE, help=f"Workflow shape the stand-in planner writes: {', '.join(SHAPES)}."),
    limit: int = typer.Option(0, help="Solve only the first N problems (0: all)."),
    concurrency: int = typer.Option(None, help=ExecutionConfig.model_fields["questions_in_flight"].description),
    out: Path = typer.Option(None, help="Write every trace as JSON lines to this file."),
) -> None:
    """Solve a problem set: the Conductor plans, the pool executes, the verifier scores; print a summary.

    Until a trained Conductor is registered, plans come from a template planner (--shape).
    """
    from conductor.data.bank import ProblemFileError, load_problems, sample_problems  # `datasets`: ~1.3 s

    settings = load_settings()
    execution = settings.execution
    if concurrency is not None:
        execution = execution.model_copy(update={"questions_in_flight": concurrency})
    with user_errors(PoolError, ProblemFileError, ValueError):
        problems = load_problems(problems_file) if problems_file else sample_problems()
        if limit:
            problems = problems[:limit]
        method = Method(TemplatePlanner(shape), pool_file or settings.pool_file, execution)  # type: ignore[arg-type]
        pool = method.open_pool(BuildContext(problems=problems))
    run_id = new_id()
    with Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True,
    ) as progress:
        bar = progress.add_task("solving", total=len(problems))

        async def run_all() -> list[Trace]:
            async with pool:
                return await solve_many(
                    [Task.of(p) for p in problems], pool, method.planner,
                    RunOptions(config=method.execution, run_id=run_id),
                    on_done=lambda _t: progress.advance(bar), seed=settings.seed,
                )

        traces = asyncio.run(run_all())
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    title = f"{method.name}{simulated_note(method.simulated)}"
    console.print(summary_table(summarize(traces), title))
    console.print(f"run {run_id}: {len(traces)} problems over pool {', '.join(pool.ids)}")


def register(app: typer.Typer) -> None:
    app.command("solve")(solve)
