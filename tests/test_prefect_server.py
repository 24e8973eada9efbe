"""The temporary Prefect server of `conductor run` dies with the run and is out of a terminal's
Ctrl-C (flows/prefect_server.py): a real server started by a real process that is SIGKILLed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conductor.config import REPO_ROOT

RUNNER = """\
import os, time
from prefect.settings import PREFECT_API_URL
from flows.prefect_server import tied_prefect_server

def children():
    out = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                out.append(int(d))
        except OSError:
            pass
    return out

seen = {}
def while_starting():  # the command's imports: the server's process runs, the flows are not yet pointed at it
    seen["children"], seen["api"] = children(), PREFECT_API_URL.value()

with tied_prefect_server(while_starting) as server:
    print(server.pid, seen["children"] == [server.pid], seen["api"] is None, PREFECT_API_URL.value() == server.api_url,
          flush=True)
    time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def test_the_temporary_server_dies_with_a_sigkilled_run_and_has_its_own_session(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env |= {"PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180"}
    (tmp_path / "prefect").mkdir()
    runner = subprocess.Popen([sys.executable, "-c", RUNNER], env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    server = 0
    try:
        assert runner.stdout is not None
        pid, started_first, api_unset, api_set = runner.stdout.readline().split()  # once the server answers
        server = int(pid)
        # `while_starting` ran with the server's process started and the flows not yet pointed at it
        assert (started_first, api_unset, api_set) == ("True", "True", "True")
        assert not _gone(server)
        assert os.getsid(server) != os.getsid(runner.pid)  # a terminal's Ctrl-C (the run's group) misses it
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    deadline = time.monotonic() + 60
    while server and not _gone(server) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = server and not _gone(server)
    if left:  # ours: do not leave it to the machine when the check fails
        with contextlib.suppress(OSError):
            os.kill(server, signal.SIGKILL)
    assert not left


FLOW_RUNNER = """\
from prefect import flow, get_run_logger
from flows.prefect_server import tied_prefect_server

@flow
def talk() -> None:
    for i in range(50):
        get_run_logger().info("line %d", i)

with tied_prefect_server():
    talk()
"""


def test_a_flow_run_in_the_tied_server_leaves_no_log_error_at_exit(tmp_path: Path) -> None:
    """A flow's log lines reach the server before it stops: no "Error logging to API" when the
    process exits (it was `make run`'s last line)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env |= {"PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180"}
    (tmp_path / "prefect").mkdir()
    done = subprocess.run([sys.executable, "-c", FLOW_RUNNER], env=env, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "line 49" in done.stdout + done.stderr  # the flow ran and logged
    assert "Error logging to API" not in done.stderr, done.stderr[-2000:]
