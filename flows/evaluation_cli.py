"""`conductor eval`, `conductor costs` and `conductor plot`: the evaluation's commands. They live
in flows/ (not conductor/cli/) because they run a Prefect flow and read the warehouse, which the
library may not import; they plug in through the `conductor.cli` entry point group."""

from __future__ import annotations

import importlib
import json
import signal
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import typer

from conductor.cli.common import console, user_errors
from conductor.cli.options import field_help, field_option, fields_of
from conductor.config import Settings
from conductor.evaluation.config import EvalConfig
from conductor.evaluation.prices import DEFAULT_MAX_AGE_DAYS, stale_prices
from conductor.simulation import simulated_note

def _eval(name: str, *flags: str, **kwargs):  # noqa: ANN202 - typer's OptionInfo
    return field_option(EvalConfig, name, *flags, **kwargs)


def eval_(
    methods: list[str] = _eval("methods", "--method", "-m"),
    benchmarks: list[str] = _eval("benchmarks", "--benchmark", "-b"),
    repeats: int = _eval("repeats"),
    problems_file: Path = _eval("problems_file", "--problems"),
    pool_file: Path = _eval("pool_file", "--pool"),
    exclude: list[str] = _eval("exclude", "--exclude"),
    setting: str = _eval("setting"),
    limit_per_benchmark: int = _eval("limit_per_benchmark", "--limit"),
    profile: str = _eval("profile"),
    seed: int = _eval("seed"),
    concurrency: int = _eval("concurrency"),
    questions_in_flight: int = _eval("questions_in_flight"),
    out_dir: Path = _eval("out_dir", "--out"),
    db: Path = typer.Option(None, help="Warehouse file (default: $CONDUCTOR_HOME/warehouse.duckdb)."),
    provider_limit: int = _eval("provider_limit"),
    # the two below are typed differently on the command line (PROVIDER=N, INPUT,OUTPUT) than in
    # the config (a dict, Prices), so they are named apart from their fields
    provider_limit_pairs: list[str] = typer.Option([], "--provider-limits", help="PROVIDER=N (repeat): "
                                                   + field_help(EvalConfig, "provider_limits")),
    task_runner: str = _eval("task_runner"),
    dask_address: str = _eval("dask_address"),
    max_price_age_days: int = _eval("max_price_age_days"),
    conductor_usd_per_gpu_hour: float = _eval("conductor_usd_per_gpu_hour"),
    conductor_price_pair: str = typer.Option(None, "--conductor-prices", help="INPUT,OUTPUT USD per 1M tokens: "
                                             + field_help(EvalConfig, "conductor_prices")),
    log_to_mlflow: bool = _eval("log_to_mlflow", "--mlflow/--no-mlflow"),
    allow_simulated: bool = typer.Option(False, "--allow-simulated",
                                         help=Settings.model_fields["allow_simulated"].description),
) -> None:
    """Evaluate methods on benchmarks (repeats -> mean ± SE); prints a table shaped like the paper's Table 7.

    Runs as the Prefect flow `conductor-eval`; traces, costs and runs land in the warehouse, the
    table and plots under --out (default $CONDUCTOR_HOME/evaluations/<id>).
    """
    given = fields_of(EvalConfig, locals())  # the parameters named after EvalConfig's fields
    from pydantic import ValidationError

    from conductor.cli.common import quiet_library_bars
    from conductor.config import load_settings, refuse_accidental_simulation
    from conductor.evaluation.methods import MethodSpecError, check_specs
    from conductor.models.resolve import resolve_conductor  # models:/ through registry/'s resolver
    from conductor.workers.pool import PoolError, read_pool_file
    from flows.cli import ctrl_c_stops_solving, ensure_prefect_home, stopping_signal

    ensure_prefect_home()  # before Prefect is imported: it reads its startup timeout once
    with user_errors(MethodSpecError, PoolError, ValidationError, FileNotFoundError, ValueError):
        limits = {}
        for item in provider_limit_pairs:
            name, sep, n = item.partition("=")
            if not sep or not n.strip().isdigit():
                raise ValueError(f"--provider-limits {item!r}: expected PROVIDER=N")
            limits[name.strip()] = int(n)
        prices = None
        if conductor_price_pair:
            inp, sep, outp = conductor_price_pair.partition(",")
            if not sep:
                raise ValueError(f"--conductor-prices {conductor_price_pair!r}: expected INPUT,OUTPUT")
            prices = {"input": float(inp), "output": float(outp)}
        cfg = EvalConfig(**given, provider_limits=limits, conductor_prices=prices)
        if problems_file is not None and not problems_file.is_file():
            raise FileNotFoundError(f"--problems {problems_file}: no such file")
        settings = load_settings(profile=profile)
        pool = cfg.pool_file or settings.pool_file
        loaded = read_pool_file(pool)  # the pool every method offers (a sub-pool of it)
        refuse_accidental_simulation(profile, {"evaluation": (pool, loaded.simulated)},
                                     allow_simulated or settings.allow_simulated)
        check_specs(cfg.methods, pool, resolve_model=resolve_conductor, exclude=cfg.exclude)
    from prefect.exceptions import CancelledRun

    from conductor.stops import stops_not_swallowed
    from flows.prefect_server import tied_prefect_server

    # The first Ctrl-C cancels the solves in progress: their finished questions are written, the
    # runs marked cancelled, the flow run ends Cancelled, and its message is all that is printed.
    # The temporary Prefect server is tied to the command, in a session of its own (as for
    # `conductor run` and `conductor nightly`): a terminal's Ctrl-C no longer reaches it, so it
    # neither prints its shutdown's tracebacks nor leaves the flow unable to report its end.
    # A SIGTERM (a scheduler or `kill` stopping the command) is taken the same way, rc 143.
    received: list[int] = []
    def while_starting() -> None:  # the flow's imports (~4 s), while the server starts
        quiet_library_bars()  # the flow's own log lines and table, not a bar per curated file
        importlib.import_module("flows.evaluation")

    with user_errors(MethodSpecError, PoolError, ValueError), tied_prefect_server(while_starting), \
            stops_not_swallowed(), ctrl_c_stops_solving((signal.SIGINT, signal.SIGTERM), received) as cancellation:
        from flows.evaluation import evaluation_flow

        try:
            result = evaluation_flow(cfg, db_path=str(db) if db else None, resolve_model=resolve_conductor,
                                     cancellation=cancellation)
        except BaseException as exc:
            signum = stopping_signal(exc, received)
            if signum is None:
                raise  # an error of the evaluation's own: the error boundary's
            console.print(str(exc) if isinstance(exc, CancelledRun) else
                          f"interrupted by {signal.Signals(signum).name}: finished questions recorded, runs cancelled",
                          markup=False)
            raise typer.Exit(128 + signum) from None
    console.print(f"evaluation {result.evaluation_id}{simulated_note(result.simulated)}")
    # result.warnings (old prices) were logged once by the flow, on this console too
    console.print(result.table_markdown, soft_wrap=True, markup=False)
    console.print(result.costs_markdown, soft_wrap=True, markup=False)
    console.print(f"table and plots: {result.out_dir}\ncosts: conductor costs --run {result.evaluation_id}",
                  soft_wrap=True)
    if result.mlflow_run:
        console.print(f"MLflow run {result.mlflow_run['run_id']} (experiment {result.mlflow_run['experiment']},"
                      f" {result.mlflow_run['tracking_uri']})", soft_wrap=True, markup=False)


