"""`conductor` subcommands contributed by flows/: the pipeline's entry points."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import typer

from conductor.cli.common import add_user_errors, console
from conductor.cli.options import field_option
from conductor.config import Settings
from conductor.planners import DEFAULT_SHAPE, SHAPES
from conductor.profiles import get_profile
from conductor.simulation import simulated_note
from flows.model_cli import gate_option
from warehouse.output import print_table

if TYPE_CHECKING:  # the CLI imports Prefect (under tasks/) only for the commands that run a flow
    from tasks.solve import Cancellation


# What the terminal shows of v_run_summary (the run and method are said once, above the table).
SUMMARY_COLUMNS = ("benchmark", "questions", "accuracy", "mean_reward", "parsed", "calls_per_question",
                   "usd_per_question", "wall_s_per_question")


def run(
    profile: str = field_option(Settings, "profile"),
    pool_file: Path = field_option(Settings, "pool_file", "--pool", from_profile=True),
    shape: str = typer.Option(DEFAULT_SHAPE, help=f"Workflow shape of the stand-in planner: {', '.join(SHAPES)}."),
    limit: int = typer.Option(0, help="Solve at most N problems per evaluation set (0: all)."),
    db: Path = typer.Option(None, help="Warehouse file (default: $CONDUCTOR_HOME/warehouse.duckdb)."),
    allow_simulated: bool = field_option(Settings, "allow_simulated", "--allow-simulated"),
) -> None:
    """The main job: curate the data, solve every evaluation set, record everything in the warehouse.

    Runs as the Prefect flow `conductor-run` (a temporary local Prefect server when PREFECT_API_URL
    is unset); the summary also lands in the Prefect UI as the `run-summary` artifact.
    """
    ensure_prefect_home()
    from conductor.cli.common import user_errors
    from conductor.config import load_settings
    from conductor.methods import Method
    from conductor.planners import TemplatePlanner
    from conductor.workers.pool import PoolError

    from conductor.config import refuse_accidental_simulation

    settings = load_settings(profile=profile)
    with user_errors(PoolError, ValueError):
        method = Method(TemplatePlanner(shape), pool_file or settings.pool_file, settings.execution)  # type: ignore[arg-type]
        refuse_accidental_simulation(profile, {"run": (method.pool_file, method.simulated)},
                                     allow_simulated or settings.allow_simulated)
    from flows.prefect_server import PrefectServerError, tied_prefect_server

    # The server dies with this process; a terminal's Ctrl-C reaches only us.
    with user_errors(PrefectServerError), \
            tied_prefect_server(while_starting=lambda: importlib.import_module("flows.run")), \
            ctrl_c_stops_solving() as cancellation:
        from flows.run import run_flow  # imported while the server started

        try:
            summary = run_flow(method=method, profile=profile, limit_per_source=limit,
                               db_path=str(db) if db else None, seed=settings.seed, cancellation=cancellation)
        except (KeyboardInterrupt, asyncio.CancelledError):
            console.print("run cancelled: the questions it finished are recorded; the run is marked cancelled")
            raise typer.Exit(130) from None
    console.print(f"{method.name}: run {summary[0]['run_id'] if summary else '-'}"
                  + simulated_note(method.simulated))
    print_table(console, pa.Table.from_pylist([{k: v for k, v in row.items() if k in SUMMARY_COLUMNS}
                                                for row in summary]))
    where = db or settings.warehouse_path
    console.print(
        f"Traces are in the warehouse {where}. Try:\n"
        f"  conductor sql \"SELECT * FROM v_leaderboard\"\n"
        f"  conductor sql \"SELECT * FROM v_accuracy_by_worker_domain ORDER BY accuracy DESC\"",
        soft_wrap=True,
    )


@contextlib.contextmanager
def ctrl_c_stops_solving(signals: tuple[int, ...] = (signal.SIGINT,),
                         received: list[int] | None = None) -> Iterator[Cancellation]:
    """The command's cancellation, for its flow to hand to its solves: the first Ctrl-C cancels
    the solves in progress (they may run in other threads, where a KeyboardInterrupt would never
    reach them) and starts no new one, so the flow writes what finished, marks its runs
    cancelled and ends; with no solve running it interrupts at once, as does a second Ctrl-C (a
    Prefect API that is gone can keep a flow reporting its state for minutes: that is the way
    out; the process no longer ends itself after a grace, which lost trace batches still being
    written). `signals`: those that act as Ctrl-C (a SIGTERM too, for `conductor nightly`; while
    a flow runs, Prefect's own SIGTERM handler comes first); each one received is appended to
    `received`."""
    from tasks.solve import Cancellation

    cancellation = Cancellation()

    def handler(signum: int, frame: object) -> None:
        if received is not None:
            received.append(signum)
        for s in signals:
            signal.signal(s, signal.default_int_handler)
        if not cancellation.stop():
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield cancellation
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def stopping_signal(exc: BaseException, received: list[int]) -> int | None:
    """The signal that stopped the flow a command ran: the first one the command's handler
    received (`ctrl_c_stops_solving`), else the one the stop names (Prefect's TerminationSignal for
    a SIGTERM, Ctrl-C for any other stop, conductor/stops.py); None when `exc` is an error of the
    flow's own, which the error boundary reports."""
    from prefect.exceptions import CancelledRun, TerminationSignal

    from conductor.stops import stop_of

    stop = exc if isinstance(exc, CancelledRun) else stop_of(exc)
    if stop is None and not received:
        return None
    return received[0] if received else stop.signal if isinstance(stop, TerminationSignal) else signal.SIGINT


def ensure_prefect_home() -> None:
    """Ready the temporary Prefect server: its SQLite database cannot create its own folder, so
    a fresh PREFECT_HOME (ours lives under CONDUCTOR_HOME) must exist before it starts."""
    home = os.environ.get("PREFECT_HOME")
    if home:
        Path(home).expanduser().mkdir(parents=True, exist_ok=True)
    # Its first start migrates a new SQLite file, which on a small machine outlasts the default
    # 20 s startup timeout; a user's own setting wins.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")


def _night(name: str, *flags: str, **kwargs):  # noqa: ANN202 - typer's OptionInfo
    from flows.nightly_config import NightConfig

    return field_option(NightConfig, name, *flags, **kwargs)


def nightly(
    profile: str = _night("profile"),
    steps: int = _night("steps"),
    chunk_steps: int = _night("chunk_steps"),
    heldout_problems: int = _night("heldout_problems", "--heldout"),
    baselines: list[str] = _night("baselines", "--baseline", "-b"),
    pool_file: Path = _night("pool_file", "--pool"),
    challenger_efforts: list[str] = _night("challenger_efforts", "--challenger-effort",
                                           extra="Repeat the option, e.g. --challenger-effort low --challenger-effort high."),
    margin: float = gate_option("margin"),
    confidence: float = gate_option("confidence"),
    cost_bound: float = gate_option("cost_bound"),
    gate_method: str = gate_option("method", "--gate-method"),
    seed: int = _night("seed", from_profile=True),
    run_key: str = _night("run_key"),
    max_usd: float = _night("max_usd", "--max-usd"),
    accelerate_config: Path = _night("accelerate_config", "--accelerate-config"),
    allow_simulated: bool = _night("allow_simulated", "--allow-simulated"),
    settings_: list[str] = typer.Option(None, "--set", help="KEY=VALUE: a training config field over the"
                                        " profile's (repeat the option), e.g. --set vllm_mode=server."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the resolved settings (pools, trainer, budget)"
                                 " and run nothing."),
    db: Path = typer.Option(None, help="Warehouse file (default: $CONDUCTOR_HOME/warehouse.duckdb)."),
) -> None:
    """The nightly pipeline (`make run`): curate, train, evaluate challenger vs champion, costs, the
    promotion gate, a summary. Runs as the Prefect flow `conductor-nightly`."""
    from conductor.cli.common import parse_settings, training_fields, user_errors
    from conductor.config import SimulatedPoolRefused, load_settings
    from conductor.evaluation.methods import MethodSpecError, check_specs
    from conductor.workers.pool import PoolError
    from flows.nightly_config import NightConfig

    # Bad input is one line before anything starts (no server, no training).
    with user_errors(MethodSpecError, PoolError, ValueError, FileNotFoundError, SimulatedPoolRefused):
        if gate_method not in ("bootstrap", "mcnemar"):
            raise ValueError(f"--gate-method {gate_method!r}: bootstrap or mcnemar")
        for flag, path in (("--pool", pool_file), ("--accelerate-config", accelerate_config)):
            if path is not None and not path.is_file():
                raise FileNotFoundError(f"{flag} {path}: no such file")
        settings = load_settings(profile=profile)
        config = NightConfig.parse(
            profile=profile, steps=steps, chunk_steps=chunk_steps, heldout_problems=heldout_problems,
            baselines=baselines, pool_file=pool_file,
            gate={"margin": margin, "confidence": confidence, "cost_bound": cost_bound, "method": gate_method},
            seed=settings.seed if seed is None else seed, run_key=run_key, max_usd=max_usd,
            accelerate_config=accelerate_config, allow_simulated=allow_simulated, db_path=str(db) if db else None,
            # the training config's fields import TRL (~10 s): read only when `--set` names some
            training_overrides=parse_settings(settings_, training_fields()) if settings_ else {},
            challenger_efforts=[_effort_option(e) for e in challenger_efforts] if challenger_efforts else None)
        night = config.resolve(settings)
        if settings_:  # the profile's own values are checked by its tests; `--set`'s are checked here
            night.check_training_config()
        check_specs(night.baselines, night.pool_file)
        if not get_profile(profile).simulated_pool:
            _check_keys(night.pool_file)
    if dry_run:
        for line in night.lines():
            console.print(line, soft_wrap=True, markup=False, highlight=False)
        return
    ensure_prefect_home()  # not for a dry run, which changes nothing; before Prefect is imported
    from flows.prefect_server import PrefectServerError, tied_prefect_server
    from flows.terminal import quiet_terminal

    from prefect.exceptions import CancelledRun

    from conductor.stops import stops_not_swallowed

    # Ctrl-C or SIGTERM at any stage: every run the night opened ends `cancelled`, what finished
    # is kept (docs/nightly.md, "An interrupted night"), and one line says so; rc 128 + signal.
    received: list[int] = []
    with user_errors(MethodSpecError, PoolError, ValueError, FileNotFoundError, PrefectServerError), \
            tied_prefect_server(while_starting=lambda: importlib.import_module("flows.nightly")), \
            stops_not_swallowed(), ctrl_c_stops_solving((signal.SIGINT, signal.SIGTERM), received) as cancellation:
        from flows.nightly import nightly_flow  # imported while the server started

        # one line per stage and per GRPO chunk, not one per finished task; after the flow's
        # imports, which set up the Prefect console handler it filters
        quiet_terminal()
        try:
            summary = nightly_flow(config, cancellation=cancellation)
        except BaseException as exc:
            signum = stopping_signal(exc, received)
            if signum is None:
                raise  # an error of the night's own: the error boundary's
            said = f" ({exc})" if isinstance(exc, CancelledRun) and str(exc) != "interrupted" else ""
            console.print(f"nightly {night.run_key} cancelled by {signal.Signals(signum).name}{said}: finished stages"
                          f" and traces are kept, its runs marked cancelled; rerun with --run-key {night.run_key}"
                          " to go on", soft_wrap=True, markup=False)
            raise typer.Exit(128 + signum) from None
    print_nightly(summary)


def _effort_option(value: str) -> str:
    from conductor.effort import parse_effort

    try:
        return parse_effort(value)
    except ValueError as exc:
        raise ValueError(f"--challenger-effort: {exc}") from None


def _check_keys(pool_file: Path) -> None:
    """A production night on a pool whose API keys are not set stops here, in one line, before
    anything is paid for (`conductor pool check` says the same per worker)."""
    from conductor.workers.check import missing_keys

    missing = missing_keys(pool_file)
    if missing:
        raise ValueError(f"pool {pool_file}: no API key in {', '.join(missing)}; set them (or"
                         f" `conductor pool check {pool_file}` checks each worker) before a production night")


def print_nightly(summary) -> None:  # noqa: ANN001 - flows.nightly.NightlySummary
    from flows.night_results import dollars

    night, report, decision, costs = summary.night, summary.report, summary.decision, summary.costs
    simulated = summary.evaluated.simulated
    sim = simulated_note(simulated)
    console.print(f"\nNightly {night.run_key} ({night.profile}){sim}", soft_wrap=True)
    after = f"v{report.champion_version_after}" if report.champion_version_after else "none"
    console.print(f"model: conductor v{summary.trained.version}, alias challenger"
                  f"{' and champion' if decision.promoted else ''}; champion now {after}", soft_wrap=True)
    console.print(f"gate vs {report.compared_with}: {'PROMOTED' if decision.promoted else 'kept out'} - "
                  f"{decision.reason}", soft_wrap=True, markup=False)
    scores = report.scores
    print_table(console, pa.Table.from_pylist([
        {"method": k, "accuracy": round(v, 4),  # an unknown $ is shown NULL
         "usd_per_question": None if (usd := scores.usd_per_question[k]) is None else round(usd, 6),
         "questions": scores.questions,
         "margin": m.text() if (m := scores.challenger_margin.get(k)) else None}
        for k, v in scores.accuracy.items()]))
    beaten = [k for k, m in scores.challenger_margin.items() if m.low > 0]
    if scores.challenger_margin:
        confidence = decision.figures.get("confidence", 0.95)
        console.print(f"margin: the challenger's accuracy minus the method's [its {confidence:.0%} lower bound]; the"
                      f" challenger beats {len(beaten)} of {len(scores.challenger_margin)} with {confidence:.0%}"
                      " confidence (lower bound > 0)"
                      + (f"; not: {', '.join(k for k in scores.challenger_margin if k not in beaten)}"
                         if len(beaten) < len(scores.challenger_margin) else ""), soft_wrap=True, markup=False)
    console.print(f"spent: {dollars(costs.usd_spent)} (training {dollars(costs.usd_training)},"
                  f" evaluation {dollars(costs.usd_evaluation)}){' - simulated prices' if simulated else ''}",
                  soft_wrap=True)
    api = os.environ.get("PREFECT_API_URL", "")
    ui = (api.removesuffix("/api") if api else "http://127.0.0.1:4200") + f"/runs/flow-run/{night.flow_run_id}"
    how = "" if api else " (after `make ui`: it serves this run's $PREFECT_HOME database)"
    console.print(
        "where to look:\n"
        f"  Prefect UI: {ui}{how}\n"
        f"  MLflow UI:  {report.links.get('model_version', '')}  (`mlflow ui --backend-store-uri "
        f"{report.links.get('store', '')}`)\n"
        f"  results:    {summary.evaluated.out_dir}/results.md\n"
        f"  SQL:        conductor sql \"SELECT * FROM v_nightly ORDER BY started_at DESC\"\n"
        f"              conductor sql \"SELECT spec, avg(correct::INT) AS accuracy, avg(cost_usd) AS usd "
        f"FROM v_question_outcomes WHERE evaluation_id = '{summary.evaluated.evaluation_id}' GROUP BY spec\"",
        soft_wrap=True, markup=False)


def register(app: typer.Typer) -> None:
    """Add this layer's commands to the `conductor` CLI."""
    # A Prefect server that would not start, a deployment or UI that failed: their messages say why.
    add_user_errors("flows.prefect_server.PrefectServerError", "flows.deploy.DeployError", "flows.ui.UIError")
    app.command("run")(run)
    app.command("nightly")(nightly)
