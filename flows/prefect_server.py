"""The temporary Prefect server of a `conductor run` without PREFECT_API_URL, tied to the run.

Prefect starts that server (uvicorn, a child process) in the caller's process group and with no
link to the caller's life. Tried by hand (docs/operations.md):
- `kill -9` of `conductor run` left the server running forever, re-parented to PID 1;
- Ctrl-C in a terminal reached the server too (same process group), so the flow could no longer
  report its final state and its run stayed RUNNING in the server's database.

So the run starts the server itself, before the flow does: in a session of its own (a terminal's
Ctrl-C reaches only the run, which then reports `Cancelled` and stops the server on exit) and with
PR_SET_PDEATHSIG, so the kernel ends it when the run's process dies, however it dies. Prefect then
finds this server running (one instance per port, `SubprocessASGIServer()`) and uses it.

The command line mirrors Prefect 3.8.8's `SubprocessASGIServer._run_uvicorn_command` (prefect is
pinned); only how the process is started differs."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Any

from flows.processes import die_with_parent


def start_tied_temporary_server() -> Any | None:
    """Start Prefect's temporary server tied to this process; None where one is not wanted (an
    API URL is set, or ephemeral servers are off). Call it from the main thread: PDEATHSIG fires
    when the thread that started the server ends."""
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED, get_current_settings

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("start the tied Prefect server from the main thread")
    server = SubprocessASGIServer()
    if server.running:
        return server

    def launch() -> subprocess.Popen[Any]:
        import prefect

        env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
               "PREFECT__SERVER_FINAL": "1",
               **get_current_settings().to_environment_variables(exclude_unset=True)}
        argv = [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory",
                "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(server.port),
                "--log-level", "error", "--lifespan", "on"]
        return subprocess.Popen(argv, env=env, start_new_session=True, preexec_fn=die_with_parent())

    server._run_uvicorn_command = launch  # used by start(), also for its retry on a taken port
    server.start()
    return server
