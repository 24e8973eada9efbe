"""The temporary Prefect server of a `conductor run` or `conductor nightly` without
PREFECT_API_URL, tied to the command.

Left to itself, Prefect starts a temporary server (uvicorn, a child process) in the caller's
process group and with no link to the caller's life. Tried by hand (docs/operations.md):
- `kill -9` of `conductor run` left the server running forever, re-parented to PID 1;
- Ctrl-C in a terminal reached the server too (same process group), so the flow could no longer
  report its final state and its run stayed RUNNING in the server's database.

So the command starts the server itself, before the flow does, with Prefect's public command,
`prefect server start` (as `conductor ui` does, flows/ui.py): on a free loopback port, without
the UI and the background services (what Prefect's own temporary server leaves out too), in a
session of its own (a terminal's Ctrl-C reaches only the command, which then reports its end and
stops the server) and with PR_SET_PDEATHSIG, so the kernel ends it when the command's process
dies, however it dies. The flows of the block are pointed at it with Prefect's
`temporary_settings` (PREFECT_API_URL). Its database is Prefect's default,
`$PREFECT_HOME/prefect.db`, the one `make ui` serves."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from flows.processes import HOST, die_with_parent, signal_group

STOP_GRACE_S = 15.0


class PrefectServerError(RuntimeError):
    """The tied server did not start: one line for the user, with where its log is."""


@dataclass(frozen=True)
class TiedServer:
    api_url: str
    pid: int  # of `prefect server start`; its session (process group) holds the whole server
    log_path: Path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _prefect_executable() -> str:
    path = Path(sys.executable).with_name("prefect")
    return str(path) if path.exists() else "prefect"


def _wait_healthy(proc: subprocess.Popen[bytes], api_url: str, timeout: float, log_path: Path) -> None:
    deadline = time.monotonic() + timeout
    # one client for every try: `httpx.get` builds a client, and its TLS context (~0.1 CPU-s), per call
    with httpx.Client(timeout=5) as client:
        while True:
            if proc.poll() is not None:
                raise PrefectServerError(f"`prefect server start` exited with code {proc.returncode}; see {log_path}")
            with contextlib.suppress(httpx.HTTPError):
                if client.get(f"{api_url}/health").status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise PrefectServerError(f"the Prefect server did not answer within {timeout:.0f} s; see {log_path}")
            time.sleep(0.2)


def _send_buffered_run_logs() -> None:
    """Hand the flow runs' buffered log lines to the server while it still answers: Prefect's log
    worker otherwise sends them at interpreter exit, to a stopped server, and prints "Error
    logging to API" as the last line a user sees."""
    from prefect.logging.handlers import APILogHandler

    APILogHandler().flush()


@contextlib.contextmanager
def tied_prefect_server(while_starting: Callable[[], object] | None = None) -> Iterator[TiedServer | None]:
    """For the block: a Prefect server tied to this process, and the flows pointed at it; None
    (nothing started) where one is not wanted (an API URL is set, or temporary servers are off).
    Enter it from the main thread: PDEATHSIG fires when the thread that started the server ends.

    `while_starting` (the command's own imports) runs once the server's process is started and
    before it is waited for: a fresh server takes ~15 s to answer and the nightly's imports ~13 s,
    each on a core of its own, where one after the other they took both."""
    from prefect.settings import (PREFECT_API_URL, PREFECT_HOME, PREFECT_SERVER_EPHEMERAL_ENABLED,
                                  PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, temporary_settings)

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        if while_starting is not None:
            while_starting()
        yield None
        return
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("start the tied Prefect server from the main thread")
    home = Path(PREFECT_HOME.value())
    home.mkdir(parents=True, exist_ok=True)  # its SQLite database cannot make its own folder
    port = _free_port()
    api_url = f"http://{HOST}:{port}/api"
    log_path = home / "tied-server.log"
    env = {**os.environ, "PREFECT_HOME": str(home),
           "PREFECT_SERVER_ANALYTICS_ENABLED": os.environ.get("PREFECT_SERVER_ANALYTICS_ENABLED", "false")}
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [_prefect_executable(), "server", "start", "--host", HOST, "--port", str(port), "--no-ui",
             "--no-services", "--log-level", "ERROR"],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGTERM))
    try:
        if while_starting is not None:
            while_starting()
        _wait_healthy(proc, api_url, float(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()), log_path)
        with temporary_settings(updates={PREFECT_API_URL: api_url}):
            yield TiedServer(api_url=api_url, pid=proc.pid, log_path=log_path)
    finally:
        _send_buffered_run_logs()
        signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
