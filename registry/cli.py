"""`conductor registry ...`: the registered Conductor models."""

from __future__ import annotations

import logging

import typer

from conductor.cli.common import UserError, add_user_errors, console

registry_app = typer.Typer(help="Registered Conductor models (MLflow).", no_args_is_help=True)


@registry_app.command("resolve")
def resolve(uri: str = typer.Argument(..., help="models:/conductor@challenger, models:/conductor/3, or a path.")) -> None:
    """Print the local model directory a models:/ URI stands for (downloading it if needed)."""
    from pathlib import Path

    from registry.models import resolve_model_uri

    path = resolve_model_uri(uri)
    if not Path(path).is_dir():  # a plain path comes back as it is: say when it is not a model
        raise UserError(f"{uri}: no such model directory (or use models:/conductor@ALIAS, models:/conductor/N)")
    console.print(str(path))


@registry_app.command("versions")
def versions() -> None:
    """List the versions of `conductor`, their aliases and runs."""
    import mlflow

    from registry.store import REGISTERED_MODEL, use_store

    use_store()
    client = mlflow.MlflowClient()
    # search_model_versions leaves `aliases` empty on this store; the registered model has them.
    aliases: dict[str, list[str]] = {}
    for alias, version in client.get_registered_model(REGISTERED_MODEL).aliases.items():
        aliases.setdefault(str(version), []).append(alias)
    for v in client.search_model_versions(f"name='{REGISTERED_MODEL}'"):
        console.print(f"{v.name} v{v.version}  aliases={','.join(aliases.get(str(v.version), [])) or '-'}  run={v.run_id}")


def model_list() -> None:
    """Versions of `conductor`, their aliases, key metrics of their runs and gate decisions."""
    import mlflow

    from registry.store import REGISTERED_MODEL, use_store

    use_store()
    client = mlflow.MlflowClient()
    if not client.search_registered_models(f"name='{REGISTERED_MODEL}'"):
        console.print(f"no registered model {REGISTERED_MODEL!r} yet")
        return
    aliases: dict[str, list[str]] = {}
    for alias, version in client.get_registered_model(REGISTERED_MODEL).aliases.items():
        aliases.setdefault(str(version), []).append(alias)
    for v in sorted(client.search_model_versions(f"name='{REGISTERED_MODEL}'"), key=lambda v: int(v.version)):
        metrics = client.get_run(v.run_id).data.metrics if v.run_id else {}
        key = {k: metrics[k] for k in KEY_METRICS if k in metrics}
        shown = "  ".join(f"{k}={val:.4g}" for k, val in key.items()) or "-"
        console.print(f"v{v.version}  aliases={','.join(sorted(aliases.get(str(v.version), []))) or '-'}  {shown}"
                      f"  gate={v.tags.get('gate.decision', '-')}  run={v.run_id}")


KEY_METRICS = ("eval_accuracy", "accuracy", "reward", "format_rate", "usd_total")


def model_group(app: typer.Typer) -> typer.Typer:
    """The CLI's `model` group (the library registers it, with `init`); made here if it did not."""
    group = next((g.typer_instance for g in app.registered_groups if g.name == "model"), None)
    if group is None:
        group = typer.Typer(help="Conductor models.", no_args_is_help=True)
        app.add_typer(group, name="model")
    return group


def register(app: typer.Typer) -> None:
    # An unknown model, version or alias reaches the user as MLflow's one-line message (named, not
    # imported: mlflow loads only for the commands that use it).
    add_user_errors("mlflow.exceptions.MlflowException")
    # A fresh store's "Creating initial MLflow database tables..." lines are not the command's output.
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)
    app.add_typer(registry_app, name="registry")
    # `promote` and `rollback` also write the warehouse, so they live a layer up (flows/model_cli.py).
    model_group(app).command("list")(model_list)
