"""What an evaluation reports beyond the table: an MLflow run (metrics per method x benchmark, the
plots, the tables), a Prefect markdown artifact linking them, the Conductor's own generation cost
($/GPU-hour x generation time), and one warning when the prices used are old. Real Prefect (the
session's server), real DuckDB, real MLflow (SQLite under the test's CONDUCTOR_HOME), a real tiny
transformers model as the Conductor."""

from __future__ import annotations

import asyncio
import re
from datetime import date
from pathlib import Path

import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

from conductor.data.synthetic import generate_bank
from conductor.evaluation.config import EvalConfig
from conductor.simulation import SIMULATED_BANNER, simulated_note
from flows.evaluation import evaluation_flow  # at collection, as the other flow tests (Prefect's logging)
from tests.local_pool import local_pool
from warehouse import evaluation as wh
from warehouse.store import TraceStore

REPO = Path(__file__).resolve().parent.parent
RATE = 3600.0  # $/GPU-hour: $1 per second of generation, so cost == seconds


@pytest.fixture(scope="module")
def reported(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from conductor.cli.main import app
    from conductor.models.tiny import build_tiny_causal_lm

    d = tmp_path_factory.mktemp("report")
    tiny = build_tiny_causal_lm(d / "tiny", seed=0)
    pool = local_pool(latency_ms=5)
    pool["prices_checked"] = "2020-01-01"  # long ago: the run must warn, once
    (d / "pool.yaml").write_text(yaml.safe_dump(pool))
    bank = generate_bank(60, seed=4)
    problems = [p for p in bank if p.domain == "math"][:3] + [p for p in bank if p.domain == "choice"][:3]
    (d / "p.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in problems))
    # the flow itself, not through CliRunner: a flow run inside a CliRunner can leave Prefect's
    # console handler on a stream the runner closes, which breaks a later test's flow logging
    import logging

    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Collect()
    logging.getLogger("prefect").addHandler(handler)
    try:
        result = evaluation_flow(EvalConfig(
            methods=["single:sim-small", "moa", f"conductor:{tiny}"], problems_file=d / "p.jsonl",
            pool_file=d / "pool.yaml", out_dir=d / "out", limit_per_benchmark=1, conductor_usd_per_gpu_hour=RATE),
            db_path=str(d / "wh.duckdb"))
    finally:
        logging.getLogger("prefect").removeHandler(handler)
    eval_id = result.evaluation_id
    output = "\n".join(seen)
    return {"dir": d, "output": output, "id": eval_id, "app": app, "tiny": tiny, "result": result}


def test_old_prices_warn_once_per_evaluation(reported: dict) -> None:
    assert len(reported["result"].warnings) == 1
    assert reported["output"].count("were checked on 2020-01-01") == 1  # logged once by the flow
    assert "warning: prices of sim-generalist, sim-coder" not in reported["output"]  # sorted by date, then id
    assert re.search(r"warning: prices of [\w, -]*sim-small[\w, -]* were checked on 2020-01-01", reported["output"])


def test_baselines_get_the_evaluations_questions_in_flight_and_a_conductor_the_profiles(reported: dict) -> None:
    """--questions-in-flight (default 64) reaches every baseline's run; a conductor: method keeps
    the profile's execution.questions_in_flight (a local Conductor writes one workflow at a time)."""
    from conductor.config import load_settings

    profile = load_settings(profile="local").execution.questions_in_flight
    with TraceStore(reported["dir"] / "wh.duckdb") as store:
        rows = store.query("SELECT params->>'spec' AS spec, params->'execution'->>'questions_in_flight' AS n FROM runs"
                           " WHERE params->>'evaluation_id' = ? ORDER BY spec", [reported["id"]]).to_pylist()
    by_spec = {r["spec"].split(":")[0]: int(r["n"]) for r in rows}
    default = EvalConfig.model_fields["questions_in_flight"].default
    assert by_spec == {"conductor": profile, "moa": default, "single": default} and default != profile


def test_fresh_and_undated_prices_do_not_warn() -> None:
    from conductor.evaluation.prices import stale_prices
    from conductor.workers.pool import read_pool_file

    local = read_pool_file(REPO / "deployments" / "pools" / "local.yaml")
    dates = local.price_dates
    assert set(dates.values()) == {str(local.prices_checked)} and local.prices_checked is not None
    assert stale_prices(dates, local.prices_checked, 180) is None
    assert stale_prices(dates, date.fromordinal(local.prices_checked.toordinal() + 181), 180) is not None
    paper = read_pool_file(REPO / "deployments" / "pools" / "paper-sim.yaml").price_dates
    assert paper["gpt-5"] == "2025-09-15"  # from the price table, not the file
    assert paper["qwen3-32b-direct"] == str(read_pool_file(REPO / "deployments" / "pools" / "paper-sim.yaml").prices_checked)


def _mlflow_run(eval_id: str):  # noqa: ANN202
    import mlflow

    from registry.evaluation import EXPERIMENT
    from registry.store import tracking_uri

    mlflow.set_tracking_uri(tracking_uri())
    exp = mlflow.get_experiment_by_name(EXPERIMENT)
    runs = mlflow.search_runs([exp.experiment_id], filter_string=f"tags.`conductor.evaluation_id` = '{eval_id}'",
                              output_format="list")
    assert len(runs) == 1
    return runs[0]


def test_the_evaluation_is_an_mlflow_run_with_metrics_tables_and_plots(reported: dict) -> None:
    import mlflow

    from registry.runs import metric_key

    run = _mlflow_run(reported["id"])
    assert run.data.tags["conductor.simulated"] == "true" and run.info.run_name.endswith("-simulated")
    with TraceStore(reported["dir"] / "wh.duckdb") as store:
        scores = wh.repeat_scores(store, reported["id"])
    assert len(scores) == 3 * 2  # methods x benchmarks, one repeat
    for s in scores:
        key = metric_key(f"accuracy/{s['benchmark']}/{s['method']}")
        assert run.data.metrics[key] == pytest.approx(s["correct"] / s["questions"])
    client = mlflow.MlflowClient()
    plots = {a.path: a.file_size for a in client.list_artifacts(run.info.run_id, "plots")}
    assert set(plots) == {f"plots/{n}" for n in ("accuracy_vs_cost.png", "benchmark_bars.png", "worker_usage.png",
                                                 "workflow_lengths.png")}
    local = Path(client.download_artifacts(run.info.run_id, "plots/benchmark_bars.png", str(reported["dir"] / "dl")))
    with Image.open(local) as im:
        assert im.size == (800, 500)
    table = Path(client.download_artifacts(run.info.run_id, "results.md", str(reported["dir"] / "dl")))
    assert table.read_text() == (reported["dir"] / "out" / "results.md").read_text()
    assert "Conductor's own $" in Path(client.download_artifacts(run.info.run_id, "costs.md",
                                                                 str(reported["dir"] / "dl"))).read_text()


def test_the_prefect_artifact_links_table_costs_plots_and_mlflow_run(reported: dict) -> None:
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    async def latest() -> list:
        async with get_client() as client:
            return await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["evaluation-results"])))

    arts = [a for a in asyncio.run(latest()) if reported["id"] in (a.description or "")]
    assert len(arts) == 1
    md = arts[0].data
    run = _mlflow_run(reported["id"])
    assert md.startswith(f"**{SIMULATED_BANNER}**") and "| method | synthetic_choice | synthetic_math | avg | $/question |" in md
    assert f"Cost per method{simulated_note(True)}" in md and f"MLflow run: `{run.info.run_id}`" in md
    for name in ("accuracy_vs_cost.png", "benchmark_bars.png", "worker_usage.png", "workflow_lengths.png"):
        assert f"]({(reported['dir'] / 'out' / name).resolve().as_uri()})" in md