def _store(db: Path | None):  # noqa: ANN202 - TraceStore, imported lazily
    from conductor.config import Settings
    from warehouse.store import TraceStore

    return TraceStore(db or Settings().warehouse_path, read_only=False)


def costs(
    run: str = typer.Option(..., "--run", help="A run id, or an evaluation id (all its runs)."),
    max_age_days: int = typer.Option(DEFAULT_MAX_AGE_DAYS, help="Warn when a price is older than this."),
    db: Path = typer.Option(None, help="Warehouse file (default: $CONDUCTOR_HOME/warehouse.duckdb)."),
) -> None:
    """Cost of a run by worker and benchmark: $, calls, tokens, $ per question and per correct answer."""
    from warehouse import evaluation as wh
    from warehouse.output import print_table

    with user_errors(LookupError), _store(db) as store:
        wh.fill_costs(store, run)
        runs = wh.runs_of(store, run)
        by_worker, by_bench = wh.costs_by_worker(store, run), wh.costs_by_benchmark(store, run)
        total = wh.calls_cost_total(store, run)
    dates: dict[str, str | None] = {}
    for r in runs:
        params = json.loads(r["params"]) if isinstance(r["params"], str) else (r["params"] or {})
        dates |= params.get("prices_checked") or {}
    # on a simulated pool the dollars price simulated calls: not a bill
    console.print(f"run {run}: ${total:.4f} over {sum(r['calls'] for r in by_worker)} calls"
                  f"{simulated_note(any(r['simulated'] for r in runs))}", soft_wrap=True)
    print_table(console, pa.Table.from_pylist(by_worker))
    print_table(console, pa.Table.from_pylist(by_bench))
    from conductor.evaluation.report import conductor_generation_usd  # here: matplotlib costs ~0.7 s a start

    own = {m: usd for m, usd in conductor_generation_usd(by_worker).items() if usd}
    console.print("the Conductor's own generation (included above, role conductor): " + (", ".join(
        f"{m} ${usd:.4f}" for m, usd in own.items()) or "$0 (in-process planners)"), soft_wrap=True, markup=False)
    warning = stale_prices(dates, datetime.now(UTC).date(), max_age_days)
    if warning:
        console.print(warning, soft_wrap=True, markup=False)
    undated = sorted(w for w, d in dates.items() if d is None)
    if undated:
        console.print(f"prices from the pool file (undated): {', '.join(undated)}", soft_wrap=True)


