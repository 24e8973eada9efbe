"""The promotion gate against a real MLflow SQLite store and a real DuckDB warehouse."""

from __future__ import annotations

import json

import mlflow
import pytest
from typer.testing import CliRunner

from registry.promotion import CHAMPION, GateConfig, Outcomes, decide, force, gate, mcnemar_p, rollback
from registry.store import REGISTERED_MODEL, use_store
from warehouse import Promotion, TraceStore

N = 60


@pytest.fixture
def store(tmp_path, monkeypatch) -> str:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri


def register_versions(tmp_path, count: int) -> list[str]:
    """Tiny model versions: a one-file artifact dir per version, each in its own run."""
    exp = use_store()
    client = mlflow.MlflowClient()
    client.create_registered_model(REGISTERED_MODEL)
    versions = []
    for i in range(count):
        art = tmp_path / f"m{i}"
        art.mkdir()
        (art / "config.json").write_text("{}")
        with mlflow.start_run(experiment_id=exp) as run:
            mlflow.log_metric("eval_accuracy", 0.5 + 0.1 * i)
            mlflow.log_artifacts(str(art), "model")
        v = client.create_model_version(REGISTERED_MODEL, f"runs:/{run.info.run_id}/model", run_id=run.info.run_id)
        versions.append(str(v.version))
    return versions


def outcomes(right: int, usd: float = 0.01) -> Outcomes:
    return Outcomes(correct=[i < right for i in range(N)], cost_usd=[usd] * N)


def champion_of(uri: str) -> str | None:
    aliases = mlflow.MlflowClient(uri).get_registered_model(REGISTERED_MODEL).aliases
    return str(aliases[CHAMPION]) if CHAMPION in aliases else None


def test_decide_rule() -> None:
    base = outcomes(30)
    assert decide("2", outcomes(50), base, champion_version="1").promoted
    assert not decide("2", outcomes(32), base, champion_version="1").promoted  # within noise
    assert not decide("2", outcomes(28), base, champion_version="1").promoted  # worse
    # The margin is on the paired difference: 20 points better does not clear a 40-point margin.
    assert not decide("2", outcomes(50), base, champion_version="1", config=GateConfig(margin=0.4)).promoted
    assert decide("2", outcomes(50), base, champion_version="1", config=GateConfig(method="mcnemar")).promoted
    assert not decide("2", outcomes(32), base, champion_version="1", config=GateConfig(method="mcnemar")).promoted
    # Cost bound: 10% more is allowed, 20% more is not.
    assert decide("2", outcomes(50, usd=0.011), base, champion_version="1").promoted
    too_dear = decide("2", outcomes(50, usd=0.012), base, champion_version="1")
    assert not too_dear.promoted and "too expensive" in too_dear.reason
    with pytest.raises(ValueError):
        decide("2", Outcomes(correct={"a": True}, cost_usd={"a": 0.0}), Outcomes(correct={"b": True}, cost_usd={"b": 0.0}))


def test_an_unknown_cost_keeps_the_challenger_out_and_is_never_taken_as_zero() -> None:
    base = outcomes(30)
    unpriced = Outcomes(correct=[i < 50 for i in range(N)], cost_usd=[None] + [0.001] * (N - 1))
    assert unpriced.usd_per_question is None  # not the mean with the unknown counted as $0
    kept = decide("2", unpriced, base, champion_version="1")  # better and, at $0 for the unknown, cheaper
    assert not kept.promoted and kept.reason.startswith("cost unknown vs v1")
    assert "unknown for the challenger" in kept.reason and kept.figures["usd_limit"] is None
    champion_unknown = decide("2", outcomes(50), Outcomes(correct=base.correct, cost_usd=[None] * N), champion_version="1")
    assert not champion_unknown.promoted and "unknown for the champion" in champion_unknown.reason


def test_mcnemar_p() -> None:
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(5, 0) == pytest.approx(1 / 32)


def test_first_model_against_baseline_then_better_worse_and_expensive(tmp_path, store) -> None:
    v1, v2, v3, v4 = register_versions(tmp_path, 4)
    first = gate(v1, outcomes(40), outcomes(25), baseline="template")
    assert first.promoted and first.champion_version is None and first.baseline == "template"
    assert champion_of(store) == v1
    better = gate(v2, outcomes(55), outcomes(40), champion_version=v1)
    assert better.promoted and champion_of(store) == v2
    worse = gate(v3, outcomes(50), outcomes(55), champion_version=v2)
    assert not worse.promoted and champion_of(store) == v2
    dear = gate(v4, outcomes(60, usd=0.05), outcomes(35, usd=0.01), champion_version=v2)
    assert not dear.promoted and champion_of(store) == v2
    # Recorded on the versions: tags and description.
    client = mlflow.MlflowClient(store)
    mv = client.get_model_version(REGISTERED_MODEL, v4)
    assert mv.tags["gate.decision"] == "rejected" and mv.tags["gate.promotion_id"] == dear.promotion_id
    assert json.loads(mv.tags["gate.figures"])["challenger_usd_per_question"] == pytest.approx(0.05)
    assert "too expensive" in mv.description
    assert client.get_model_version(REGISTERED_MODEL, v2).tags["gate.decision"] == "promoted"
    # Stale champion outcomes are refused.
    with pytest.raises(ValueError):
        gate(v3, outcomes(60), outcomes(10), champion_version=v1)