def test_the_conductors_generation_is_priced_per_gpu_hour_and_shown_apart(reported: dict) -> None:
    with TraceStore(reported["dir"] / "wh.duckdb") as store:
        rows = store.query("""SELECT c.cost_usd, c.latency_s FROM calls c JOIN runs r USING (run_id)
                              WHERE r.params->>'evaluation_id' = ? AND c.role = 'conductor'
                              AND r.method LIKE 'model:%'""",
                           [reported["id"]]).to_pylist()
        own = sum(r["cost_usd"] for r in rows)
        method_cost = sum(r["cost_usd"] for r in wh.costs_by_benchmark(store, reported["id"])
                          if r["method"].startswith("model:"))
    assert len(rows) == 2 and all(r["cost_usd"] == pytest.approx(r["latency_s"] * RATE / 3600) for r in rows)
    assert own > 0 and method_cost >= own  # counted in the method's cost
    res = CliRunner().invoke(reported["app"], ["costs", "--run", reported["id"], "--db",
                                               str(reported["dir"] / "wh.duckdb")])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("the Conductor's own generation"))
    assert f"${own:.4f}" in line and "single-sim-small" not in line


async def test_gpu_hour_planner_times_one_generation_at_a_time(monkeypatch) -> None:  # noqa: ANN001
    from conductor.evaluation import conductor_cost
    from conductor.evaluation.conductor_cost import GpuHourPlanner
    from conductor.planners import ScriptedPlanner
    from tests.virtual_time import VirtualTime

    clock = VirtualTime()  # the planner's perf_counter; each generation takes 2 s of it
    monkeypatch.setattr(conductor_cost, "time", clock)
    events: list[str] = []

    class Generating(ScriptedPlanner):
        async def plan(self, messages, offered):  # noqa: ANN001, ANN201
            events.append("start")
            await asyncio.sleep(0)  # the others get their turn to start, if nothing holds them
            clock.now += 2.0
            events.append("end")
            return await super().plan(messages, offered)

    planner = GpuHourPlanner(Generating(["x"]), usd_per_gpu_hour=7200.0)  # $2 per second
    outs = await asyncio.gather(*(planner.plan([], []) for _ in range(3)))
    assert events == ["start", "end"] * 3  # one at a time
    # each is billed its own 2 s of generation, not the time it waited for the GPU
    assert [(c.usage.latency_s, c.usage.cost_usd) for c in outs] == [(2.0, 4.0)] * 3


