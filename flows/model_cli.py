"""`conductor model promote|rollback`: move the `champion` alias (registry/) and record each
decision as a `promotions` row (warehouse/). They compose both stores, so they live above them."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from conductor.cli.common import UserError, console
from conductor.cli.options import field_option
from registry.cli import model_group
from registry.promotion import GateConfig


def _record(decision, warehouse_path: Path | None) -> None:  # noqa: ANN001
    """Print the decision and write it as a `promotions` row."""
    from conductor.config import Settings
    from warehouse import Promotion, TraceStore

    console.print(f"{'PROMOTED' if decision.promoted else 'KEPT OUT'} v{decision.challenger_version}: {decision.reason}")
    with TraceStore(warehouse_path or Settings().warehouse_path) as store:
        store.write_promotions([Promotion.from_decision(decision)])
    console.print(f"recorded: promotions.{decision.promotion_id}")


def gate_option(field: str, *names: str):  # noqa: ANN201 - typer's OptionInfo
    """A promotion-gate option whose default and help are GateConfig's own (one statement of them)."""
    return field_option(GateConfig, field, *names)


def model_promote(
    version: str = typer.Argument(..., help="The version to promote."),
    outcomes: Path = typer.Option(None, "--outcomes", help='JSON: {"challenger": {correct, cost_usd}, '
                                  '"champion": {...}, "champion_version"?, "baseline"?} (the champion or baseline '
                                  "outcomes on the same held-out questions)."),
    force_: bool = typer.Option(False, "--force", help="Move the champion alias without the gate (recorded as forced)."),
    margin: float = gate_option("margin"),
    confidence: float = gate_option("confidence"),
    cost_bound: float = gate_option("cost_bound"),
    method: str = gate_option("method"),
    warehouse_path: Path = typer.Option(None, "--warehouse", help="Warehouse file (default: the profile's)."),
) -> None:
    """Promote VERSION to `champion` through the gate (or with --force); the decision is recorded."""
    from registry.promotion import Outcomes, force, gate

    if not version.strip().isdigit():
        raise UserError(f"version {version!r}: a version number (see `conductor model list`)")
    if force_:
        decision = force(version)
    else:
        if outcomes is None:
            raise typer.BadParameter("the gate needs --outcomes (or use --force)", param_hint="--outcomes")
        try:
            data = json.loads(outcomes.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UserError(f"--outcomes {outcomes}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise UserError(f"--outcomes {outcomes}: not JSON ({exc})") from None
        if not isinstance(data, dict) or "challenger" not in data or "champion" not in data:
            raise UserError(f"--outcomes {outcomes}: needs the keys \"challenger\" and \"champion\"")
        decision = gate(version, Outcomes.model_validate(data["challenger"]), Outcomes.model_validate(data["champion"]),
                        champion_version=data.get("champion_version"), baseline=data.get("baseline", "template"),
                        config=GateConfig(margin=margin, confidence=confidence, cost_bound=cost_bound, method=method))
    _record(decision, warehouse_path)


def model_rollback(
    warehouse_path: Path = typer.Option(None, "--warehouse", help="Warehouse file (default: the profile's)."),
) -> None:
    """Move `champion` back to the previous champion; recorded."""
    from registry.promotion import rollback

    decision = rollback()  # a ValueError (no previous champion) is the boundary's one line
    _record(decision, warehouse_path)


def register(app: typer.Typer) -> None:
    group = model_group(app)
    group.command("promote")(model_promote)
    group.command("rollback")(model_rollback)
