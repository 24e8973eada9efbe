"""`conductor ui` (`make ui`): a Prefect server, a `local`-pool Prefect worker and the MLflow UI
on 127.0.0.1, watched together and stopped together.

- Each service runs in a session (and process group) of its own, so a terminal's Ctrl-C reaches
  only this supervisor, which then stops them in order (worker, servers): SIGTERM to each group,
  SIGKILL to whatever of the group or of the service's process tree is left after a grace
  period. Each is also started with PR_SET_PDEATHSIG, so a `kill -9` of the supervisor still
  ends the services it started (their own children then go with them).
- A Prefect server on a port other than 4200 tells its web UI to call 4200 unless told
  otherwise ("Can't connect to Server API"): the server gets PREFECT_UI_API_URL and the worker
  PREFECT_API_URL with the real address.
- MLflow: `mlflow server` on the project's store (MLFLOW_TRACKING_URI, else
  sqlite:///$CONDUCTOR_HOME/mlflow.db) with the artifacts under $CONDUCTOR_HOME/mlartifacts,
  where registry/ puts them; one worker process.

Logs go to $CONDUCTOR_HOME/logs/ui/<service>.log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

from conductor.config import Settings
from flows.processes import HOST, alive_in, descendants, die_with_parent, kill, port_free, running, signal_group

STOP_GRACE_S = 15.0


class UIError(RuntimeError):
    """A service could not start (a port taken, a crash, no answer): one line for the user."""


@dataclass
class Service:
    name: str
    argv: list[str]
    env: dict[str, str]
    health: str | None  # URL that answers 200 once it is up
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)
    _tree: set[int] = field(default_factory=set, repr=False)

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=die_with_parent(signal.SIGTERM))

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def healthy(self, client: httpx.Client) -> bool:
        if not self.health:
            return self.alive()
        try:
            return client.get(self.health).status_code == 200
        except httpx.HTTPError:
            return False

    def terminate(self) -> None:
        """SIGTERM the service's process group (remembering its process tree first: some of it
        may have made sessions of its own)."""
        if self.proc is None:
            return
        self._tree = descendants(self.proc.pid) | {self.proc.pid}
        signal_group(self.proc.pid, signal.SIGTERM)

    def finish(self, grace: float = STOP_GRACE_S) -> None:
        """After terminate(): wait up to `grace` seconds, then SIGKILL what of the group or of
        the tree is left."""
        if self.proc is None:
            return
        pid, tree = self.proc.pid, self._tree or {self.proc.pid}
        deadline = time.monotonic() + grace
        while alive_in(tree, pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        signal_group(pid, signal.SIGKILL)
        for p in tree:
            if running(p):
                kill(p, signal.SIGKILL)
        self.proc.wait()
        if self._log:
            self._log.close()
        self.proc = None

    def stop(self, grace: float = STOP_GRACE_S) -> None:
        self.terminate()
        self.finish(grace)


def _bin(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    return str(path) if path.exists() else name


@dataclass
class UIStack:
    prefect_port: int = 4200
    mlflow_port: int = 5000
    pool: str = "local"
    worker: bool = True
    mlflow: bool = True
    home: Path = field(default_factory=lambda: Settings().home)
    services: list[Service] = field(default_factory=list)

    @property
    def prefect_url(self) -> str:
        return f"http://{HOST}:{self.prefect_port}"

    @property
    def prefect_api_url(self) -> str:
        return f"{self.prefect_url}/api"

    @property
    def mlflow_url(self) -> str:
        return f"http://{HOST}:{self.mlflow_port}"

    def mlflow_store(self) -> str:
        return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{self.home / 'mlflow.db'}"

    def build(self) -> list[Service]:
        logs = self.home / "logs" / "ui"
        base = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": os.environ.get("PREFECT_SERVER_ANALYTICS_ENABLED",
                                                                                   "false"),
                "MLFLOW_DISABLE_TELEMETRY": os.environ.get("MLFLOW_DISABLE_TELEMETRY", "true"),
                "CONDUCTOR_HOME": str(self.home)}
        prefect_env = {**base, "PREFECT_API_URL": self.prefect_api_url, "PREFECT_UI_API_URL": self.prefect_api_url,
                       "PREFECT_SERVER_API_HOST": HOST, "PREFECT_SERVER_API_PORT": str(self.prefect_port)}
        services = [
            Service("prefect-server", [_bin("prefect"), "server", "start", "--host", HOST, "--port",
                                       str(self.prefect_port)],
                    prefect_env, f"{self.prefect_api_url}/health", logs / "prefect-server.log"),
            Service("mlflow", [_bin("mlflow"), "server", "--host", HOST, "--port", str(self.mlflow_port),
                               "--workers", "1", "--backend-store-uri", self.mlflow_store(),
                               "--default-artifact-root", (self.home / "mlartifacts").resolve().as_uri()],
                    # Its job runner (GenAI scorer jobs; 7 huey processes) is not needed to browse.
                    {**base, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}, f"{self.mlflow_url}/health",
                    logs / "mlflow.log"),
        ]
        if not self.mlflow:
            services = [s for s in services if s.name != "mlflow"]
        if self.worker:
            services.append(Service("prefect-worker", [_bin("prefect"), "worker", "start", "--pool", self.pool,
                                                       "--type", "process", "--name", f"conductor-ui-{self.pool}"],
                                    prefect_env, None, logs / "prefect-worker.log"))
        return services

    def start(self, timeout: float = 300.0, stopping: threading.Event | None = None,
              after_prefect: Callable[[], None] | None = None) -> None:
        """Start the servers, wait for them to answer, then the worker. Raises UIError (having
        stopped what it started) when a port is taken or a service dies or never answers."""
        for port in (self.prefect_port, *([self.mlflow_port] if self.mlflow else [])):
            if not port_free(port):
                raise UIError(f"port {port} on {HOST} is taken (another `conductor ui`?); choose another"
                              " with --prefect-port / --mlflow-port")
        stopping = stopping or threading.Event()
        self.home.mkdir(parents=True, exist_ok=True)
        if os.environ.get("PREFECT_HOME"):
            Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)
        planned = self.build()
        try:
            servers = [s for s in planned if s.health]
            for s in servers:
                s.start()
                self.services.append(s)
            self._wait_healthy(servers, timeout, stopping)
            if after_prefect is not None and not stopping.is_set():
                after_prefect()
            for s in planned:
                if not s.health and not stopping.is_set():
                    s.start()
                    self.services.append(s)
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self, services: list[Service], timeout: float, stopping: threading.Event) -> None:
        deadline = time.monotonic() + timeout
        waiting = list(services)
        # one client for every try: `httpx.get` builds a client, and its TLS context (20-100 CPU-ms),
        # per call, twice a second per server while they start
        with httpx.Client(timeout=5) as client:
            while waiting and not stopping.is_set():
                for s in list(waiting):
                    if not s.alive():
                        raise UIError(f"{s.name} exited ({s.proc.returncode if s.proc else '?'}) before it"
                                      f" answered; see {s.log_path}")
                    if s.healthy(client):
                        waiting.remove(s)
                if waiting and time.monotonic() > deadline:
                    raise UIError(f"{', '.join(s.name for s in waiting)} did not answer within {timeout:.0f} s;"
                                  f" see {waiting[0].log_path}")
                if waiting:
                    stopping.wait(0.5)

    def dead(self) -> list[Service]:
        return [s for s in self.services if not s.alive()]

    def stop(self) -> None:
        """The worker first (it reports its flow runs to the server), then the servers together."""
        for s in self.services:
            if s.health is None:
                s.stop()
        servers = [s for s in self.services if s.health is not None]
        for s in servers:
            s.terminate()
        for s in servers:
            s.finish()
        self.services.clear()
