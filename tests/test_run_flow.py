"""The main job as a Prefect flow: curated eval sets solved and everything recorded in DuckDB."""

from __future__ import annotations

from warehouse.store import TraceStore


def test_run_flow_records_runs_problems_traces_and_its_summary(prefect_harness, tmp_path):
    from conductor.methods import Method
    from conductor.planners import TemplatePlanner
    from flows.run import run_flow

    db = tmp_path / "wh.duckdb"
    method = Method(TemplatePlanner("verify"), "deployments/pools/local.yaml")
    summary = run_flow(method=method, limit_per_source=2, db_path=str(db))
    by = {s["benchmark"]: s for s in summary}
    assert set(by) == {"aime25", "bigcodebench", "gpqa_diamond", "lcb_v6", "math500", "mmlu_test"}
    assert all(s["questions"] == 2 and s["parsed"] == 1.0 and s["simulated"] for s in summary)
    assert all(s["method"] == "template-verify@local-simulated" for s in summary)
    with TraceStore(db) as store:
        runs = store.query("SELECT status, method, simulated, params->>'$.problems' AS n FROM runs").to_pylist()
        assert runs == [{"status": "finished", "method": "template-verify@local-simulated", "simulated": True, "n": "12"}]
        traces = store.query("SELECT count(*) AS n, count(DISTINCT problem_id) AS p FROM traces WHERE depth = 0").to_pylist()[0]
        assert traces == {"n": 12, "p": 12}
        assert store.query("SELECT count(*) AS n FROM steps").to_pylist()[0]["n"] == 24  # 2 steps each
        # the trace carried its source and domain: the stored rows agree with the problems table
        mismatched = store.query("SELECT count(*) AS n FROM traces t JOIN problems p USING (problem_id)"
                                 " WHERE t.source <> p.source OR t.domain <> p.domain").to_pylist()[0]["n"]
        assert mismatched == 0
        lb = store.query("SELECT sum(questions) AS q, bool_and(simulated) AS sim FROM v_leaderboard"
                         " WHERE method = 'template-verify@local-simulated'").to_pylist()[0]
        assert lb == {"q": 12, "sim": True}


def test_conductor_run_creates_a_missing_prefect_home(tmp_path, monkeypatch):
    from flows.cli import ensure_prefect_home

    target = tmp_path / "fresh" / "conductor-home" / "prefect"
    monkeypatch.setenv("PREFECT_HOME", str(target))
    ensure_prefect_home()
    assert target.is_dir()