def test_force_and_rollback(tmp_path, store) -> None:
    v1, v2, v3 = register_versions(tmp_path, 3)
    with pytest.raises(ValueError):
        rollback()
    gate(v1, outcomes(40), outcomes(20), baseline="template")
    forced = force(v3)
    assert forced.forced and forced.reason == "forced" and forced.champion_version == v1
    assert champion_of(store) == v3
    back = rollback()
    assert back.action == "rollback" and back.challenger_version == v1 and back.champion_version == v3
    assert champion_of(store) == v1
    assert mlflow.MlflowClient(store).get_model_version(REGISTERED_MODEL, v1).tags["gate.action"] == "rollback"
    with pytest.raises(ValueError):
        rollback()  # v1 was the first champion


def test_decision_written_to_warehouse(tmp_path, store) -> None:
    (v1,) = register_versions(tmp_path, 1)
    decision = gate(v1, outcomes(40), outcomes(20), baseline="template")
    with TraceStore(tmp_path / "w.duckdb") as wh:
        assert wh.write_promotions([Promotion.from_decision(decision)]) == 1
        row = wh.query("SELECT * FROM promotions").to_pylist()
    assert len(row) == 1
    assert row[0]["promotion_id"] == decision.promotion_id and row[0]["promoted"] is True
    assert row[0]["challenger_version"] == v1 and row[0]["champion_version"] is None
    metrics = json.loads(row[0]["metrics"])
    assert metrics["baseline"] == "template" and metrics["n"] == N and metrics["action"] == "gate"


def test_cli_list_promote_force_rollback(tmp_path, store) -> None:
    from conductor.cli import app

    v1, v2 = register_versions(tmp_path, 2)
    wh = tmp_path / "w.duckdb"
    runner = CliRunner()
    assert runner.invoke(app, ["model", "rollback", "--warehouse", str(wh)]).exit_code == 2  # no champion yet: a user error
    assert "init" in runner.invoke(app, ["model", "--help"]).output  # the library's command is kept
    data = tmp_path / "o.json"
    data.write_text(json.dumps({"challenger": outcomes(40).model_dump(), "champion": outcomes(20).model_dump(),
                                "baseline": "template"}))
    res = runner.invoke(app, ["model", "promote", v1, "--outcomes", str(data), "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    assert champion_of(store) == v1
    res = runner.invoke(app, ["model", "promote", v2, "--warehouse", str(wh)])
    assert res.exit_code != 0 and champion_of(store) == v1  # no outcomes, no --force: nothing moves
    assert runner.invoke(app, ["model", "promote", v2, "--force", "--warehouse", str(wh)]).exit_code == 0
    assert champion_of(store) == v2
    assert runner.invoke(app, ["model", "rollback", "--warehouse", str(wh)]).exit_code == 0
    assert champion_of(store) == v1
    listed = runner.invoke(app, ["model", "list"])
    assert listed.exit_code == 0 and "champion" in listed.output and "eval_accuracy" in listed.output
    with TraceStore(wh, read_only=True) as w:
        reasons = [r["reason"] for r in w.query("SELECT reason FROM promotions ORDER BY decided_at").to_pylist()]
    assert len(reasons) == 3 and reasons[1] == "forced" and reasons[2].startswith("rollback")


def test_the_first_challenger_is_not_held_to_a_baselines_cost() -> None:
    """With no champion yet, the challenger must beat the baseline; the cost bound guards a deployed
    champion's $/question, so a dearer workflow (5 calls against a 4-call template) can still win
    the first night, unless `cost_bound_vs_baseline` asks for the bound there too."""
    base = outcomes(30, usd=0.010)
    first = decide("1", outcomes(50, usd=0.012), base, baseline="template:fanout")
    assert first.promoted and "no champion yet" in first.reason
    held = decide("1", outcomes(50, usd=0.012), base, baseline="template:fanout",
                  config=GateConfig(cost_bound_vs_baseline=True))
    assert not held.promoted and "too expensive" in held.reason
    # an unknown $ still keeps the first challenger out (never taken as $0)
    unknown = Outcomes(correct=[i < 50 for i in range(N)], cost_usd=[None] * N)
    assert not decide("1", unknown, base, baseline="template:fanout").promoted
