"""`conductor model init --tiny DIR`: build the offline Conductor's base model."""

from __future__ import annotations

from pathlib import Path

import typer

from conductor.cli.common import console

model_app = typer.Typer(help="Build Conductor models.", no_args_is_help=True)


@model_app.command("init")
def init(
    directory: Path = typer.Argument(..., help="Where to write the model directory."),
    tiny: bool = typer.Option(False, "--tiny", help="A tiny Qwen2-architecture model built from config (no download)."),
    pool_file: Path = typer.Option(None, "--pool", help="Pool YAML whose descriptions the tokenizer learns (default: local)."),
    sft: bool = typer.Option(True, help="Also run the SFT warm start on generated workflows (into DIR/sft)."),
    seed: int = typer.Option(0, help="Seed of the weights, the tokenizer corpus and the SFT data."),
) -> None:
    """Build the tiny model and its tokenizer (trained on the prompts and the workflow format),
    then warm-start it with SFT so it writes parseable workflows. Only training problems are used."""
    if not tiny:
        raise typer.BadParameter("only --tiny is built here; any causal LM path or hub id trains as it is")
    from conductor.config import load_settings
    from conductor.training.config import local_profile
    from conductor.training.dataset import training_pool
    from conductor.training.base_model import init_tiny_conductor
    from conductor.training.pipeline import training_split
    from conductor.training.problems import take_per_domain
    from conductor.training.warm import warm_started_tiny

    config = local_profile(directory, pool_file=str(pool_file or load_settings().pool_file), seed=seed)
    train, _ = training_split(config)  # the generated bank's train split
    if sft:
        path = warm_started_tiny(config, train)
    else:
        # The same tokenizer as the SFT path: trained on every training question.
        pool = training_pool(config.pool_file, take_per_domain(train, config.sft_problems, seed=seed))
        path = init_tiny_conductor(Path(directory) / "base", train, pool, seed=seed)
    console.print(f"model: {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(model_app, name="model")
