"""`conductor ask`: run one workflow over a pool for one question."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from conductor.cli.common import console, read_text_arg, user_errors
from conductor.cli.render import trace_view
from conductor.config import load_settings
from conductor.data.bank import sample_problems
from conductor.data.schema import DOMAINS, Problem
from conductor.executor import execute, plan_and_run
from conductor.planners import template_workflow, worker_indices
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.pool import Pool, PoolError, read_pool_file
from conductor.workers.registry import BuildContext
from conductor.workflow import ParseError, Workflow, parse


def default_workflow(pool: Pool) -> Workflow:
    """Three independent attempts and an aggregator when the pool has three workers or more;
    else solve-and-verify; else one call."""
    workers = worker_indices(pool.specs)
    if not workers:
        raise PoolError("the pool has no worker other than the Conductor")
    shape = "fanout" if len(workers) >= 3 else "verify" if len(workers) == 2 else "single"
    return template_workflow(shape, workers)


def known_problems(pool_file: Path) -> list[Problem]:
    """The problems a question is looked up in (for its kind and gold answer): the samples, plus
    the generated bank when the pool has simulated workers (they answer only problems they know)."""
    problems = sample_problems()
    if read_pool_file(pool_file).simulated:
        from conductor.data.synthetic import generate_bank

        problems = [*problems, *generate_bank()]
    return problems


def ask(
    question: str = typer.Argument(..., help="The question to solve."),
    pool_file: Path = typer.Option(None, "--pool", help="Pool YAML file (default: the profile's pool)."),
    plan: str = typer.Option(
        None, "--plan", help="Workflow text to run (a file, or - for stdin) in the Conductor's format."
    ),
    domain: str = typer.Option("freeform", help=f"Answer kind for a question not in the sample set: {', '.join(DOMAINS)}."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole trace as JSON."),
    conductor: str = typer.Option(
        None, "--conductor", help="A trained Conductor writes the workflow: a model directory or a models:/ URI "
        "(e.g. models:/conductor@challenger, resolved by the installed model registry)."
    ),
    few_shot: bool = typer.Option(
        False, "--few-shot/--no-few-shot", help="Put the example workflows in the Conductor's prompt (as it was trained)."
    ),
) -> None:
    """Run a workflow (yours, or a default one) over a pool and show each step and the answer.

    Without --plan, the default is three independent attempts and an aggregator. Simulated
    workers know the answers of the sample problems and of the generated bank the local profile
    trains and evaluates on; other questions get a placeholder answer.
    """
    settings = load_settings()
    if plan is not None and conductor is not None:
        raise typer.BadParameter("--plan and --conductor are exclusive")
    with user_errors(PoolError, ValueError):
        if domain not in DOMAINS:
            raise ValueError(f"--domain must be one of {', '.join(DOMAINS)}")
        pool_path = pool_file or settings.pool_file
        bank = known_problems(pool_path)
        known = next((p for p in bank if question.strip() in (p.question.strip(), p.task_text.strip())), None)
        task = Task.of(known) if known else Task.adhoc(question, domain)  # type: ignore[arg-type]
        pool = Pool.load(pool_path, BuildContext(problems=bank))
        if plan is not None:
            result = parse(read_text_arg(plan), pool.ids, max_steps=settings.execution.max_steps)
            if isinstance(result, ParseError):
                raise ValueError(f"plan is not a valid workflow ({result})")
            workflow = result
        elif conductor is None:
            workflow = default_workflow(pool)
        if conductor is not None:
            from conductor.models.resolve import resolve_conductor
            from conductor.planners import ModelPlanner

            planner = ModelPlanner.from_directory(resolve_conductor(conductor))

    async def run() -> Trace:
        async with pool:
            if conductor is not None:
                return await plan_and_run(task, pool, planner, config=settings.execution, examples=few_shot)
            return await execute(workflow, task, pool, config=settings.execution)

    trace = asyncio.run(run())
    if as_json:
        print(trace.model_dump_json(indent=2))
    else:
        console.print(trace_view(trace))


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
