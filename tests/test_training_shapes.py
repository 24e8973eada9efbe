"""Strategies over training (the paper's Figure 3): the warehouse's `v_training_shapes` over
rollouts the training sink stored, against a hand count."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from conductor.trace import Trace
from conductor.verify.verdict import Verdict
from conductor.workflow import parse
from tasks.training_sink import WarehouseSink
from warehouse.store import TraceStore

DOMAIN_SOURCE = {"math": "MATH", "choice": "MMLU"}
SINGLE = 'model_id = [0]\nsubtasks = ["Solve it."]\naccess_list = [[]]'
VERIFY = 'model_id = [0, 0]\nsubtasks = ["Solve it.", "Check the answer above."]\naccess_list = [[], [0]]'
FAN = ('model_id = [0, 1, 2, 0]\nsubtasks = ["Solve.", "Solve.", "Solve.", "Compare the answers above."]\n'
       'access_list = [[], [], [], [0, 1, 2]]')


def rollout(domain: str, text: str | None, **kw: object) -> Trace:
    about = {"problem_id": f"p-{domain}", "source": DOMAIN_SOURCE[domain], "domain": domain}
    if text is None:
        return Trace(**about, parse_status="missing_list", **kw)
    # verified, as a rollout the reward scored is
    return Trace(**about, workflow=parse(text, 3), verdict=Verdict(correct=True, method="test"), **kw)


def test_shares_per_domain_and_step_match_a_hand_count(tmp_path) -> None:
    sink = WarehouseSink(tmp_path / "wh.duckdb", tmp_path / "staging", run_id="train-x", simulated=True)
    step0 = [rollout("math", SINGLE), rollout("math", SINGLE), rollout("math", FAN), rollout("choice", None)]
    first = rollout("math", FAN)
    step1 = [first, rollout("math", FAN), rollout("math", VERIFY), rollout("choice", SINGLE), rollout("choice", FAN),
             # a recursion round belongs to its first round's rollout: not counted again
             rollout("math", SINGLE, parent_trace_id=first.trace_id, depth=1)]
    for step, traces in ((0, step0), (1, step1)):
        for t in traces:
            sink(t, step)
    sink.close()
    with TraceStore(tmp_path / "wh.duckdb", read_only=True) as store:
        rows = store.query("SELECT step, domain, shape, rollouts, share, mean_steps FROM v_training_shapes"
                           " WHERE run_id = 'train-x' ORDER BY step, domain, shape").to_pylist()
    got = {(r["step"], r["domain"], r["shape"]): (r["rollouts"], r["share"], r["mean_steps"]) for r in rows}
    # Counted by hand: step 0 math = single, single, fan (steps 1 + 1 + 4); choice = unparsed (0 steps).
    # Step 1 math = fan, fan, verify (4 + 4 + 2); choice = single, fan (1 + 4).
    assert got == {
        (0, "choice", "unparsed"): (1, 1.0, 0.0),
        (0, "math", "fan_out_aggregate"): (1, pytest.approx(1 / 3), 2.0),
        (0, "math", "single"): (2, pytest.approx(2 / 3), 2.0),
        (1, "choice", "fan_out_aggregate"): (1, 0.5, 2.5),
        (1, "choice", "single"): (1, 0.5, 2.5),
        (1, "math", "fan_out_aggregate"): (2, pytest.approx(2 / 3), pytest.approx(10 / 3)),
        (1, "math", "verify_refine"): (1, pytest.approx(1 / 3), pytest.approx(10 / 3)),
    }


ORANGE = (255, 127, 14)  # tab:orange, fan_out_aggregate's colour
PURPLE = (148, 103, 189)  # tab:purple, chain's colour: no rollout here was a chain


def _pixels(png: Path, colour: tuple[int, int, int]) -> int:
    with Image.open(png) as im:
        assert im.size[0] >= 800 and im.size[1] >= 500
        return sum(1 for px in im.convert("RGB").getdata() if px == colour)


@pytest.mark.parametrize("simulated", [True, False])
def test_conductor_plot_draws_a_training_runs_strategies(tmp_path: Path, plot_titles: list, simulated: bool) -> None:
    from conductor.cli.main import app

    # A sink that names its run writes its row (kind train, simulated or not), which the plot reads.
    sink = WarehouseSink(tmp_path / "wh.duckdb", tmp_path / "staging", simulated=simulated)
    for step in range(4):  # single gives way to 3 attempts + an aggregator
        for k in range(4):
            sink(rollout("math", FAN if k < step else SINGLE), step)
            sink(rollout("choice", VERIFY if k < step else None), step)
    sink.close()
    res = CliRunner().invoke(app, ["plot", sink.run_id, "--out", str(tmp_path / "p"), "--db", str(tmp_path / "wh.duckdb")])
    assert res.exit_code == 0, res.output
    png = tmp_path / "p" / "strategies.png"
    assert str(png) in res.output
    assert (f"Strategies over training: run {sink.run_id}", simulated) in plot_titles  # labelled as its run is
    assert _pixels(png, ORANGE) > 5000 and _pixels(png, PURPLE) == 0


def test_the_training_run_logs_its_strategies_to_mlflow(tmp_path: Path, monkeypatch, plot_titles: list) -> None:
    import mlflow

    from registry.runs import STRATEGIES_PLOT, TrainingRun

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    # The reward's logged steps: math moves from single to 3 attempts + an aggregator.
    history = [{"step": s, "reward": 0.6, "shape_share/math/single": 1 - s / 4,
                "shape_share/math/fan_out_aggregate": s / 4, "shape_share/math/chain": 0.0} for s in range(5)]
    with TrainingRun({"seed": 0}, simulated=True) as run:
        for row in history:
            run.log_step(row)
        logged = run.finish(None, history=history)
    client = mlflow.MlflowClient()
    assert STRATEGIES_PLOT in logged.plots
    assert [m.value for m in client.get_metric_history(logged.run_id, "shape_share/math/fan_out_aggregate")] == [
        0.0, 0.25, 0.5, 0.75, 1.0]
    png = Path(client.download_artifacts(logged.run_id, STRATEGIES_PLOT, str(tmp_path / "dl")))
    assert (f"Strategies over training: run {logged.run_id}", True) in plot_titles
    assert _pixels(png, ORANGE) > 5000 and _pixels(png, PURPLE) == 0


def test_a_run_without_shape_shares_logs_no_strategies(tmp_path: Path, monkeypatch) -> None:
    from registry.runs import STRATEGIES_PLOT, TrainingRun

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    with TrainingRun({"seed": 0}, simulated=True) as run:
        logged = run.finish(None, history=[{"step": 1, "reward": 0.5}])
    assert logged.plots == ("plots/curves.png",) and STRATEGIES_PLOT not in logged.plots


def test_the_nightly_shows_the_strategies_as_an_image(prefect_harness: Path) -> None:
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from registry.nightly import artifact_url
    from tasks.nightly import Artifacts, Tables, publish

    url = artifact_url("abc123", "plots/strategies.png", base="http://127.0.0.1:5000")
    assert url == "http://127.0.0.1:5000/get-artifact?path=plots%2Fstrategies.png&run_uuid=abc123"
    from prefect import flow

    @flow(name="publish-test")
    def summary() -> None:  # published from a flow, as the nightly's summary is
        publish(Artifacts(title="nightly test", tables=Tables(summary=[{"method": "x"}], costs=[]),
                          results_markdown="# results", images={"strategies": url}))

    summary()

    async def read():  # noqa: ANN202
        async with get_client() as client:
            return await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["nightly-strategies"])))

    # The harness is shared by the test files of one process: a nightly test may have published
    # its own "nightly-strategies" image before this one. This flow's is the one with its URL.
    (artifact,) = [a for a in asyncio.run(read()) if a.data == url]
    assert artifact.type == "image" and artifact.description == "nightly test"