def test_conductor_pricing_choices_are_exclusive(tmp_path: Path) -> None:
    from conductor.evaluation.methods import MethodSpecError, method_from_spec
    from conductor.types import Prices

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(MethodSpecError, match="not both"):
        method_from_spec(f"conductor:{tmp_path}", REPO / "deployments" / "pools" / "local.yaml",
                         conductor_usd_per_gpu_hour=1.0, conductor_prices=Prices(input=1, output=1))


def test_mlflow_is_opened_while_the_calls_run(prefect_harness: Path, tmp_path: Path, monkeypatch) -> None:
    """MLflow's import and store check (seconds in a fresh process) overlap the calls: the
    evaluation's experiment is opened while its one call is still in flight (the call waits for
    it, so the order does not depend on how fast either is), on its own thread, and opened again
    by the logging itself."""
    import threading

    import registry.evaluation as reg
    from conductor.workers.simulated.worker import SimulatedWorker

    opened: list[str] = []  # the thread that opened the store, each time
    store_open = threading.Event()
    real = reg.open_evaluation_store

    def open_store(uri=None):  # noqa: ANN001, ANN202
        opened.append(threading.current_thread().name)
        out = real(uri)
        store_open.set()
        return out

    monkeypatch.setattr(reg, "open_evaluation_store", open_store)
    seen_in_flight: list[bool] = []
    complete = SimulatedWorker.complete

    async def waiting_complete(self, *args, **kwargs):  # noqa: ANN001, ANN202
        # a hang guard, not a speed bound: without the early thread nothing opens the store now
        seen_in_flight.append(await asyncio.to_thread(store_open.wait, 120))
        return await complete(self, *args, **kwargs)

    monkeypatch.setattr(SimulatedWorker, "complete", waiting_complete)
    problem = next(p for p in generate_bank(20, seed=4) if p.domain == "math")
    (tmp_path / "p.jsonl").write_text(problem.model_dump_json() + "\n")
    result = evaluation_flow(EvalConfig(methods=["single:sim-small"], problems_file=tmp_path / "p.jsonl",
                                        pool_file=REPO / "deployments" / "pools" / "local.yaml",
                                        out_dir=tmp_path / "out"), db_path=str(tmp_path / "wh.duckdb"))
    assert seen_in_flight == [True]
    assert len(opened) == 2 and opened[0] == "mlflow-open" and opened[1] != "mlflow-open"
    assert result.mlflow_run is not None and _mlflow_run(result.evaluation_id).info.status == "FINISHED"


def test_only_a_local_mlflow_store_is_opened_early(monkeypatch, tmp_path: Path) -> None:
    """A tracking server is left to `log_evaluation`: an unreachable one would hold the early
    thread, and the process's exit, through MLflow's HTTP retries."""
    import registry.evaluation as reg

    opened: list[str] = []
    monkeypatch.setattr(reg, "open_evaluation_store", lambda uri=None: opened.append(uri))
    for uri in ("http://127.0.0.1:9", f"sqlite:///{tmp_path / 'mlflow.db'}", str(tmp_path / "mlruns")):
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        reg.prepare_evaluation_store()
    assert opened == [f"sqlite:///{tmp_path / 'mlflow.db'}", str(tmp_path / "mlruns")]
