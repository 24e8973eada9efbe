"""`conductor registry ...`: the registered Conductor models."""

from __future__ import annotations

import json
from pathlib import Path

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


def _record(decision, warehouse_path: Path | None) -> None:  # noqa: ANN001
    """Print the decision and write it as a `promotions` row."""
    from conductor.config import Settings
    from warehouse import Promotion, TraceStore

    console.print(f"{'PROMOTED' if decision.promoted else 'KEPT OUT'} v{decision.challenger_version}: {decision.reason}")
    with TraceStore(warehouse_path or Settings().warehouse_path) as store:
        store.write_promotions([Promotion.from_decision(decision)])
    console.print(f"recorded: promotions.{decision.promotion_id}")


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


def model_promote(
    version: str = typer.Argument(..., help="The version to promote."),
    outcomes: Path = typer.Option(None, "--outcomes", help='JSON: {"challenger": {correct, cost_usd}, '
                                  '"champion": {...}, "champion_version"?, "baseline"?} (the champion or baseline '
                                  "outcomes on the same held-out questions)."),
    force_: bool = typer.Option(False, "--force", help="Move the champion alias without the gate (recorded as forced)."),
    margin: float = typer.Option(0.0, help="Accuracy the challenger must win by (0.02 = 2 points)."),
    confidence: float = typer.Option(0.95, help="Confidence of the comparison."),
    cost_bound: float = typer.Option(0.10, help="x: challenger $/question <= champion's x (1 + x)."),
    method: str = typer.Option("bootstrap", help="bootstrap (paired, lower bound > margin) or mcnemar."),
    warehouse_path: Path = typer.Option(None, "--warehouse", help="Warehouse file (default: the profile's)."),
) -> None:
    """Promote VERSION to `champion` through the gate (or with --force); the decision is recorded."""
    from registry.promotion import GateConfig, Outcomes, force, gate

    if force_:
        decision = force(version)
    else:
        if outcomes is None:
            raise typer.BadParameter("the gate needs --outcomes (or use --force)", param_hint="--outcomes")
        data = json.loads(outcomes.read_text())
        decision = gate(version, Outcomes.model_validate(data["challenger"]), Outcomes.model_validate(data["champion"]),
                        champion_version=data.get("champion_version"), baseline=data.get("baseline", "template"),
                        config=GateConfig(margin=margin, confidence=confidence, cost_bound=cost_bound, method=method))
    _record(decision, warehouse_path)


def model_rollback(
    warehouse_path: Path = typer.Option(None, "--warehouse", help="Warehouse file (default: the profile's)."),
) -> None:
    """Move `champion` back to the previous champion; recorded."""
    from registry.promotion import rollback

    try:
        decision = rollback()
    except ValueError as exc:
        console.print(f"error: {exc}")
        raise typer.Exit(1) from exc
    _record(decision, warehouse_path)


KEY_METRICS = ("eval_accuracy", "accuracy", "reward", "format_rate", "usd_total")


def register(app: typer.Typer) -> None:
    app.add_typer(registry_app, name="registry")
    # `conductor model list|promote|rollback`: added to the library's `model` group (which has
    # `init`); a standalone `model` group if the library did not register one.
    group = next((g.typer_instance for g in app.registered_groups if g.name == "model"), None)
    if group is None:
        group = typer.Typer(help="Conductor models.", no_args_is_help=True)
        app.add_typer(group, name="model")
    group.command("list")(model_list)
    group.command("promote")(model_promote)
    group.command("rollback")(model_rollback)
