"""`conductor eval` end to end on a small problem file: real Prefect (the session's test
server), a real DuckDB file, the simulated pool; then `conductor costs` and `conductor plot`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from conductor.data.synthetic import generate_bank
from conductor.simulation import SIMULATED_BANNER, simulated_note
from warehouse import evaluation as wh
from warehouse.store import TraceStore

METHODS = ["single:sim-small", "moa", "reflect:sim-generalist", "oracle"]


@pytest.fixture(scope="module")
def evaluated(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from conductor.cli.main import app

    d = tmp_path_factory.mktemp("eval")
    problems = [p for p in generate_bank(60, seed=9) if p.domain in ("math", "choice")][:16]
    (d / "p.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in problems))
    args = ["eval", "--problems", str(d / "p.jsonl"), "--repeats", "2", "--db", str(d / "wh.duckdb"),
            "--out", str(d / "out")]
    for m in METHODS:
        args += ["-m", m]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    eval_id = re.search(r"^evaluation ([0-9a-f]{32})", res.output, re.M).group(1)  # type: ignore[union-attr]
    return {"dir": d, "output": res.output, "id": eval_id, "problems": problems, "app": app}


def test_eval_prints_a_table_7_shaped_table_labelled_simulated(evaluated: dict) -> None:
    out = evaluated["output"]
    assert f"evaluation {evaluated['id']}{simulated_note(True)}" in out and f"**{SIMULATED_BANNER}**" not in out
    assert out.count(SIMULATED_BANNER) == 3  # the evaluation's line, the table's caption, the cost table's title
    assert "| method | synthetic_choice | synthetic_math | avg | $/question |" in out
    for name in ("single-sim-small", "moa", "reflect-sim-generalist", "oracle"):
        assert f"| {name}@local-simulated | " in out
    assert "Paired differences against single-sim-small@local-simulated" in out  # the first method given
    assert (evaluated["dir"] / "out" / "results.md").read_text().splitlines()[0] in out


def test_every_method_repeat_and_question_is_recorded(evaluated: dict) -> None:
    with TraceStore(evaluated["dir"] / "wh.duckdb") as store:
        runs = wh.runs_of(store, evaluated["id"])
        assert len(runs) == 1 + len(METHODS) * 2 and all(r["status"] == "finished" for r in runs)
        scores = wh.repeat_scores(store, evaluated["id"])
        assert {(s["method"].split("@")[0], s["repeat"]) for s in scores} == {
            (m, r) for m in ("single-sim-small", "moa", "reflect-sim-generalist", "oracle") for r in (0, 1)}
        assert sum(s["questions"] for s in scores) == len(METHODS) * 2 * len(evaluated["problems"])
        # repeats draw fresh worker luck: some question's verdict differs between a method's two repeats
        differing = store.query("""
            SELECT count(*) FROM (SELECT r.method, q.problem_id, count(DISTINCT q.correct) AS verdicts
                                  FROM v_questions q JOIN runs r USING (run_id)
                                  WHERE r.params->>'evaluation_id' = ? GROUP BY ALL) WHERE verdicts > 1""",
                                [evaluated["id"]]).column(0)[0].as_py()
        assert differing > 0


def test_cost_sums_equal_the_stored_call_costs(evaluated: dict) -> None:
    with TraceStore(evaluated["dir"] / "wh.duckdb") as store:
        total = wh.calls_cost_total(store, evaluated["id"])
        assert total > 0
        n = wh.fill_costs(store, evaluated["id"])
        assert wh.fill_costs(store, evaluated["id"]) == n  # idempotent: recomputed, never added to
        table_sum = store.query("SELECT sum(cost_usd) FROM costs").column(0)[0].as_py()
        by_worker = sum(r["cost_usd"] for r in wh.costs_by_worker(store, evaluated["id"]))
        by_bench = wh.costs_by_benchmark(store, evaluated["id"])
        assert table_sum == pytest.approx(total) and by_worker == pytest.approx(total)
        assert sum(r["cost_usd"] for r in by_bench) == pytest.approx(total)
        calls = store.query("SELECT count(*) FROM calls").column(0)[0].as_py()
        assert sum(r["calls"] for r in wh.costs_by_worker(store, evaluated["id"])) == calls
        for r in by_bench:
            assert r["usd_per_correct"] == pytest.approx(r["cost_usd"] / r["correct"])


def test_costs_command_reports_the_total_and_warns_on_old_prices(evaluated: dict) -> None:
    app = evaluated["app"]
    res = CliRunner().invoke(app, ["costs", "--run", evaluated["id"], "--db", str(evaluated["dir"] / "wh.duckdb")])
    assert res.exit_code == 0, res.output
    with TraceStore(evaluated["dir"] / "wh.duckdb") as store:
        total = wh.calls_cost_total(store, evaluated["id"])
        # a run whose prices were checked long ago warns (once)
        store.con.execute("UPDATE runs SET params = json_merge_patch(params, ?) WHERE params->>'evaluation_id' = ?",
                          [json.dumps({"prices_checked": {"sim-small": "2020-01-01"}}), evaluated["id"]])
    assert f"${total:.4f} over " in res.output and SIMULATED_BANNER in res.output
    assert "warning: prices" not in res.output
    old = CliRunner().invoke(app, ["costs", "--run", evaluated["id"], "--db", str(evaluated["dir"] / "wh.duckdb")])
    assert old.output.count("warning: prices of sim-small were checked on 2020-01-01") == 1
    missing = CliRunner().invoke(app, ["costs", "--run", "nope", "--db", str(evaluated["dir"] / "wh.duckdb")])
    assert missing.exit_code == 2 and "no run or evaluation 'nope'" in missing.output


def test_plot_command_writes_every_png(evaluated: dict) -> None:
    out = evaluated["dir"] / "plots"
    res = CliRunner().invoke(evaluated["app"], ["plot", evaluated["id"], "--out", str(out),
                                                "--db", str(evaluated["dir"] / "wh.duckdb")])
    assert res.exit_code == 0, res.output
    for name in ("accuracy_vs_cost.png", "benchmark_bars.png", "worker_usage.png", "workflow_lengths.png"):
        with Image.open(out / name) as im:
            assert im.size == (800, 500) and len(set(im.convert("L").getdata())) > 10


def test_a_bad_method_is_one_clear_line(prefect_harness: Path, tmp_path: Path) -> None:
    from conductor.cli.main import app

    res = CliRunner().invoke(app, ["eval", "-m", "single:gpt-9", "--problems", str(tmp_path / "none.jsonl")])
    assert res.exit_code == 2 and "no such file" in res.output
    (tmp_path / "p.jsonl").write_text(generate_bank(4, seed=1)[0].model_dump_json() + "\n")
    res = CliRunner().invoke(app, ["eval", "-m", "single:gpt-9", "--problems", str(tmp_path / "p.jsonl"),
                                   "--db", str(tmp_path / "wh.duckdb")])
    assert res.exit_code == 2 and "no worker 'gpt-9'" in res.output


@pytest.mark.parametrize("simulated", [True, False])
def test_plot_of_a_training_run_draws_its_curves(tmp_path: Path, plot_titles: list, simulated: bool) -> None:
    from conductor.cli.main import app
    from warehouse.records import Run

    db = tmp_path / "wh.duckdb"
    with TraceStore(db) as store:
        store.write_runs([Run(run_id="train-1", kind="train", status="finished", simulated=simulated)])
        for step in range(5):
            store.write_training_metrics("train-1", step, {"reward": 0.5 + step / 10, "parse_rate": 0.9,
                                                           "accuracy": 0.3 + step / 20})
    res = CliRunner().invoke(app, ["plot", "train-1", "--out", str(tmp_path / "p"), "--db", str(db)])
    assert res.exit_code == 0, res.output
    with Image.open(tmp_path / "p" / "training_curves.png") as im:
        assert im.size == (800, 500) and len(set(im.convert("L").getdata())) > 10
    assert plot_titles == [("Training curves", simulated)]  # labelled as its run is


def test_plot_of_a_run_with_nothing_to_plot_says_so(tmp_path: Path) -> None:
    from conductor.cli.main import app
    from warehouse.records import Run

    db = tmp_path / "wh.duckdb"
    with TraceStore(db) as store:
        store.write_runs([Run(run_id="empty", kind="eval", status="finished")])
    res = CliRunner().invoke(app, ["plot", "empty", "--out", str(tmp_path / "p"), "--db", str(db)])
    assert res.exit_code == 2 and "nothing" not in res.output and "no judged questions" in res.output


def test_plot_of_a_run_whose_questions_have_no_verdict_says_so(tmp_path: Path) -> None:
    """Questions that ended without a verdict have an unknown accuracy: neither a crash nor 0 %."""
    from conductor.cli.main import app
    from conductor.trace import Trace
    from warehouse.records import Run

    db = tmp_path / "wh.duckdb"
    with TraceStore(db) as store:
        store.write_runs([Run(run_id="unjudged", kind="eval", status="finished", method="single:x")])
        store.write_traces([Trace(run_id="unjudged", problem_id=f"p{i}", source="s", domain="math") for i in range(3)])
    res = CliRunner().invoke(app, ["plot", "unjudged", "--out", str(tmp_path / "p"), "--db", str(db)])
    assert res.exit_code == 2 and "no judged questions" in res.output, res.output
    assert not (tmp_path / "p" / "accuracy_vs_cost.png").exists()
