"""`conductor train`: GRPO-train the Conductor over the pool, with a progress bar."""

from __future__ import annotations

from pathlib import Path

import typer

from conductor.cli.common import console, quiet_library_bars
from conductor.cli.options import field_option
from conductor.config import Settings
from conductor.simulation import simulated_note
from conductor.training.result import TrainResult


# The options from Settings take their default and help from it. Those that override a training
# config field keep their own: ConductorTrainingConfig is TRL's GRPOConfig, and importing it to
# build the options made every `conductor` command start ~4 s later (6.5 s against 2.4 s for
# `conductor --help`); `--set` takes any of its fields, checked against it when the command runs.
def train(
    profile: str = field_option(Settings, "profile"),
    output_dir: Path = typer.Option(None, "--out", help="Run directory (default: $CONDUCTOR_HOME/training/<profile>)."),
    model: str = typer.Option(None, help="Model dir or hub id to start from (default: the profile's)."),
    pool_file: Path = field_option(Settings, "pool_file", "--pool", from_profile=True),
    max_steps: int = typer.Option(None, help="GRPO steps (default: the profile's)."),
    seed: int = field_option(Settings, "seed", extra="Here the training run's: its model's and its prompt rows'."),
    estimate_only: bool = typer.Option(False, "--estimate", help="Print projected calls, tokens, $ and wall time; train nothing."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the last checkpoint in the run directory."),
    max_usd: float = typer.Option(None, "--max-usd", help="Stop cleanly (with a checkpoint) past this worker spend."),
    track: bool = typer.Option(True, help="Log the run to MLflow and register the model (when registry/ is installed)."),
    warehouse: bool = typer.Option(True, help="Send every rollout to the warehouse (when its sink is installed)."),
    compare: int = typer.Option(96, help="Held-out bank problems to compare the model with each single worker on (0: skip)."),
    allow_simulated: bool = field_option(Settings, "allow_simulated", "--allow-simulated"),
    config_file: Path = typer.Option(None, "--config", help="A chunk as JSON (profile, output_dir, overrides,"
                                     " until_step: what a nightly chunk under accelerate writes); the options above"
                                     " are then ignored."),
    result_file: Path = typer.Option(None, "--result", help="Write the run's result (TrainResult) here as JSON"
                                     " (rank 0), and print one line per step instead of a progress bar."),
    settings_: list[str] = typer.Option(None, "--set", help="KEY=VALUE: any training config field over the"
                                        " profile's (repeat the option), e.g. --set vllm_mode=server."),
    run_id: str = typer.Option(None, "--run-id", help="The warehouse run the rollouts belong to: each rank stages"
                               " its rollouts and the caller ingests them (a nightly chunk under accelerate)."),
) -> None:
    """Warm-start (local and small-real profiles) and GRPO-train the Conductor; log it to MLflow as a new
    `conductor` version with alias `challenger`. Simulated-pool numbers describe the simulation."""
    from conductor.cli.common import user_errors
    from conductor.config import SimulatedPoolRefused, load_settings, refuse_accidental_simulation
    from conductor.training.config import profile_config
    from conductor.training.estimate import estimate
    from conductor.workers.pool import PoolError, read_pool_file

    settings = load_settings(profile=profile)
    if config_file is not None:
        from conductor.training.chunks import ChunkPlan

        plan = ChunkPlan.model_validate_json(config_file.read_text(encoding="utf-8"))
        profile, config = plan.profile, plan.config()
    else:
        out = output_dir or settings.home / "training" / profile
        from conductor.cli.common import parse_settings, training_fields

        overrides: dict = {"seed": seed, "train_seed": seed, **parse_settings(settings_, training_fields())}
        for key, value in (("model_name_or_path", model), ("pool_file", str(pool_file) if pool_file else None),
                           ("max_steps", max_steps), ("max_usd", max_usd)):
            if value is not None:
                overrides[key] = value
        # an estimate changes nothing (the small-real profile's model is named, not unpacked)
        config = profile_config(profile, out, read_only=estimate_only, **overrides)  # type: ignore[arg-type]
        est = estimate(config)
        console.print("[bold]Projected[/bold] (before anything is spent):")
        for line in est.lines():
            console.print(f"  {line}")
        if estimate_only:
            return
    with user_errors(SimulatedPoolRefused, PoolError):
        pool = read_pool_file(config.pool_file)  # the run's pool, read once: the refusal and the row read it
        simulated = pool.simulated
        refuse_accidental_simulation(profile, {"training": (Path(config.pool_file), simulated)},
                                     allow_simulated or settings.allow_simulated)
    _run(config, resume=resume, track=track, warehouse=warehouse, compare=compare, result_file=result_file,
         run_id=run_id, simulated=simulated)


def _sink(config, run_id: str | None, simulated: bool):  # noqa: ANN001, ANN202
    """The warehouse's rollout sink, found through the `conductor.training_sinks` entry point."""
    import os
    from importlib.metadata import entry_points

    rank = {"run_id": run_id, "rank": int(os.environ.get("RANK", "0"))} if run_id else {}
    for ep in entry_points(group="conductor.training_sinks"):
        if ep.name == "warehouse":
            return ep.load()(params={"profile_output_dir": config.output_dir, "max_steps": config.max_steps,
                                     "learning_rate": config.learning_rate, "seed": config.seed}, simulated=simulated,
                             **rank)
    return None


def write_result(result: TrainResult, path: Path) -> None:
    """Every rank says how far it stepped (the launch's log shows each); rank 0 writes the result
    (with the launch's world size) for tasks/launch.py to read back as a TrainResult."""
    import os

    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    # One write(2) per line: the ranks share the launch's stdout pipe, and print() under
    # PYTHONUNBUFFERED writes the text and its newline apart, so two ranks' lines could interleave.
    os.write(1, f"rank {rank} of {world}: stepped to {result.steps} ({result.stop_reason})\n".encode())
    if rank == 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(result.model_copy(update={"world_size": world}).to_json(), encoding="utf-8")
        tmp.replace(path)


def _run(config, *, resume: bool, track: bool, warehouse: bool, compare: int, result_file: Path | None = None,  # noqa: ANN001
         run_id: str | None = None, simulated: bool) -> None:
    import os

    from tqdm import tqdm

    from conductor.training.pipeline import run_training
    from conductor.training.tracking import discover_tracker

    interactive = result_file is None
    bars: dict[str, tqdm] = {}
    if interactive:
        quiet_library_bars()

    def on_log(row: dict) -> None:
        """The warm start's figures on a bar of their own; GRPO's reach `on_step` (and MLflow)."""
        loss = row.get("loss")  # every logging_steps (the run's summary has `train_loss` instead: no new figure)
        if "reward" in row or loss is None or "GRPO" in bars:
            return
        # `is None`, not `or`: a tqdm bar with no total has no truth value (bool() raises).
        warm = bars.get("warm")
        if warm is None:
            warm = bars["warm"] = tqdm(desc="warm start", unit="step", dynamic_ncols=True)
        warm.n = int(row["step"])
        # refresh=False: the one refresh below draws the line (set_postfix's own would draw it twice)
        warm.set_postfix(loss=f"{float(loss):.3f}", token_acc=f"{float(row.get('mean_token_accuracy', 0)):.2f}",
                         refresh=False)
        warm.refresh()

    def on_step(row: dict[str, float]) -> None:
        if not interactive:  # launched by a nightly chunk: lines its task's log can show
            figures = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
            os.write(1, f"grpo {figures}\n".encode())  # one write per line, as write_result says
            return
        if "GRPO" not in bars:  # made at the first step, so its rate and ETA leave the warm start out
            if "warm" in bars:
                bars["warm"].close()
            bars["GRPO"] = tqdm(total=config.max_steps, desc="GRPO", unit="step", dynamic_ncols=True)
        bar = bars["GRPO"]
        bar.n = int(row["step"])
        bar.set_postfix(reward=f"{row.get('reward', 0):.3f}", fmt=f"{row.get('format_rate', 0):.2f}",
                        acc=f"{row.get('accuracy', 0):.2f}", usd=f"{row.get('usd_total', 0):.2f}", refresh=False)
        bar.refresh()

    tracker = discover_tracker() if track else None
    sink = _sink(config, run_id, simulated) if warehouse else None
    try:
        outcome = run_training(config, resume=resume, on_step=on_step, tracker=tracker, sink=sink,
                               on_log=on_log if interactive else None)
    except BaseException as exc:
        if sink is not None:
            sink.close(exc)  # its row failed (cancelled on Ctrl-C), with the error
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C: one line, rc 130 (typer's would say nothing)
            for bar in bars.values():
                bar.close()
            raise typer.Exit(interrupted(config.output_dir, bars["GRPO"].n if "GRPO" in bars else None)) from None
        raise
    if sink is not None:
        sink.close()
    for bar in bars.values():
        bar.close()
    r = outcome.result
    if result_file is not None:
        write_result(r, result_file)
        return
    console.print(f"stopped: {r.stop_reason} after {r.steps} steps, {r.wall_s:.0f} s; worker spend ${r.usd:.2f} "
                  f"({r.calls} calls){simulated_note(r.simulated)}")
    if r.best_eval_accuracy is not None:
        console.print(f"held-out accuracy (best, step {r.best_step}): {r.best_eval_accuracy:.3f}")
    console.print(f"model: {r.model_dir}")
    if outcome.tracking_run_id:
        console.print(f"MLflow run: {outcome.tracking_run_id}")
    if outcome.registered is not None:
        console.print(f"registered: {outcome.registered.model_uri} (version {outcome.registered.version})")
    if sink is not None and sink.run_id:
        console.print(f"rollouts: warehouse run {sink.run_id} ({len(sink.steps_written)} steps in v_training_curves)")
    if compare > 0:
        _compare(config, r.model_dir, compare)


def interrupted(output_dir: str, step: int | None) -> int:
    """What a Ctrl-C during training says, in one line: where it stopped, that its run is marked
    cancelled with its rollouts kept, and where `--resume` goes on from. Returns the exit code."""
    from conductor.cli.common import err_console

    where = f"GRPO step {step}" if step is not None else "the warm start"
    ckpts = sorted(Path(output_dir).glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    resume = (f"--resume goes on from {ckpts[-1]}" if ckpts else
              "no GRPO checkpoint yet (one every save_steps), so --resume starts GRPO again")
    # From the line's start: a bar closed by the interrupt does not always end its line.
    err_console.file.write("\r")
    err_console.print(f"interrupted at {where}: its runs are marked cancelled, the rollouts so far kept; {resume}",
                      highlight=False, soft_wrap=True)
    return 130


def _compare(config, model_dir, n: int) -> None:  # noqa: ANN001
    from conductor.training.compare import baselines, comparison_lines, evaluate_model_dir
    from conductor.training.problems import bank_splits, take_per_domain

    test = take_per_domain(bank_splits(n=config.bank_size).test, n, seed=0)
    base = baselines(test, config.pool_file, latency_scale=config.simulated_latency_scale)
    trained = evaluate_model_dir(model_dir, base, max_new_tokens=config.max_completion_length or 256)
    for line in comparison_lines(trained, base):
        console.print(line)


def register(app: typer.Typer) -> None:
    app.command("train")(train)
