"""The drift drill: a worker swapped for a weaker one between two nights is flagged by the second
night, as a Prefect artifact and a webhook notification that arrives at a real HTTP receiver on
127.0.0.1 (a Prefect `Webhook` block pointing at it). Two small evaluations of the simulated pool
(the second night's pool file gives one worker much lower skills) on the session's Prefect test
server and a real DuckDB file; then the statistics alone (conductor/evaluation/drift.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from conductor.data.synthetic import generate_bank
from conductor.evaluation.config import EvalConfig
from conductor.evaluation.drift import DriftConfig, WorkerSamples, bootstrap_change, flagged, worker_shifts
from conductor.simulation import SIMULATED_BANNER, simulated_note
from flows.drift import worker_drift_flow
from flows.evaluation import evaluation_flow
from tests.local_pool import local_pool
from tests.loopback import LoopbackServer, Reply
from warehouse.store import TraceStore

WORKERS = ("sim-generalist", "sim-coder", "sim-small")
SWAPPED = "sim-generalist"
WEAKER = {"math": 0.15, "choice": 0.25, "freeform": 0.1, "code": 0.1}  # was 0.70 / 0.85 / 0.45 / 0.55
# The drill's pools answer in ~1 ms a call, so a call's measured latency is this shared machine's
# load, not the swap (in one CI run every sim-generalist call of the second night took 1.57 s, and
# latency was flagged beside accuracy): the drill flags latency only past an hour.
NO_LATENCY = DriftConfig(min_change={**DriftConfig().min_change, "latency_s": 3600.0})


@pytest.fixture(scope="module")
def nights(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    d = tmp_path_factory.mktemp("drift")
    pool = local_pool(latency_ms=1)
    swapped = copy.deepcopy(pool)  # the provider swapped the model behind the same id overnight
    next(w for w in swapped["workers"] if w["id"] == SWAPPED)["options"]["skills"] = WEAKER
    (d / "night1.yaml").write_text(yaml.safe_dump(pool))
    (d / "night2.yaml").write_text(yaml.safe_dump(swapped))
    problems = [p for p in generate_bank(120, seed=13) if p.domain in ("math", "choice")][:40]
    (d / "p.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in problems))
    db = str(d / "wh.duckdb")
    ids = []
    for night in ("night1", "night2"):
        cfg = EvalConfig(methods=[f"single:{w}" for w in WORKERS], problems_file=d / "p.jsonl",
                         pool_file=d / f"{night}.yaml", concurrency=3, out_dir=d / night, log_to_mlflow=False)
        ids.append(evaluation_flow(cfg, db_path=db).evaluation_id)
    return {"db": db, "first": ids[0], "second": ids[1], "questions": len(problems)}


@pytest.fixture(scope="module")
def receiver(prefect_harness: Path):
    from prefect.blocks.webhook import Webhook

    with LoopbackServer() as server:
        server.script("/drift", Reply(200, {"ok": True}))
        Webhook(url=f"{server.url}/drift").save("drift-drill", overwrite=True)
        yield server


def test_the_view_gives_each_workers_figures_per_night(nights: dict) -> None:
    with TraceStore(nights["db"], read_only=True) as store:
        rows = store.query("SELECT * FROM v_worker_nights ORDER BY started_at, worker_id").to_pylist()
        comments = {r["column_name"]: r["comment"] for r in store.query(
            "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'v_worker_nights'").to_pylist()}
    by = {(r["evaluation_id"], r["worker_id"]): r for r in rows}
    assert set(by) == {(e, w) for e in (nights["first"], nights["second"]) for w in WORKERS}
    for r in rows:
        assert r["questions"] == nights["questions"] and r["calls"] == nights["questions"] and r["simulated"]
        assert r["accuracy"] == r["correct"] / r["questions"] and r["failure_rate"] == 0.0
        assert r["mean_latency_s"] > 0
    first, second = (by[(nights[k], SWAPPED)]["accuracy"] for k in ("first", "second"))
    assert first - second > 0.3, (first, second)
    # the unchanged workers replay the same answers on the same questions
    for w in WORKERS[1:]:
        assert by[(nights["first"], w)]["correct"] == by[(nights["second"], w)]["correct"]
    assert all(comments.values()) and {"accuracy", "failure_rate", "mean_latency_s", "night"} <= set(comments)


def test_the_first_night_has_nothing_to_compare_and_sends_nothing(nights: dict, receiver: LoopbackServer) -> None:
    report = worker_drift_flow(nights["first"], db_path=nights["db"], webhook_block="drift-drill", config=NO_LATENCY)
    assert report.previous_evaluation_id is None and report.flagged == [] and not report.notified
    assert receiver.requests_to("/drift") == []


def test_the_swapped_worker_is_flagged_by_the_second_night_and_the_notification_arrives(
        nights: dict, receiver: LoopbackServer) -> None:
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    report = worker_drift_flow(nights["second"], db_path=nights["db"], webhook_block="drift-drill", config=NO_LATENCY)
    assert report.previous_evaluation_id == nights["first"]
    assert report.flagged == [SWAPPED]
    moved = [(s.worker_id, s.metric) for s in report.shifts if s.moved]
    assert moved == [(SWAPPED, "accuracy")], [s.text() for s in report.shifts]
    assert report.notified
    received = receiver.requests_to("/drift")
    assert len(received) == 1 and received[0].method == "POST"
    body = received[0].json
    assert body["flagged"] == [SWAPPED] and body["previous_evaluation_id"] == nights["first"]
    assert body["moved"][0]["metric"] == "accuracy" and body["moved"][0]["after"] < body["moved"][0]["before"]
    assert body["text"].startswith(f"worker drift{simulated_note(True)}: sim-generalist moved")
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["worker-drift"])))
    latest = max(artifacts, key=lambda a: a.created)
    assert "1 worker(s) moved: sim-generalist" in str(latest.data) and SIMULATED_BANNER in str(latest.data)


def test_no_notification_without_a_webhook_block(nights: dict, receiver: LoopbackServer) -> None:
    before = len(receiver.requests_to("/drift"))
    report = worker_drift_flow(nights["second"], db_path=nights["db"], webhook_block="no-such-block", config=NO_LATENCY)
    assert report.flagged == [SWAPPED] and not report.notified
    assert len(receiver.requests_to("/drift")) == before


# ---- the statistics alone ----

def test_a_change_inside_the_interval_or_too_small_or_for_the_better_is_not_flagged() -> None:
    same = [True, False] * 50
    assert bootstrap_change(same, same)[0] == 0.0
    worse = [True] * 30 + [False] * 70  # accuracy 0.5 -> 0.3: beyond the 99 % interval
    better = [True] * 70 + [False] * 30
    config = DriftConfig()
    assert flagged(worker_shifts({"w": WorkerSamples(correct=same)}, {"w": WorkerSamples(correct=worse)}, config)) == ["w"]
    assert flagged(worker_shifts({"w": WorkerSamples(correct=same)}, {"w": WorkerSamples(correct=better)}, config)) == []
    any_size = DriftConfig(min_change={})  # only the interval decides: still only the worse side
    assert flagged(worker_shifts({"w": WorkerSamples(correct=same)}, {"w": WorkerSamples(correct=better)},
                                 any_size)) == []
    assert flagged(worker_shifts({"w": WorkerSamples(correct=same)}, {"w": WorkerSamples(correct=worse)},
                                 any_size)) == ["w"]
    slightly = [True] * 48 + [False] * 52
    assert flagged(worker_shifts({"w": WorkerSamples(correct=same)}, {"w": WorkerSamples(correct=slightly)},
                                 config)) == []
    # a clear but tiny latency change (1 ms) is not a swapped model; half a second more is
    fast, slower, slow = [0.010] * 200, [0.011] * 200, [0.6] * 200
    spikes = [0.010] * 190 + [30.0] * 10  # a few very slow calls move the mean, not the median
    assert flagged(worker_shifts({"w": WorkerSamples(latency_s=fast)}, {"w": WorkerSamples(latency_s=slower)})) == []
    assert flagged(worker_shifts({"w": WorkerSamples(latency_s=fast)}, {"w": WorkerSamples(latency_s=slow)})) == ["w"]
    assert flagged(worker_shifts({"w": WorkerSamples(latency_s=fast)}, {"w": WorkerSamples(latency_s=spikes)})) == []
    # failures: 0 % -> 30 % of attempts
    flaky = [True] * 60 + [False] * 140
    assert flagged(worker_shifts({"w": WorkerSamples(failed=[False] * 200)}, {"w": WorkerSamples(failed=flaky)})) == ["w"]
    # a worker only one night has is not compared
    assert worker_shifts({"a": WorkerSamples(correct=same)}, {"b": WorkerSamples(correct=worse)}) == []
