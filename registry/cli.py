"""`conductor registry ...`: the registered Conductor models."""

from __future__ import annotations

import typer

from conductor.cli.common import console

registry_app = typer.Typer(help="Registered Conductor models (MLflow).", no_args_is_help=True)


@registry_app.command("resolve")
def resolve(uri: str = typer.Argument(..., help="models:/conductor@challenger, models:/conductor/3, or a path.")) -> None:
    """Print the local model directory a models:/ URI stands for (downloading it if needed)."""
    from registry.models import resolve_model_uri

    console.print(str(resolve_model_uri(uri)))


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


def register(app: typer.Typer) -> None:
    app.add_typer(registry_app, name="registry")
