"""Screenshots of the Prefect UI and the MLflow UI, taken by a real headless Chromium, for docs/img/.

Run by hand (not a test: CI machines need not have a browser):

    apt-get install -y chromium            # Debian's package; playwright's download needs a network
    .venv/bin/python tools/screenshots.py  # ~5-10 min on 2 cores

What it does, in a fresh $CONDUCTOR_HOME (a temporary directory unless --home):
1. starts `conductor ui`'s services (flows/ui.py: Prefect server, `local` worker, MLflow UI) on
   free 127.0.0.1 ports, and applies deployments/prefect.yaml (`conductor deploy`);
2. runs the `conductor-nightly/nightly` deployment --nights times through the worker (small
   parameters, one run_key per night), so the registry has versions and aliases;
   After the first night v1 is forced to `champion` (`conductor model promote 1 --force`: a
   2-step tiny model rarely passes the gate) so the second night meets a champion;
3. screenshots: the deployments page (schedules), the last nightly flow run, its
   `nightly-summary` and `nightly-results` artifacts, and the MLflow page of registered model
   `conductor` (versions, aliases);
4. checks each page's text (Chromium's --dump-dom) for what it must show and for "Can't connect",
   and each PNG for being more than a blank page; stops every service.

The SPAs render asynchronously: Chromium waits --virtual-time-budget ms of page time first."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    sys.exit("no chromium: apt-get install -y chromium")


def chromium_argv(url: str, size: tuple[int, int], budget_ms: int, profile: str) -> list[str]:
    argv = [browser(), "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--disable-dev-shm-usage", f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
            f"--virtual-time-budget={budget_ms}"]
    if os.geteuid() == 0:
        argv.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    return argv


def dom(url: str, budget_ms: int = 20000) -> str:
    with tempfile.TemporaryDirectory() as profile:
        res = subprocess.run([*chromium_argv(url, (1600, 1000), budget_ms, profile), "--dump-dom", url],
                             capture_output=True, text=True, timeout=300)
    return res.stdout


def shoot(url: str, out: Path, must_show: list[str], size: tuple[int, int] = (1600, 1000),
          budget_ms: int = 20000) -> None:
    """Screenshot `url` into `out` once its rendered DOM shows every string of `must_show`."""
    from PIL import Image

    text = ""
    for _ in range(3):  # a busy machine may need more page time
        text = dom(url, budget_ms)
        if "Can't connect" in text:
            raise SystemExit(f"{url}: the page says it cannot connect to its API")
        if all(s in text for s in must_show):
            break
        budget_ms *= 2
    missing = [s for s in must_show if s not in text]
    if missing:
        raise SystemExit(f"{url}: the rendered page lacks {missing}")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([*chromium_argv(url, size, budget_ms, profile), f"--screenshot={out}", url],
                       capture_output=True, timeout=300, check=True)
    colours = Image.open(out).convert("RGB").getcolors(maxcolors=1 << 20) or []
    if len(colours) < 16:
        raise SystemExit(f"{out}: looks blank ({len(colours)} colours)")
    print(f"  {out.relative_to(REPO) if out.is_relative_to(REPO) else out}  <- {url}")


async def _run_nightly(nights: int, config: dict, timeout: float) -> list:
    """`config`: NightConfig fields over the deployment's (a run's `config` replaces the
    deployment's whole, so it names the profile too)."""
    from prefect.client.orchestration import get_client

    runs = []
    async with get_client() as client:
        deployment = await client.read_deployment_by_name("conductor-nightly/nightly")
        for night in range(nights):
            run = await client.create_flow_run_from_deployment(
                deployment.id, parameters={"config": {**deployment.parameters.get("config", {}), **config,
                                                      "run_key": f"2026-01-{night + 1:02d}"}})
            deadline = time.monotonic() + timeout
            while not (run := await client.read_flow_run(run.id)).state.is_final():
                if time.monotonic() > deadline:
                    raise SystemExit(f"nightly flow run {run.name} not finished after {timeout:.0f} s")
                await asyncio.sleep(3)
            print(f"  night {night + 1}: flow run {run.name} {run.state_name}")
            if run.state_name != "Completed":
                raise SystemExit(f"nightly flow run {run.name} ended {run.state_name}: {run.state.message}")
            runs.append(run)
            if night == 0 and nights > 1:
                # A 2-step tiny model rarely passes the gate; force v1 to champion (as a user would
                # with `conductor model promote 1 --force`) so the next night meets a champion and
                # the model page shows both aliases.
                res = subprocess.run([str(Path(sys.executable).with_name("conductor")), "model", "promote", "1",
                                      "--force"], capture_output=True, text=True, timeout=300)
                print(f"  conductor model promote 1 --force: {(res.stdout + res.stderr).strip().splitlines()[-1:]}")
        if not runs:  # --nights 0 with --home: the last nightly run that completed there
            from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId, FlowRunFilter
            from prefect.client.schemas.filters import FlowRunFilterState, FlowRunFilterStateName
            from prefect.client.schemas.sorting import FlowRunSort

            runs = await client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id])),
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Completed"]))),
                sort=FlowRunSort.END_TIME_DESC, limit=1)
            if not runs:
                raise SystemExit("no completed nightly flow run in this home: run with --nights 1 or more")
    return runs


