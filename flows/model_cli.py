"""`conductor model promote|rollback`: move the `champion` alias (registry/) and record each
decision as a `promotions` row (warehouse/). They compose both stores, so they live above them."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from conductor.cli.common import console
from registry.cli import model_group


def _record(decision, warehouse_path: Path | None) -> None:  # noqa: ANN001
    """Print the decision and write it as a `promotions` row."""
    from conductor.config import Settings
    from warehouse import Promotion, TraceStore

    console.print(f"{'PROMOTED' if decision.promoted else 'KEPT OUT'} v{decision.challenger_version}: {decision.reason}")
    with TraceStore(warehouse_path or Settings().warehouse_path) as store:
        store.write_promotions([Promotion.from_decision(decision)])
    console.print(f"recorded: promotions.{decision.promotion_id}")


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


def register(app: typer.Typer) -> None:
    group = model_group(app)
    group.command("promote")(model_promote)
    group.command("rollback")(model_rollback)
