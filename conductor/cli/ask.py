"""`conductor ask`: run one workflow over a pool for one question."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from conductor.cli.common import console, err_console, read_text_arg, user_errors
from conductor.simulation import SIMULATED_BANNER
from conductor.cli.render import trace_view
from conductor.config import REPO_ROOT, load_settings
from conductor.data.schema import DOMAINS, Problem
from conductor.effort import Effort, parse_effort
from conductor.executor import RunOptions, execute, plan_and_run
from conductor.planners import EFFORT_SHAPES, SHAPES, Shape, template_workflow, worker_indices
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.pool import Pool, PoolError, read_pool_file
from conductor.workers.registry import BuildContext
from conductor.workflow import ParseError, Workflow, parse


# The real small model's pool (docs/real-model.md): where a free question goes when the default,
# simulated pool does not know it.
REAL_POOL_FILE = REPO_ROOT / "deployments" / "pools" / "local-real.yaml"


def real_fallback(bank: list[Problem]) -> tuple[Path, Pool] | None:
    """The real pool, when its weights are installed (the simulated pool can only answer the
    problems it knows; a real model answers anything, if weakly)."""
    if not REAL_POOL_FILE.is_file():
        return None
    try:
        return REAL_POOL_FILE, Pool.load(REAL_POOL_FILE, BuildContext(problems=bank))
    except PoolError as exc:
        err_console.print(f"note: the real local model is not available ({exc})", highlight=False, soft_wrap=True)
        return None


def default_workflow(pool: Pool, shape: Shape | None = None) -> Workflow:
    """`shape` over the pool's workers; by default three independent attempts and an aggregator
    when the pool has three workers or more, else solve-and-verify, else one call. A pool whose
    workers are all one model (the real small model's roles) answers in one call: its attempts
    would share the model's mistakes, and a 135M model aggregating three answers wandered off the
    task (docs/real-model.md)."""
    workers = worker_indices(pool.specs)
    if not workers:
        raise PoolError("the pool has no worker other than the Conductor")
    if shape is None:
        one_model = len({(pool.specs[i].provider, pool.specs[i].model) for i in workers}) == 1
        shape = "single" if one_model else "fanout" if len(workers) >= 3 else "verify" if len(workers) == 2 else "single"
    return template_workflow(shape, workers)


def known_problems(simulated: bool) -> list[Problem]:
    """The problems a question is looked up in (for its kind and gold answer): the samples, plus
    the generated bank when the pool is simulated (its workers answer only problems they know)."""
    from conductor.data.bank import sample_problems  # here: `datasets` costs ~1.3 s of every command's start

    problems = sample_problems()
    if simulated:
        from conductor.data.synthetic import generate_bank

        problems = [*problems, *generate_bank()]
    return problems


def ask(
    question: str = typer.Argument(..., help="The question to solve."),
    pool_file: Path = typer.Option(None, "--pool", help="Pool YAML file (default: the profile's pool)."),
    plan: str = typer.Option(
        None, "--plan", help="Workflow text to run (a file, or - for stdin) in the Conductor's format."
    ),
    shape: str = typer.Option(
        None, "--shape", help=f"Template workflow to run without --plan: {', '.join(SHAPES)} (default: fanout,"
        " or one call when every worker is the same model)."),
    domain: str = typer.Option("freeform", help=f"Answer kind for a question not in the sample set: {', '.join(DOMAINS)}."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole trace as JSON."),
    conductor: str = typer.Option(
        None, "--conductor", help="A trained Conductor writes the workflow: a model directory or a models:/ URI "
        "(e.g. models:/conductor@challenger, resolved by the installed model registry)."
    ),
    few_shot: bool = typer.Option(
        False, "--few-shot/--no-few-shot", help="Put the example workflows in the Conductor's prompt (as it was trained)."
    ),
    exclude: list[str] = typer.Option(
        [], "--exclude", help="A worker id to opt out (repeat the option): the workflow is planned over the rest"
        " of the pool and it is never called."),
    effort: str = typer.Option(
        None, "--effort", help=f"How much work to spend: {', '.join(Effort)}. With --conductor, stated in its prompt"
        " (a Conductor trained with effort rows spends fewer calls at low, more at high); without it, the default"
        " workflow at that level: " + ", ".join(f"{level} {shape}" for level, shape in EFFORT_SHAPES.items())
        + ". Not with --plan or --shape, which fix the workflow."
    ),
) -> None:
    """Run a workflow (yours, or a default one) over a pool and show each step and the answer.

    Without --plan, the default is three independent attempts and an aggregator (one call on a
    pool of one model, such as the real one; --shape picks another, --effort a level). Simulated
    workers know the answers of the sample problems and of the generated bank the local profile
    trains and evaluates on. Without --pool, any other question goes to the real small model's
    pool (deployments/pools/local-real.yaml), which says so; with --pool, the pool you name answers.
    """
    settings = load_settings()
    if plan is not None and conductor is not None:
        raise typer.BadParameter("--plan and --conductor are exclusive")
    with user_errors(PoolError, ValueError):
        level = None if effort is None else parse_effort(effort)
        if level is not None and (plan is not None or shape is not None):
            raise ValueError("--effort picks how much work the Conductor spends; --plan and --shape fix the workflow")
        if domain not in DOMAINS:
            raise ValueError(f"--domain must be one of {', '.join(DOMAINS)}")
        if shape is not None and shape not in SHAPES:
            raise ValueError(f"--shape must be one of {', '.join(SHAPES)}")
        if conductor is not None:  # an unknown model is refused before any pool is chosen or noted
            from conductor.models.resolve import resolve_conductor
            from conductor.planners import ModelPlanner

            planner = ModelPlanner.from_directory(resolve_conductor(conductor))
        pool_path = pool_file or settings.pool_file
        loaded = read_pool_file(pool_path)  # the pool, read once: its workers and whether it is simulated
        bank = known_problems(loaded.simulated)
        known = next((p for p in bank if question.strip() in (p.question.strip(), p.task_text.strip())), None)
        task = Task.of(known) if known else Task.adhoc(question, domain)  # type: ignore[arg-type]
        real = None
        if known is None and pool_file is None and plan is None and loaded.simulated:
            real = real_fallback(bank)
        if real is not None:
            pool_path, pool = real
        else:
            pool = Pool.from_specs(loaded.workers, BuildContext(problems=bank))
        if exclude:
            pool = pool.without(exclude)
        if real is not None:  # after every check: a refused command prints its one error line only
            err_console.print(f"note: not a question the simulated pool knows; answered by the real local model"
                              f" (--pool {REAL_POOL_FILE.relative_to(REPO_ROOT)})", highlight=False, soft_wrap=True)
        if plan is not None:
            result = parse(read_text_arg(plan), pool.ids, max_steps=settings.execution.max_steps)
            if isinstance(result, ParseError):
                raise ValueError(f"plan is not a valid workflow ({result})")
            workflow = result
        elif conductor is None:
            workflow = default_workflow(pool, EFFORT_SHAPES[level] if level is not None else shape)  # type: ignore[arg-type]
        if real is None and pool.simulated:  # after every check too; on stderr, so --json's stdout is the JSON alone
            err_console.print(f"note: {SIMULATED_BANNER}", highlight=False, soft_wrap=True)

    async def run() -> Trace:
        async with pool:
            if conductor is not None:
                return await plan_and_run(task, pool, planner, RunOptions(config=settings.execution, examples=few_shot,
                                                                          effort=level))
            return await execute(workflow, task, pool, RunOptions(config=settings.execution))

    trace = asyncio.run(run())
    if as_json:
        print(trace.model_dump_json(indent=2))
    else:
        console.print(trace_view(trace))


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