async def _artifact(flow_run_id: object, key: str) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    async with get_client() as client:
        found = await client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]), key=ArtifactFilterKey(any_=[key])))
    if not found:
        raise SystemExit(f"the nightly flow run made no artifact {key!r}")
    return str(found[0].id)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    ap.add_argument("--home", type=Path, default=None, help="CONDUCTOR_HOME (default: a new temporary one).")
    ap.add_argument("--nights", type=int, default=2, help="Nightly runs before the screenshots.")
    ap.add_argument("--steps", type=int, default=2, help="GRPO steps per night.")
    ap.add_argument("--heldout", type=int, default=12, help="Held-out problems per night.")
    ap.add_argument("--timeout", type=float, default=900, help="Seconds a nightly run may take.")
    ap.add_argument("--keep", action="store_true", help="Leave the services running until Ctrl-C.")
    args = ap.parse_args()

    home = (args.home or Path(tempfile.mkdtemp(prefix="conductor-screens-"))).resolve()
    os.environ.update(CONDUCTOR_HOME=str(home), PREFECT_HOME=str(home / "prefect"),
                      PREFECT_SERVER_ANALYTICS_ENABLED="false", MLFLOW_DISABLE_TELEMETRY="true",
                      HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    from flows.ui import UIStack

    stack = UIStack(prefect_port=free_port(), mlflow_port=free_port(), home=home)
    print(f"home {home}; starting the Prefect server, worker and MLflow UI ...")
    stack.start(timeout=300)
    try:
        os.environ["PREFECT_API_URL"] = stack.prefect_api_url
        from flows.deploy import deploy

        print(f"applied: {', '.join(r['deployment'] for r in deploy())}")
        runs = _run_nightly(args.nights, {"steps": args.steps, "heldout_problems": args.heldout}, args.timeout)
        last = asyncio.run(runs)[0 if not args.nights else -1]
        print("screenshots:")
        p, m = stack.prefect_url, stack.mlflow_url
        shoot(f"{p}/deployments", args.out / "prefect-deployments.png",
              ["nightly", "champion-eval", "weekly-full", "nightly-gpu"])
        shoot(f"{p}/runs/flow-run/{last.id}", args.out / "prefect-nightly-flow-run.png",
              [last.name, "conductor-nightly"])
        # The run page opens on its Logs tab (its `?tab=` is not applied on a fresh load); the
        # artifacts have pages of their own, linked from the run's Artifacts tab.
        for key in ("nightly-summary", "nightly-results"):
            artifact = asyncio.run(_artifact(last.id, key))
            shoot(f"{p}/artifacts/artifact/{artifact}", args.out / f"prefect-{key}-artifact.png", [key, last.name])
        shoot(f"{m}/#/models/conductor", args.out / "mlflow-model-conductor.png",
              ["conductor", "Version 1", "Version 2", "champion", "challenger"], size=(1800, 1000))
        if args.keep:
            print(f"Prefect UI {p}  MLflow UI {m}  (Ctrl-C stops them)")
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
