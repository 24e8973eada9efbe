"""deployments/prefect.yaml applied by `conductor deploy` to a real Prefect server: real `prefect
server start` and `prefect worker start --pool local` processes (flows/ui.py's supervisor, no
MLflow) on a free 127.0.0.1 port, with a database of their own. The schedules are stored, the
server's scheduler creates upcoming runs from them, and the worker runs a deployment's flow run
to COMPLETED."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conductor.config import REPO_ROOT
from conductor.data.synthetic import generate_bank

CONDUCTOR = str(Path(sys.executable).with_name("conductor"))
EXPECTED = {  # deployment -> (flow, entrypoint, pool, cron, paused)
    "nightly": ("conductor-nightly", "flows/nightly.py:nightly_flow", "local", "0 2 * * *", False),
    "champion-eval": ("conductor-champion-eval", "flows/nightly.py:champion_eval_flow", "local", "0 6 * * *", False),
    "weekly-full": ("conductor-eval", "flows/evaluation.py:evaluation_flow", "local", "0 3 * * 0", False),
    "nightly-gpu": ("conductor-nightly", "flows/nightly.py:nightly_flow", "gpu", "0 2 * * *", True),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from flows.ui import UIStack

    home = tmp_path_factory.mktemp("deploy-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PREFECT_HOME", str(home / "prefect"))  # the server's own SQLite database
        mp.setenv("CONDUCTOR_HOME", str(home))
        stack = UIStack(prefect_port=free_port(), mlflow_port=free_port(), home=home, mlflow=False)
        stack.start(timeout=240)
        try:
            env = {**os.environ, "PREFECT_API_URL": stack.prefect_api_url}
            yield {"url": stack.prefect_api_url, "home": home, "env": env, "stack": stack}
        finally:
            stack.stop()


def conductor_deploy(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CONDUCTOR, "deploy", *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=300)


def client_call(url: str, fn: Any) -> Any:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    async def go() -> Any:
        async with get_client() as client:
            return await fn(client)

    with temporary_settings({PREFECT_API_URL: url}):
        return asyncio.run(go())


async def _state(client: Any) -> dict[str, Any]:
    deployments = await client.read_deployments()
    flows = {f.id: f.name for f in await client.read_flows()}
    pools = {p.name: p for p in await client.read_work_pools()}
    runs = await client.read_flow_runs()
    return {"deployments": {d.name: d for d in deployments}, "flows": flows, "pools": pools, "runs": runs}


@pytest.fixture(scope="module")
def deployed(server: dict[str, Any]) -> dict[str, Any]:
    res = conductor_deploy(server["env"])
    assert res.returncode == 0, res.stdout + res.stderr
    return {"output": res.stdout, "state": client_call(server["url"], _state)}


def test_deploy_creates_the_pools_and_the_scheduled_deployments(server: dict[str, Any], deployed: dict) -> None:
    state = deployed["state"]
    got = {name: (state["flows"][d.flow_id], d.entrypoint, d.work_pool_name,
                  d.schedules[0].schedule.cron, d.paused) for name, d in state["deployments"].items()}
    assert got == EXPECTED
    for d in state["deployments"].values():
        assert [s.schedule.timezone for s in d.schedules] == ["UTC"]
        # code from this checkout: the pull step makes it the flow run's working directory
        assert d.pull_steps == [{"prefect.deployments.steps.set_working_directory": {"directory": str(REPO_ROOT)}}]
    assert state["deployments"]["weekly-full"].parameters["cfg"]["benchmarks"] == []
    assert len(state["deployments"]["weekly-full"].parameters["cfg"]["methods"]) >= 10
    pools = state["pools"]
    assert {"local", "gpu"} <= set(pools) and pools["local"].type == pools["gpu"].type == "process"
    gpu = pools["gpu"].base_job_template["variables"]["properties"]
    assert gpu["env"]["default"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert gpu["env"]["default"]["CONDUCTOR_ACCELERATE_CONFIG"] == "deployments/accelerate/multi_gpu.yaml"
    assert (REPO_ROOT / gpu["env"]["default"]["CONDUCTOR_ACCELERATE_CONFIG"]).is_file()
    assert gpu["working_dir"]["default"] == "/srv/conductor"
    assert "default" not in pools["local"].base_job_template["variables"]["properties"]["env"]
    for name in EXPECTED:
        assert name in deployed["output"]


def test_the_scheduler_creates_upcoming_runs_at_the_scheduled_utc_times(server: dict[str, Any], deployed: dict) -> None:
    deployments = deployed["state"]["deployments"]
    by_id = {d.id: name for name, d in deployments.items()}
    want = {"nightly": (2, None), "champion-eval": (6, None), "weekly-full": (3, 6)}  # hour, weekday (Sun=6)
    deadline = time.monotonic() + 120
    while True:
        runs = client_call(server["url"], lambda c: c.read_flow_runs())
        scheduled = [r for r in runs if r.auto_scheduled and r.state_name == "Scheduled"]
        names = {by_id.get(r.deployment_id) for r in scheduled}
        if set(want) <= names or time.monotonic() > deadline:
            break
        time.sleep(2)
    # nightly-gpu is applied before weekly-full (file order); the scheduler's recent-deployments
    # loop (every 5 s) has seen it once weekly-full has runs; one more loop to be sure.
    time.sleep(6)
    runs = client_call(server["url"], lambda c: c.read_flow_runs())
    scheduled = [r for r in runs if r.auto_scheduled and r.state_name == "Scheduled"]
    names = {by_id.get(r.deployment_id) for r in scheduled}
    assert set(want) <= names
    assert "nightly-gpu" not in names  # paused: schedules nothing until a GPU worker exists
    now = datetime.now(UTC)
    for r in scheduled:
        hour, weekday = want[by_id[r.deployment_id]]
        start = r.expected_start_time.astimezone(UTC)
        assert start > now and (start.hour, start.minute) == (hour, 0)
        assert weekday is None or start.weekday() == weekday


def test_deploy_again_updates_in_place(server: dict[str, Any], deployed: dict) -> None:
    res = conductor_deploy(server["env"])
    assert res.returncode == 0, res.stdout + res.stderr
    again = client_call(server["url"], _state)
    assert {n: d.id for n, d in again["deployments"].items()} == {n: d.id for n, d in
                                                                  deployed["state"]["deployments"].items()}
    assert {n: p.id for n, p in again["pools"].items()} == {n: p.id for n, p in deployed["state"]["pools"].items()}


def test_the_local_worker_runs_a_deployment_flow_run_to_completed(server: dict[str, Any], deployed: dict,
                                                                 tmp_path: Path) -> None:
    problems = [p for p in generate_bank(40, seed=3) if p.domain in ("math", "choice")][:4]
    (tmp_path / "p.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in problems))
    db = tmp_path / "wh.duckdb"
    weekly = deployed["state"]["deployments"]["weekly-full"]
    params = {"cfg": {"methods": ["single:sim-small"], "problems_file": str(tmp_path / "p.jsonl"), "profile": "local",
                      "out_dir": str(tmp_path / "out")}, "db_path": str(db)}
    run = client_call(server["url"], lambda c: c.create_flow_run_from_deployment(weekly.id, parameters=params))
    deadline = time.monotonic() + 300
    while True:
        run = client_call(server["url"], lambda c: c.read_flow_run(run.id))
        if run.state.is_final() or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert run.state_name == "Completed", (run.state, (server["home"] / "logs/ui/prefect-worker.log").read_text()[-3000:])
    assert run.work_pool_name == "local"
    assert (tmp_path / "out" / "results.md").is_file() and db.is_file()  # the flow ran, in this checkout's code


def test_deploy_without_a_server_is_one_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(tmp_path)}
    res = conductor_deploy(env)
    assert res.returncode == 2
    assert "PREFECT_API_URL is not set" in res.stderr
    res = conductor_deploy(env | {"PREFECT_API_URL": f"http://127.0.0.1:{free_port()}/api"})
    assert res.returncode == 2 and "no Prefect server answers" in res.stderr


def test_deploy_help_says_what_it_applies() -> None:
    from typer.testing import CliRunner

    from conductor.cli.main import app

    res = CliRunner().invoke(app, ["deploy", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    for words in ("PREFECT_API_URL", "02:00 UTC", "06:00 UTC", "weekly", "gpu", "Idempotent"):
        assert words in text
