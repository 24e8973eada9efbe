"""The outage drill (issue 35, "Done when"): the nightly's evaluation stage (`evaluation_flow`,
as `flows/nightly.py` runs it, under the session's Prefect test server and a real DuckDB file)
over three loopback `openai_compatible` workers, one of which returns 503 all night. The
evaluation completes, every step given to the down worker is answered by a fallback (the trace
and the warehouse show who was asked and who answered), the breaker opens after the configured
failures so the down worker stops being called, and the summary names the outage. Then the same
evaluation with the down worker opted out (`exclude`) never calls it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conductor.data.schema import Problem
from conductor.evaluation.config import EvalConfig
from tests.loopback import LoopbackServer, Reply, openai_chat, openai_error
from warehouse.store import TraceStore

QUESTIONS = 6
RETRIES, BREAKER_FAILURES = 1, 2
DOWN = "w0"


def outage_settings(mp: pytest.MonkeyPatch) -> None:
    """The night's execution settings (the profile's, from the environment): few retries, no backoff."""
    for name, value in {"MAX_RETRIES": RETRIES, "BACKOFF_BASE_S": 0, "BACKOFF_MAX_S": 0,
                        "BREAKER_FAILURES": BREAKER_FAILURES, "BREAKER_COOLDOWN_S": 3600}.items():
        mp.setenv(f"CONDUCTOR_EXECUTION__{name}", str(value))


def outage_pool(loop: LoopbackServer, path: Path) -> Path:
    """Three loopback workers: DOWN answers 503 all night, w1 and w2 answer 42."""
    loop.on(f"/{DOWN}/v1/chat/completions", lambda r: Reply(503, openai_error(503, "down all night")))
    for w in ("w1", "w2"):
        loop.on(f"/{w}/v1/chat/completions", lambda r: Reply(body=openai_chat("The answer is 42.")))
    path.write_text(f"name: {path.stem}\nworkers:\n" + "".join(
        f"  - {{id: {w}, provider: openai_compatible, model: m-{w}, prices: {{input: 1.0, output: 2.0}},"
        f" options: {{base_url: \"{loop.url}/{w}/v1\"}}}}\n" for w in (DOWN, "w1", "w2")))
    return path


@pytest.fixture(scope="module")
def drill(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    from flows.evaluation import evaluation_flow

    d = tmp_path_factory.mktemp("outage-drill")
    problems = [Problem(id=Problem.make_id("drill", i), source="drill", domain="math",
                        question=f"What is {i} + {42 - i}?", answer="42") for i in range(QUESTIONS)]
    (d / "problems.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in problems))
    mp = pytest.MonkeyPatch()
    outage_settings(mp)
    try:
        with LoopbackServer() as loop:
            pool = outage_pool(loop, d / "outage-drill.yaml")

            def night(name: str, **extra: object):  # noqa: ANN202
                # One question at a time: the breaker's count is then exact (in parallel, every
                # question in flight when it opens has already called the down worker).
                cfg = EvalConfig(methods=["template:fanout"], problems_file=d / "problems.jsonl", pool_file=pool,
                                 out_dir=d / name, log_to_mlflow=False, questions_in_flight=1, **extra)
                return evaluation_flow(cfg, db_path=str(d / "wh.duckdb"))

            outage = night("outage")
            seen_down = len(loop.requests_to(f"/{DOWN}/v1/chat/completions"))
            excluded = night("excluded", exclude=[DOWN])
            calls = {w: len(loop.requests_to(f"/{w}/v1/chat/completions")) for w in (DOWN, "w1", "w2")}
        yield {"outage": outage, "excluded": excluded, "seen_down": seen_down, "calls": calls, "db": d / "wh.duckdb"}
    finally:
        mp.undo()


def _steps(db: Path, evaluation_id: str) -> list[dict]:
    with TraceStore(db, read_only=True) as store:
        return store.query(
            "SELECT s.worker_id, s.answered_by, s.status, s.call_id IS NULL AS not_called, s.fallback_reason,"
            " s.trace_id FROM steps s JOIN runs r USING (run_id) WHERE r.params->>'evaluation_id' = ?",
            [evaluation_id]).to_pylist()


def test_the_night_completes_and_every_affected_step_is_answered_by_a_fallback(drill) -> None:  # noqa: ANN001
    outage = drill["outage"]
    steps = _steps(drill["db"], outage.evaluation_id)
    affected = [s for s in steps if s["worker_id"] == DOWN]
    # template:fanout: w0 makes the first attempt and aggregates, so two steps a question are its
    assert len(affected) == 2 * QUESTIONS
    assert all(s["status"] == "ok" and s["answered_by"] == "w1" and s["fallback_reason"] for s in affected)
    assert all(s["answered_by"] == s["worker_id"] for s in steps if s["worker_id"] != DOWN)
    with TraceStore(drill["db"], read_only=True) as store:
        answers = store.query("SELECT t.answer, t.correct FROM traces t JOIN runs r USING (run_id)"
                              " WHERE r.params->>'evaluation_id' = ? AND t.depth = 0",
                              [outage.evaluation_id]).to_pylist()
        trace = store.get_trace(affected[0]["trace_id"])
    assert len(answers) == QUESTIONS and all(a["correct"] for a in answers)
    assert trace is not None
    final = trace.steps[-1]  # the aggregator step: asked of w0, answered by w1, both calls kept
    assert (final.worker_id, final.answered_by) == (DOWN, "w1") and final.fallback_call is not None


def test_the_breaker_opens_after_the_configured_failures(drill) -> None:  # noqa: ANN001
    assert drill["seen_down"] == BREAKER_FAILURES * (1 + RETRIES)
    not_called = [s for s in _steps(drill["db"], drill["outage"].evaluation_id) if s["worker_id"] == DOWN
                  and s["not_called"]]
    assert len(not_called) == 2 * QUESTIONS - BREAKER_FAILURES
    assert all("circuit breaker open" in s["fallback_reason"] for s in not_called)


def test_the_summary_names_the_outage(drill) -> None:  # noqa: ANN001
    assert drill["outage"].outages == [
        f"outage: worker {DOWN} down for {2 * QUESTIONS} steps ({2 * QUESTIONS - BREAKER_FAILURES} not called:"
        " breaker open), answered by w1 (template-fanout@outage-drill)"]


def test_an_excluded_worker_is_never_called_in_an_evaluation(drill) -> None:  # noqa: ANN001
    assert drill["calls"][DOWN] == drill["seen_down"]  # the second evaluation sent it nothing
    steps = _steps(drill["db"], drill["excluded"].evaluation_id)
    assert len(steps) == 4 * QUESTIONS and DOWN not in {s["worker_id"] for s in steps}
    assert drill["excluded"].outages == []


# ---- the whole night: training, evaluation, gate and summary over the same three workers ----

@pytest.fixture(scope="module")
def outage_night(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """One nightly (`nightly_flow`: curation, a tiny training run, the evaluation, costs, the gate,
    the summary) whose pool is the three loopback workers, w0 returning 503 all night."""
    import uuid

    from flows.nightly import NightConfig, nightly_flow
    from tests.test_nightly import TINY

    d = tmp_path_factory.mktemp("outage-night")
    mp = pytest.MonkeyPatch()
    mp.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{d / 'mlflow.db'}")
    outage_settings(mp)
    try:
        with LoopbackServer() as loop:
            pool = outage_pool(loop, d / "outage-night.yaml")
            summary = nightly_flow(NightConfig(pool_file=pool, steps=1, chunk_steps=1, heldout_problems=4, baselines=[],
                                               training_overrides=TINY, concurrency=2, db_path=str(d / "wh.duckdb"),
                                               run_key=f"outage-{uuid.uuid4().hex[:8]}"))
        yield {"summary": summary, "db": d / "wh.duckdb"}
    finally:
        mp.undo()


def test_a_night_with_a_worker_down_completes_answered_by_fallbacks_and_its_summary_names_the_outage(
        outage_night) -> None:  # noqa: ANN001
    s = outage_night["summary"]
    assert s.trained.version and s.decision.promotion_id  # trained, evaluated, gated: the night completed
    steps = _steps(outage_night["db"], s.evaluated.evaluation_id)
    affected = [x for x in steps if x["worker_id"] == DOWN]
    assert affected  # the template baseline's fan-out gives w0 two steps a question
    assert all(x["status"] == "ok" and x["answered_by"] in ("w1", "w2") and x["fallback_reason"] for x in affected)
    assert s.evaluated.outages and all(line.startswith(f"outage: worker {DOWN} down for") for line in s.evaluated.outages)
    for line in s.evaluated.outages:  # the night's summary (the Prefect artifact's markdown) names it
        assert f"\n- {line}" in s.report.results_markdown
