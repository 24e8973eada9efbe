"""The evaluation flow: Methods x benchmarks x repeats, fanned out as Prefect tasks, every
trace recorded in the warehouse; then the costs table, the Table-7-shaped results (a markdown
artifact) and the plots, all from the warehouse's views.

An evaluation is one `runs` row (kind `evaluation`) and one run per method and repeat (kind
`eval`, params `evaluation_id` and `repeat`), so `conductor costs` and `conductor plot` take
either id. Problems: a `--problems` file in the Problem schema (the simulated pool builds its
bank from them), or the profile's curated evaluation sets."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.states import Cancelled, State
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote
from pydantic import BaseModel

from conductor.config import load_settings
from conductor.data.bank import load_problems
from conductor.data.curate import CurationConfig
from conductor.data.schema import Problem
from conductor.evaluation.config import EvalConfig
from conductor.evaluation.methods import ModelResolver, method_from_spec
from conductor.evaluation.prices import stale_prices
from conductor.simulation import simulated_note
from conductor.trace import new_id
from conductor.workers.registry import CONDUCTOR_PROVIDER
from flows.curation import curation_flow
from conductor.evaluation.report import (EvaluationReport, artifact_markdown, costs_markdown, outage_lines, write_plots,
                                         write_table)
from tasks.evaluation import (
    BenchmarkSolve, ensure_provider_limits, finish_evaluation, log_evaluation, open_mlflow_in_background,
    provider_limit_name, solve_benchmark, start_evaluation,
)
from tasks.records import run_writer
from tasks.solve import Cancellation
from tasks.traces import TraceWriter
from warehouse import lifecycle
from warehouse.lifecycle import RunLifecycle
from warehouse.records import DatasetManifest, Run

IN_PROCESS_PROVIDERS = frozenset({"simulated", "local"})  # no remote rate limit to share


class EvalResult(BaseModel):
    evaluation_id: str
    simulated: bool
    table_markdown: str
    out_dir: str
    figures: dict[str, list[dict[str, Any]]]
    costs_markdown: str = ""
    plots: list[str] = []
    mlflow_run: dict[str, str] | None = None
    provider_limits: dict[str, int] = {}
    warnings: list[str] = []
    outages: list[str] = []  # one line per worker down or failing and who answered for it


def _task_runner(cfg: EvalConfig):  # noqa: ANN202 - a Prefect TaskRunner
    """Threads of this process, or prefect-dask on a cluster (a small in-process LocalCluster
    unless `dask_address` names a running scheduler)."""
    if cfg.task_runner == "threads":
        return ThreadPoolTaskRunner(max_workers=cfg.concurrency)
    from prefect_dask import DaskTaskRunner

    if cfg.dask_address:
        return DaskTaskRunner(address=cfg.dask_address)
    # processes=False: the workers are threads of this process, so traces are written by this
    # process's one DuckDB writer, as with the thread runner.
    return DaskTaskRunner(cluster_class="distributed.LocalCluster",
                          cluster_kwargs={"processes": False, "n_workers": 1, "threads_per_worker": cfg.concurrency,
                                          "dashboard_address": None})


def _problems(cfg: EvalConfig, home: Path, db_path: str | None) -> list[Problem]:
    if cfg.problems_file is not None:
        return load_problems(cfg.problems_file)
    curated = home / "curated" / cfg.profile
    manifest = curation_flow(out=str(curated), config=CurationConfig(profile=cfg.profile), db_path=db_path)
    return [p for name in sorted(manifest.files) if name.startswith("eval/") for p in load_problems(curated / name)]


def by_benchmark(problems: list[Problem], wanted: list[str], limit: int) -> dict[str, list[Problem]]:
    groups: dict[str, list[Problem]] = {}
    for p in problems:
        groups.setdefault(p.source, []).append(p)
    missing = [b for b in wanted if b not in groups]
    if missing:
        raise ValueError(f"no problems for benchmark(s) {', '.join(missing)}; present: {', '.join(sorted(groups))}")
    keep = wanted or sorted(groups)
    return {b: groups[b][:limit] if limit else groups[b] for b in keep}


def evaluated_set(cfg: EvalConfig, benchmarks: dict[str, list[Problem]]) -> DatasetManifest:
    """The problems an evaluation runs on, in order, as a data set (`datasets`, `dataset_problems`;
    the evaluation's run row names it in `params.dataset_id`): named after the problems file, or
    the profile's curated evaluation sets."""
    name = f"file/{cfg.problems_file.stem}" if cfg.problems_file is not None else f"curated/{cfg.profile}/eval"
    return DatasetManifest.named(
        name, [p.id for ps in benchmarks.values() for p in ps], split="eval",
        source=next(iter(benchmarks)) if len(benchmarks) == 1 else "mixed",
        path=str(cfg.problems_file) if cfg.problems_file is not None else None, created_at=datetime.now(UTC),
        manifest={"benchmarks": {b: len(ps) for b, ps in benchmarks.items()},
                  "limit_per_benchmark": cfg.limit_per_benchmark})


def _cancelled(futures: list[Any], unwritten: RuntimeError | None) -> State:
    """The end of an evaluation stopped by Ctrl-C (`Cancellation.stop`), its runs already marked
    `cancelled` (their finished questions are in the warehouse; the views leave cancelled runs
    out): a Cancelled state for the flow run, whose message is the one line the CLI prints."""
    recorded = sum(f.result() for f in futures if f.state.is_completed())
    lost = f" ({unwritten})" if unwritten is not None else ""
    return Cancelled(message=f"interrupted: {recorded} questions recorded{lost}, runs cancelled")


@contextlib.contextmanager
def _stopped_when_left(cancellation: Cancellation) -> Iterator[None]:
    """Stops the solves when the block is left by an exception."""
    try:
        yield
    except BaseException:
        cancellation.stop()
        raise


@dataclasses.dataclass
class Evaluation:
    """An evaluation once its inputs are read: what it runs on, the Methods, and its row."""

    cfg: EvalConfig
    evaluation_id: str
    benchmarks: dict[str, list[Problem]]
    chosen: list[Problem]
    dataset: DatasetManifest
    methods: list[Any]  # conductor.methods.Method
    out_dir: Path
    simulated: bool
    parent: Run


def prepare(cfg: EvalConfig, db_path: str | None, resolve_model: ModelResolver | None) -> Evaluation:
    """Stage 1: the problems (curated first when no file is given) and every Method, built
    before any call is paid for, so that a bad spec fails first; the evaluation's own row."""
    settings = load_settings(profile=cfg.profile)
    home = settings.ensure_home()
    pool_file = cfg.pool_file or settings.pool_file
    benchmarks = by_benchmark(_problems(cfg, home, db_path), cfg.benchmarks, cfg.limit_per_benchmark)
    chosen = [p for ps in benchmarks.values() for p in ps]
    dataset = evaluated_set(cfg, benchmarks)
    # `cfg.questions_in_flight` for every method but a `conductor:` one, which keeps the profile's:
    # a local Conductor writes one workflow at a time, and its planner timeout counts the wait.
    execution = settings.execution.model_copy(update={"questions_in_flight": cfg.questions_in_flight})
    methods = [method_from_spec(s, pool_file, setting=cfg.setting, problems=chosen,
                                execution=settings.execution if s.strip().startswith("conductor:") else execution,
                                resolve_model=resolve_model, seed=cfg.seed,
                                conductor_usd_per_gpu_hour=cfg.conductor_usd_per_gpu_hour,
                                conductor_prices=cfg.conductor_prices, exclude=cfg.exclude) for s in cfg.methods]
    evaluation_id = new_id()
    simulated = any(m.simulated for m in methods)
    parent = lifecycle.run_here(evaluation_id, "evaluation", method=", ".join(cfg.methods), simulated=simulated,
                                params=cfg.model_dump(mode="json") | {"benchmarks": sorted(benchmarks),
                                                                      "dataset_id": dataset.dataset_id})
    return Evaluation(cfg, evaluation_id, benchmarks, chosen, dataset, methods,
                      Path(cfg.out_dir or home / "evaluations" / evaluation_id), simulated, parent)


def provider_slots(ev: Evaluation) -> tuple[dict[str, list[str]], dict[str, int]]:
    """Stage 2: each method's rate-limited providers, and the global concurrency limits held for
    them on the Prefect server (shared by every flow there). In-process providers (the simulated
    pool, local models) get one only when named in `provider_limits`: a process killed with -9
    keeps its slots until its lease expires, which only a server running Prefect's repossessor
    service ever ends (not an ephemeral or test server), and a killed nightly must not stall the
    next one over a limit that protects nothing."""
    cfg = ev.cfg
    providers = {m.name: sorted({p for p in m.pool.providers if p != CONDUCTOR_PROVIDER
                                 and (p not in IN_PROCESS_PROVIDERS or p in cfg.provider_limits)})
                 for m in ev.methods}
    limited = sorted({p for ps in providers.values() for p in ps})
    return providers, ensure_provider_limits(limited, cfg.provider_limit, cfg.provider_limits) if limited else {}


def price_warnings(ev: Evaluation) -> list[str]:
    """Stage 3: prices older than the limit, one warning for the whole evaluation."""
    dates: dict[str, str | None] = {}
    for m in ev.methods:
        dates |= m.pool.price_dates
    return [w for w in [stale_prices(dates, datetime.now(UTC).date(), ev.cfg.max_price_age_days)] if w]


def repeat_runs(ev: Evaluation) -> list[tuple[Any, Any, int, Run]]:
    """Stage 4: one `eval` run per method and repeat: (method, its repeat, repeat index, row)."""
    cfg, plans = ev.cfg, []
    for spec, method in zip(cfg.methods, ev.methods):
        for r in range(cfg.repeats):
            m = method if r == 0 else dataclasses.replace(method, repeat=r)
            run = lifecycle.run_here(new_id(), "eval", method=method.name, simulated=method.simulated,
                                     params={"evaluation_id": ev.evaluation_id, "repeat": r, "spec": spec,
                                             "setting": cfg.setting, "pool_file": str(m.pool_file),
                                             "execution": m.execution.model_dump(),
                                             "prices_checked": m.pool.price_dates})
            plans.append((method, m, r, run))
    return plans


def wait_interruptibly(futures: list[Any], slice_s: float = 0.5) -> None:
    """Wait for every task future, in slices. A wait with no timeout is woken by a signal only when
    the kernel hands the signal to this thread; handed to a worker thread, a Ctrl-C waited for
    every question to be answered (seen once in CI). Between slices Python runs its signal
    handlers, so a KeyboardInterrupt is raised here within a slice, whichever thread got it."""
    for f in futures:
        while not f.wrapped_future.done():
            f.wait(timeout=slice_s)
        f.wait()  # done: returns at once, and the future keeps its final state (else read from the API)


@dataclasses.dataclass
class Solved:
    """What the solving stage leaves: its task futures, those that failed, and a write error."""

    futures: list[Any]
    failed: list[Any]
    unwritten: RuntimeError | None


def solve_all(ev: Evaluation, plans: list[tuple[Any, Any, int, Run]], providers: dict[str, list[str]],
              db_path: str | None, cancellation: Cancellation) -> Solved:
    """Stage 5: every method x repeat (x benchmark with `task_per_benchmark`) as a task on the
    task runner, every trace written; returns once every handed-off batch is written."""
    cfg = ev.cfg
    futures = []
    # Threads of this process: a task returns once its last batch is handed to the flow's trace
    # writer, and the next starts solving while it is written (~0.2 s a task); the flow waits for
    # every write below, before it reads the warehouse. On Dask each task writes its own batches.
    in_process = cfg.task_runner == "threads"
    # Prefect walks every parameter looking for futures to wait on (~0.3 s over a flow of 7 tasks
    # x 200 problems); these never hold any, and `quote` tells it so. Only in this process: Dask
    # would ship the annotation as a plain tuple.
    unwalked = quote if in_process else (lambda x: x)
    # Left in any other way (a KeyboardInterrupt with no command's handler, Prefect's
    # TerminationSignal for a SIGTERM), the solves are stopped, so that the runner does not
    # wait for them to answer every question.
    with TraceWriter() as writer, _task_runner(cfg) as runner, _stopped_when_left(cancellation):
        for method, m, r, run in plans:
            groups = ev.benchmarks if cfg.task_per_benchmark else {"all": ev.chosen}
            for name, ps in groups.items():
                job = BenchmarkSolve(
                    run_id=run.run_id, benchmark=name, method_name=method.name, repeat=r, seed=cfg.seed * 1000 + r,
                    db_path=db_path, limits=tuple(provider_limit_name(p) for p in providers[method.name])
                    if cfg.use_provider_limits else ())
                futures.append(runner.submit(solve_benchmark, parameters=dict(
                    problems=unwalked(ps), method=unwalked(m), job=job, writer=writer if in_process else None,
                    cancellation=cancellation)))
        wait_interruptibly(futures)
        failed = [f for f in futures if f.state.is_failed()]
        unwritten: RuntimeError | None = None
        try:
            writer.drain()
        except RuntimeError as exc:
            unwritten = exc
            get_run_logger().error("%s: %s", exc, exc.__cause__)
    return Solved(futures, failed, unwritten)


def report(ev: Evaluation, db_path: str | None, opening: Any | None
           ) -> tuple[dict[str, Any], EvaluationReport, dict[str, str] | None, list[str]]:
    """Stage 6, once the runs ended `finished`: the costs table and the figures (one task, one DuckDB open); the
    table, plots and costs under the output dir; the MLflow run (`opening`: MLflow's import,
    started before the solves); the flow's markdown artifact."""
    cfg, logger = ev.cfg, get_run_logger()
    figures = finish_evaluation(ev.evaluation_id, db_path)
    outages = outage_lines(figures["outages"])
    for line in outages:
        logger.warning(line)
    table = write_table(figures, ev.out_dir, simulated=ev.simulated, baseline=ev.methods[0].name)
    plots = write_plots(figures, ev.out_dir, simulated=ev.simulated)
    costs = costs_markdown(figures["by_benchmark"], figures["by_worker"], simulated=ev.simulated)
    (ev.out_dir / "costs.md").write_text(costs, encoding="utf-8")
    result = EvaluationReport(table, costs, tuple(str(p) for p in plots), ev.simulated)
    mlflow_run = None
    if opening is not None:
        opening.join()
        mlflow_run = log_evaluation(ev.evaluation_id, cfg.model_dump(mode="json") | {"benchmarks": sorted(ev.benchmarks)},
                                    figures["scores"], result)
    create_markdown_artifact(key="evaluation-results",
                             markdown=artifact_markdown(result, ev.out_dir, mlflow_run)
                             + "".join(f"\n- {line}" for line in outages),
                             description=f"evaluation {ev.evaluation_id}{simulated_note(ev.simulated)}")
    return figures, result, mlflow_run, outages


# Returns an EvalResult, or a Cancelled state when Ctrl-C stopped it (Prefect makes that the flow
# run's final state, and calling the flow raises prefect.exceptions.CancelledRun with its message).
@flow(name="conductor-eval", log_prints=True)
def evaluation_flow(cfg: EvalConfig, db_path: str | None = None, resolve_model: ModelResolver | None = None,
                    cancellation: Cancellation | None = None) -> EvalResult | State:
    """`cancellation`: the command's (its Ctrl-C handler stops the solves); by default one of the
    flow's own, which nothing stops. The stages are the functions above, in order."""
    cancellation = cancellation if cancellation is not None else Cancellation()
    ev = prepare(cfg, db_path, resolve_model)
    providers, limits = provider_slots(ev)
    warnings = price_warnings(ev)
    for w in warnings:
        get_run_logger().warning(w)
    plans = repeat_runs(ev)
    # Dead runs abandoned, the problems and the data set in one task and one DuckDB open; then
    # every run row (parent first) `running`, before the first call is paid for. Until the solves
    # are over, a stop (a KeyboardInterrupt, Prefect's TerminationSignal for a SIGTERM) or an
    # error that leaves the flow ends every row on its way out (RunLifecycle): none is left
    # `running`.
    start_evaluation(quote(ev.chosen), db_path, dataset=ev.dataset)
    with RunLifecycle([ev.parent, *(run for *_, run in plans)], run_writer(db_path)) as life:
        # MLflow's import and store check overlap the calls instead of following them.
        opening = open_mlflow_in_background() if cfg.log_to_mlflow else None
        solved = solve_all(ev, plans, providers, db_path, cancellation)
        if cancellation.stopped:  # Ctrl-C: every handed-off batch is written (drained above)
            life.end("cancelled")
            return _cancelled(solved.futures, solved.unwritten)
        if solved.unwritten is not None and not solved.failed:
            raise solved.unwritten
        if solved.failed:
            raise RuntimeError(f"{len(solved.failed)} of {len(solved.futures)} benchmark x method tasks failed;"
                               " see the Prefect logs")
    figures, result, mlflow_run, outages = report(ev, db_path, opening)
    get_run_logger().info("evaluation %s: %d methods x %d benchmarks x %d repeats", ev.evaluation_id,
                          len(ev.methods), len(ev.benchmarks), cfg.repeats)
    return EvalResult(evaluation_id=ev.evaluation_id, simulated=ev.simulated, table_markdown=result.table_markdown,
                      out_dir=str(ev.out_dir), figures=figures, costs_markdown=result.costs_markdown,
                      plots=list(result.plots), mlflow_run=mlflow_run, provider_limits=limits, warnings=warnings,
                      outages=outages)