def plot(
    run: str = typer.Argument(..., help="A run id, or an evaluation id."),
    out: Path = typer.Option(None, "--out", help="Folder for the PNGs (default: $CONDUCTOR_HOME/plots/<run>)."),
    db: Path = typer.Option(None, help="Warehouse file (default: $CONDUCTOR_HOME/warehouse.duckdb)."),
) -> None:
    """Write the plots of a run: accuracy vs $ with the Pareto frontier, per-benchmark bars, worker
    usage by domain, workflow lengths and shapes (and, for a training run, its curves and its
    strategies over training: the share of each workflow shape per domain at every step)."""
    from conductor.config import Settings
    from conductor.evaluation import plots
    from conductor.evaluation.report import write_plots
    from warehouse import evaluation as wh

    with user_errors(LookupError), _store(db) as store:
        runs = wh.runs_of(store, run)
        if not runs:
            raise LookupError(f"no run or evaluation {run!r}")
        figures = {"scores": wh.repeat_scores(store, run), "usage": wh.worker_usage(store, run),
                   "mix": wh.workflow_mix(store, run)}
        curve = wh.training_curve(store, run)
        shapes = wh.training_shapes(store, run)
    target = out or Settings().home / "plots" / run
    simulated = any(r["simulated"] for r in runs)
    written = write_plots(figures, target, simulated=simulated)
    if curve:
        written.append(plots.training_curves([c["step"] for c in curve],
                                             {"reward": [c["reward"] for c in curve],
                                              "format rate": [c["parse_rate"] for c in curve],
                                              "accuracy": [c["accuracy"] for c in curve]},
                                             target / "training_curves.png", simulated=simulated))
    if shapes:  # rollouts with their steps (v_training_shapes): the strategies over training
        shares = [plots.ShapeShare(r["step"], r["domain"] or "unknown domain", r["shape"], r["share"]) for r in shapes]
        written.append(plots.strategies_over_training(shares, target / "strategies.png", simulated=simulated, run=run))
    if not written:
        raise typer.Exit(_nothing(run))
    for path in written:
        console.print(str(path), soft_wrap=True)


def _nothing(run: str) -> int:
    console.print(f"error: run {run} has no judged questions (none finished, or none got a verdict) and no training metrics to plot")
    return 2


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_)
    app.command("costs")(costs)
    app.command("plot")(plot)
