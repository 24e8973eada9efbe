"""The nightly flow for real, under the session's Prefect test server: curation, a tiny training
run registered in a real MLflow SQLite store, the evaluation of challenger vs the template
baseline (no champion yet) on held-out problems with traces in DuckDB, costs, the gate (its
decision in MLflow and in `promotions`), the artifacts. One nightly run is shared by every
assertion; a rerun of the same night must reuse it (no second version, no second decision)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import mlflow
import pytest

from warehouse.store import TraceStore

# The smallest training that still goes through SFT, GRPO and registration.
TINY = {"sft_problems": 8, "sft_copies": 1, "sft_epochs": 1.0, "per_device_train_batch_size": 2,
        "num_generations": 2, "max_completion_length": 48, "eval_every": 0, "early_stopping_patience": 0}
HELDOUT = 8


@pytest.fixture(scope="module")
def night(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    from flows.nightly import NightConfig, champion_eval_flow, nightly_flow

    uri = f"sqlite:///{tmp_path_factory.mktemp('nightly-mlflow') / 'mlflow.db'}"
    old = os.environ.get("MLFLOW_TRACKING_URI")
    os.environ["MLFLOW_TRACKING_URI"] = uri
    night = NightConfig(steps=1, chunk_steps=1, heldout_problems=HELDOUT, baselines=[], training_overrides=TINY,
                        concurrency=2, run_key=f"test-{uuid.uuid4().hex[:8]}", challenger_efforts=["low"])
    try:
        before_any = champion_eval_flow(NightConfig(heldout_problems=4, baselines=[], concurrency=2))  # no champion yet
        first = nightly_flow(night)
        again = nightly_flow(night)  # the same night, rerun: every stage cached
        client = mlflow.MlflowClient(tracking_uri=uri, registry_uri=uri)
        after_first = {"versions": [(str(v.version), v.status) for v in client.search_model_versions("name='conductor'")],
                       "aliases": {a: str(v) for a, v in client.get_registered_model("conductor").aliases.items()},
                       "v1": client.get_model_version("conductor", "1")}
        # The next night, with a champion (forced, whatever the first gate said): training starts
        # from the champion's model and the gate compares with the champion, not the baseline.
        if not first.decision.promoted:
            from registry.promotion import force

            force(first.trained.version)
        champion_eval = champion_eval_flow(NightConfig(heldout_problems=4, baselines=[], concurrency=2))  # champion v1
        second = nightly_flow(night.model_copy(update={"run_key": night.run_key + "-next"}))
        yield {"uri": uri, "first": first, "again": again, "home": prefect_harness, "champion_eval": champion_eval,
               "before_any": before_any,
               "second": second, "after_first": after_first}
    finally:
        if old is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = old


def _store(home: Path) -> TraceStore:
    return TraceStore(home / "warehouse.duckdb", read_only=True)


def test_registered_version_and_aliases_follow_the_decision(night) -> None:  # noqa: ANN001
    s, state = night["first"], night["after_first"]  # the registry after the first night and its rerun
    assert state["versions"] == [(s.trained.version, "READY")] == [("1", "READY")]
    aliases = state["aliases"]
    assert aliases["challenger"] == s.trained.version
    # no champion before the first night: the challenger was compared with the template baseline
    assert s.trained.champion_before is None and s.report.compared_with.startswith("template:")
    assert s.trained.started_from == "SFT warm start"
    # `champion` follows the decision (which decision is test_the_promotion_flow_...'s business)
    assert aliases.get("champion") == s.report.champion_version_after == (s.trained.version if s.decision.promoted else None)


def test_the_decision_is_recorded_in_mlflow_and_the_warehouse(night) -> None:  # noqa: ANN001
    s = night["first"]
    v = night["after_first"]["v1"]  # before the fixture's `force` recorded its own decision on it
    assert v.tags["gate.decision"] == ("promoted" if s.decision.promoted else "rejected")
    assert v.tags["gate.promotion_id"] == s.decision.promotion_id
    assert v.tags["gate.baseline"].startswith("template:")
    assert json.loads(v.tags["gate.figures"])["n"] == HELDOUT
    assert s.decision.reason in v.description
    with _store(night["home"]) as store:
        rows = store.query("SELECT * FROM promotions WHERE challenger_version = ? AND challenger_eval_id = ?",
                           [s.trained.version, s.evaluated.evaluation_id]).to_pylist()
        nightly = store.query("SELECT * FROM v_nightly WHERE run_key = ? ORDER BY started_at",
                              [s.night.run_key]).to_pylist()
    assert len(rows) == 1 and rows[0]["promotion_id"] == s.decision.promotion_id and rows[0]["promoted"] == s.decision.promoted
    assert [(r["status"], r["promotion_id"], r["challenger_version"]) for r in nightly] == \
        [("finished", s.decision.promotion_id, s.trained.version)] * 2


def test_traces_of_training_and_evaluation_are_in_duckdb(night) -> None:  # noqa: ANN001
    s = night["first"]
    with _store(night["home"]) as store:
        per_spec = store.query(
            "SELECT spec, count(*) AS n, count(DISTINCT problem_id) AS problems FROM v_question_outcomes"
            " WHERE evaluation_id = ? GROUP BY spec", [s.evaluated.evaluation_id]).to_pylist()
        train = store.query("SELECT r.status, count(t.trace_id) AS traces FROM runs r JOIN traces t USING (run_id)"
                            " WHERE r.kind = 'train' AND r.mlflow_run_id = ? GROUP BY r.status",
                            [s.trained.run_id]).to_pylist()
    assert len(per_spec) == 3  # the challenger (also at effort low) and the template baseline, on the same problems
    assert all(r["n"] == r["problems"] == HELDOUT for r in per_spec)
    assert len(train) == 1 and train[0]["status"] == "finished" and train[0]["traces"] > 0
    assert set(s.report.scores.accuracy) == {f"challenger v{s.trained.version}", f"challenger v{s.trained.version}, effort low",
                                             f"{s.report.compared_with} (baseline: no champion yet)"}
    assert s.evaluated.simulated and s.costs.usd_evaluation > 0


def test_a_rerun_of_the_same_night_reuses_every_stage(night) -> None:  # noqa: ANN001
    first, again = night["first"], night["again"]
    assert (again.trained.version, again.evaluated.evaluation_id, again.decision.promotion_id) == \
        (first.trained.version, first.evaluated.evaluation_id, first.decision.promotion_id)
    assert len(night["after_first"]["versions"]) == 1
    with _store(night["home"]) as store:
        n = store.query("SELECT count(*) AS n FROM promotions WHERE challenger_eval_id = ?",
                        [first.evaluated.evaluation_id]).to_pylist()
    assert n == [{"n": 1}]


def test_artifacts_are_published(night) -> None:  # noqa: ANN001
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    import asyncio

    async def read():  # noqa: ANN202
        async with get_client() as client:
            return await client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(like_="nightly-")))

    by_key = {a.key: a for a in sorted(asyncio.run(read()), key=lambda a: a.created)}  # the latest per key
    assert {"nightly-summary", "nightly-results", "nightly-costs", "nightly-model-version",
            "nightly-training-run"} <= set(by_key)
    # The latest of each key is the second night's (challenger v2 against champion v1).
    s = night["second"]
    results = by_key["nightly-results"].data
    assert "simulated" in results.lower() and s.decision.reason in results and "| avg |" in results
    summary = str(by_key["nightly-summary"].data)
    assert "challenger v2" in summary and "champion v1" in summary
    # The UI shows a table's columns from its first row: the decision row's note must be one of them.
    rows = json.loads(by_key["nightly-summary"].data)
    assert [sorted(r) for r in rows] == [sorted(rows[0])] * len(rows)
    assert rows[-1]["method"] == "decision" and "champion before: " in rows[-1]["note"]
    assert "/#/models/conductor/versions/2)" in by_key["nightly-model-version"].data  # [text](url)
    assert s.trained.run_id in by_key["nightly-training-run"].data
    # The challenger's strategies over training, an image the MLflow UI serves from its run.
    strategies = by_key["nightly-strategies"]
    assert strategies.type == "image" and s.trained.run_id in strategies.data and "strategies.png" in strategies.data


def test_bad_parameters_are_one_clear_error(prefect_harness) -> None:  # noqa: ANN001
    from flows.nightly import NightConfig

    with pytest.raises(ValueError, match=r"steps must be at least 1.*run_key"):
        NightConfig.parse(steps=0, run_key="../../etc")


def test_champion_eval_evaluates_the_baseline_before_any_champion_then_the_champion(night) -> None:  # noqa: ANN001
    from flows.nightly import BASELINE

    before, after = night["before_any"], night["champion_eval"]
    assert (before.champion_version, before.spec) == (None, BASELINE)
    assert after.champion_version == "1" and after.spec.startswith("conductor:") and after.spec.endswith("/v1")
    for out in (before, after):
        with _store(night["home"]) as store:
            n = store.query("SELECT count(*) AS n FROM v_question_outcomes WHERE evaluation_id = ?",
                            [out.evaluated.evaluation_id]).to_pylist()
        assert n == [{"n": 4}] and set(out.accuracy) == {out.spec}


def test_the_gate_never_decides_twice_for_one_version(night) -> None:  # noqa: ANN001
    """The promotion flow run again on a decided version (as a rerun after a kill between the
    gate's MLflow record and the cached result would): the recorded decision is read back."""
    from flows.nightly import GateInputs, promotion_flow

    s = night["second"]
    with _store(night["home"]) as store:
        specs = [r["spec"] for r in store.query("SELECT DISTINCT spec FROM v_question_outcomes WHERE evaluation_id = ?",
                                                [s.evaluated.evaluation_id]).to_pylist()]
    again = promotion_flow(GateInputs(challenger_version="2", evaluation_id=s.evaluated.evaluation_id,
                                      challenger_spec=next(x for x in specs if x.endswith("/v2")),
                                      champion_spec=next(x for x in specs if x.endswith("/v1")), champion_version="1"))
    assert again.promotion_id == s.decision.promotion_id and again.promoted == s.decision.promoted
    with _store(night["home"]) as store:
        n = store.query("SELECT count(*) AS n FROM promotions WHERE challenger_eval_id = ?",
                        [s.evaluated.evaluation_id]).to_pylist()
    assert n == [{"n": 1}]


def test_with_a_champion_the_night_trains_from_it_and_is_gated_against_it(night) -> None:  # noqa: ANN001
    s = night["second"]
    assert s.trained.version == "2" and s.trained.champion_before == "1"
    assert s.trained.started_from == "champion v1" and s.report.compared_with == "v1"
    client = mlflow.MlflowClient(tracking_uri=night["uri"], registry_uri=night["uri"])
    v2 = client.get_model_version("conductor", "2")
    assert v2.tags["gate.champion_version"] == "1" and v2.tags["gate.baseline"] == ""
    # GRPO started from the champion's weights: the training run's params name its model directory.
    params = client.get_run(s.trained.run_id).data.params
    assert params["model_name_or_path"].endswith("/models/v1")
    aliases = {a: str(v) for a, v in client.get_registered_model("conductor").aliases.items()}
    assert aliases["challenger"] == "2" and aliases["champion"] == ("2" if s.decision.promoted else "1")
    assert set(s.report.scores.accuracy) == {"challenger v2", "challenger v2, effort low", "champion v1"}


def test_the_challenger_at_an_effort_level_is_its_own_row_with_the_level_in_its_prompts(night) -> None:  # noqa: ANN001
    from conductor.effort import EFFORT_LINES, Effort

    s = night["first"]
    with _store(night["home"]) as store:
        prompts = store.query(
            "SELECT o.spec, t.conductor_prompt FROM v_question_outcomes o JOIN runs r USING (run_id)"
            " JOIN traces t ON t.run_id = r.run_id AND t.problem_id = o.problem_id"
            " WHERE o.evaluation_id = ? AND o.spec LIKE 'conductor:%'", [s.evaluated.evaluation_id]).to_pylist()
    at_low = [p["conductor_prompt"] for p in prompts if p["spec"].endswith("?effort=low")]
    plain = [p["conductor_prompt"] for p in prompts if not p["spec"].endswith("?effort=low")]
    assert len(at_low) == len(plain) == HELDOUT
    # the night trains with effort rows (the local profile's nightly_training): unstated, the
    # challenger is asked at its default level, medium
    assert all(EFFORT_LINES[Effort.LOW] in p for p in at_low) and all(EFFORT_LINES[Effort.MEDIUM] in p for p in plain)
    label = f"challenger v{s.trained.version}, effort low"
    assert label in s.report.scores.usd_per_question and s.report.scores.usd_per_question[label] is not None


def _evaluation(db: Path, sides: dict[str, bool], n: int = 12) -> str:
    """An evaluation in the warehouse whose outcome is known: each spec right (True) or wrong on
    all `n` problems, at the same $ per question on both sides (the same calls)."""
    import random
    from datetime import UTC, datetime

    from conductor.verify.verdict import Verdict
    from tests.factories import make_problem, make_trace
    from warehouse.records import Run

    evaluation_id = f"eval-{uuid.uuid4().hex[:8]}"
    problems = [make_problem(random.Random(i), i) for i in range(n)]
    with TraceStore(db) as store:
        for spec, right in sides.items():
            run_id = f"{evaluation_id}-{len(spec)}-{right}"
            store.write_runs([Run(run_id=run_id, kind="eval", method=spec, status="finished",
                                  started_at=datetime.now(UTC), finished_at=datetime.now(UTC),
                                  params={"evaluation_id": evaluation_id, "spec": spec, "repeat": 0})])
            traces = [make_trace(random.Random(i), run_id=run_id, problem=p, parse_error=False, recurse=False)
                      for i, p in enumerate(problems)]
            store.write_traces([t.model_copy(update={"verdict": Verdict(correct=right, method="test")})
                                for t in traces])
        # Every call priced (the factory leaves some prices unknown): a $ unknown on either side
        # keeps the challenger out whatever its answers (tests/test_promotion.py), and this test is
        # about the answers.
        store.con.execute("UPDATE calls SET cost_usd = 0.001 WHERE cost_usd IS NULL")
    return evaluation_id


def test_the_promotion_flow_promotes_the_better_side_and_only_it(prefect_harness, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The gate's wiring on evaluations whose answer is known: a challenger right on every question
    against a baseline wrong on every one is promoted; the next challenger, wrong on every question
    against that champion, is not, and the champion stays."""
    from flows.nightly import GateInputs, promotion_flow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    client = mlflow.MlflowClient(tracking_uri=uri, registry_uri=uri)
    client.create_registered_model("conductor")
    for _ in range(2):
        client.create_model_version("conductor", source=(tmp_path / "model").as_uri())
    db = tmp_path / "warehouse.duckdb"
    v1, v2, baseline = "conductor:/models/v1", "conductor:/models/v2", "template:verify"

    better = _evaluation(db, {v1: True, baseline: False})
    first = promotion_flow(GateInputs(challenger_version="1", evaluation_id=better, challenger_spec=v1,
                                      champion_spec=baseline), db_path=str(db))
    assert first.promoted is True and first.figures["challenger_accuracy"] == 1.0
    assert {a: str(v) for a, v in client.get_registered_model("conductor").aliases.items()} == {"champion": "1"}

    worse = _evaluation(db, {v2: False, v1: True})
    second = promotion_flow(GateInputs(challenger_version="2", evaluation_id=worse, challenger_spec=v2,
                                       champion_spec=v1, champion_version="1"), db_path=str(db))
    assert second.promoted is False and second.figures["challenger_accuracy"] == 0.0
    assert {a: str(v) for a, v in client.get_registered_model("conductor").aliases.items()} == {"champion": "1"}
    assert client.get_model_version("conductor", "2").tags["gate.decision"] == "rejected"
    with TraceStore(db, read_only=True) as store:
        rows = store.query("SELECT challenger_version, promoted FROM promotions ORDER BY challenger_version").to_pylist()
    assert rows == [{"challenger_version": "1", "promoted": True}, {"challenger_version": "2", "promoted": False}]


def _documented_relations() -> set[str]:
    """The tables and views docs/ names: the first column of docs/warehouse.md's "Tables" and
    "Views" tables (a cell may name two), and every `v_...` view named anywhere in docs/."""
    import re

    docs = Path(__file__).resolve().parents[1] / "docs"
    catalog = (docs / "warehouse.md").read_text(encoding="utf-8")
    names: set[str] = set()
    for section in ("## Tables", "## Views"):
        body = catalog.split(section, 1)[1].split("\n## ", 1)[0]
        for line in body.splitlines():
            if line.startswith("| `"):
                names |= set(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    for page in docs.glob("*.md"):
        names |= set(re.findall(r"`(v_[a-z_]+)`", page.read_text(encoding="utf-8")))
    return names


def test_every_table_and_view_the_docs_name_has_rows_after_a_night(night) -> None:  # noqa: ANN001
    documented = _documented_relations()
    assert {"runs", "datasets", "dataset_problems", "traces", "v_leaderboard", "v_nightly"} <= documented
    with _store(night["home"]) as store:
        present = {r["name"] for r in store.query(
            "SELECT table_name AS name FROM duckdb_tables() WHERE NOT internal"
            " UNION SELECT view_name FROM duckdb_views() WHERE NOT internal").to_pylist()}
        counts = {name: store.query(f'SELECT count(*) AS n FROM "{name}"').to_pylist()[0]["n"]
                  for name in sorted(documented & present)}
        # the night's evaluation names the data set it ran on: the held-out problems, in order
        dataset = store.query(
            "SELECT d.dataset_id, d.split, d.n_problems, count(m.problem_id) AS members"
            " FROM runs r JOIN datasets d ON d.dataset_id = json_extract_string(r.params, '$.dataset_id')"
            " JOIN dataset_problems m USING (dataset_id) WHERE r.run_id = ?"
            " GROUP BY ALL", [night["first"].evaluated.evaluation_id]).to_pylist()
    assert sorted(documented - present) == []  # docs name nothing the schema lacks
    assert sorted(present - documented) == []  # and the schema has nothing the docs leave out
    # v_outages has rows only when a worker was down (a healthy night has none): tests/test_outage_drill.py
    assert [name for name, n in counts.items() if n == 0 and name != "v_outages"] == []
    assert len(dataset) == 1 and dataset[0]["split"] == "eval"
    assert dataset[0]["n_problems"] == dataset[0]["members"] == HELDOUT
