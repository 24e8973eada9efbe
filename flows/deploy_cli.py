"""`conductor deploy` and `conductor ui`: the scheduled pipeline on a long-running Prefect server.
They plug in through the `conductor.cli` entry point group (flows/, not conductor/cli/: they
talk to Prefect)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import typer

from conductor.cli.common import console

def deploy(
    prefect_file: Path = typer.Option(None, "--file", help="The deployments file (default: the repository's"
                                      " deployments/prefect.yaml)."),
    name: list[str] = typer.Option([], "--name", "-n", help="Apply only this deployment (repeat the option;"
                                   " default: all of them)."),
) -> None:
    """Create the work pools and apply the deployments of deployments/prefect.yaml to the Prefect
    server at PREFECT_API_URL (start one with `conductor ui`).

    What is applied: the work pools `local` (a process pool for this machine) and `gpu` (a
    process pool for a worker on a GPU host; its job variables set CUDA_VISIBLE_DEVICES, the
    accelerate config, CONDUCTOR_HOME and the working directory), and the deployments: the
    nightly retrain at 02:00 UTC, the champion evaluation at 06:00 UTC, the weekly full
    evaluation on Sundays at 03:00 UTC (all on `local`), and a paused nightly retrain on `gpu`.
    Code runs from this checkout (a pull step sets the working directory; no image, no clone).

    Idempotent: run it again after editing the file; pools and deployments are updated in place.
    Flow runs start once a worker polls the pool: `prefect worker start --pool local`.
    """
    from flows.cli import ensure_prefect_home

    ensure_prefect_home()  # before Prefect is imported: it cannot create a nested PREFECT_HOME
    from flows.deploy import PREFECT_FILE, DeployError
    from flows.deploy import deploy as apply

    try:
        rows = apply(prefect_file or PREFECT_FILE, name or None)
    except DeployError as exc:  # `prefect deploy`'s own lines say what went wrong: keep them
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    from prefect.settings import PREFECT_API_URL

    url = str(PREFECT_API_URL.value()).rstrip("/")
    console.print(f"applied to {url}:")
    for r in rows:
        console.print(f"  {r['deployment']:<40} pool={r['work_pool']:<6} {r['schedule'] or '-':<16}"
                      + ("  (paused)" if r["paused"] else ""), soft_wrap=True, markup=False)
    console.print(f"See them at {url.removesuffix('/api')}/deployments; runs start when a worker polls the pool"
                  " (`prefect worker start --pool local`, which `conductor ui` starts).", soft_wrap=True)


def ui(
    prefect_port: int = typer.Option(4200, help="Port of the Prefect server (UI and API) on 127.0.0.1."),
    mlflow_port: int = typer.Option(5000, help="Port of the MLflow UI on 127.0.0.1."),
    pool: str = typer.Option("local", help="Work pool the worker polls (created as a process pool if absent)."),
    worker: bool = typer.Option(True, "--worker/--no-worker", help="Start a Prefect worker for --pool."),
    apply_deployments: bool = typer.Option(False, "--deploy", help="Also apply deployments/prefect.yaml"
                                           " (`conductor deploy`) once the server is up."),
    timeout: float = typer.Option(300.0, help="Seconds to wait for the servers to answer."),
) -> None:
    """Start a Prefect server, a Prefect worker and the MLflow UI on 127.0.0.1, print their URLs,
    and keep them running until Ctrl-C (SIGINT) or SIGTERM, which stops them all.

    The Prefect UI is told its API's real address (PREFECT_UI_API_URL), so a port other than
    4200 works. MLflow shows the project's store: MLFLOW_TRACKING_URI, else
    sqlite:///$CONDUCTOR_HOME/mlflow.db with artifacts under $CONDUCTOR_HOME/mlartifacts.
    Point other commands at this server with PREFECT_API_URL=http://127.0.0.1:PORT/api.
    Logs: $CONDUCTOR_HOME/logs/ui/.
    """
    import os

    from conductor.cli.common import user_errors
    from flows.deploy import DeployError
    from flows.ui import UIError, UIStack

    stack = UIStack(prefect_port=prefect_port, mlflow_port=mlflow_port, pool=pool, worker=worker)
    stopping = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        received.append(signum)
        stopping.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}

    def deploy_now() -> None:
        os.environ["PREFECT_API_URL"] = stack.prefect_api_url
        from flows.deploy import deploy as apply

        rows = apply()
        console.print(f"applied {len(rows)} deployments ({', '.join(r['deployment'] for r in rows)})", soft_wrap=True)

    console.print(f"starting the Prefect server and the MLflow UI (logs: {stack.home / 'logs' / 'ui'}) ...",
                  soft_wrap=True)
    try:
        with user_errors(UIError, DeployError):
            stack.start(timeout=timeout, stopping=stopping, after_prefect=deploy_now if apply_deployments else None)
        if not stopping.is_set():
            console.print(f"Prefect UI:   {stack.prefect_url}\n"
                          f"Prefect API:  {stack.prefect_api_url}\n"
                          f"MLflow UI:    {stack.mlflow_url}\n"
                          + (f"Worker:       pool {pool}\n" if worker else "")
                          + f"Use it from another shell: export PREFECT_API_URL={stack.prefect_api_url}"
                            f" MLFLOW_TRACKING_URI={stack.mlflow_store()}\n"
                          "Ctrl-C stops them all.", soft_wrap=True, markup=False, highlight=False)
        while not stopping.wait(1.0):
            if dead := stack.dead():
                console.print(f"{', '.join(s.name for s in dead)} stopped on its own (see {dead[0].log_path});"
                              " stopping the rest", soft_wrap=True)
                stack.stop()
                raise typer.Exit(1)
    finally:
        stack.stop()
        for s, h in previous.items():
            signal.signal(s, h)
    console.print("stopped: Prefect server, worker and MLflow UI")
    raise typer.Exit(0)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the `conductor` CLI."""
    app.command("deploy")(deploy)
    app.command("ui")(ui)
