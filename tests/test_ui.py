"""`conductor ui` as a user runs it: a real Prefect server, worker and MLflow server on free
127.0.0.1 ports (not 4200/5000), each printed URL answers, the Prefect UI is told its real API
address, and a terminal's Ctrl-C (SIGINT to the command's process group) stops every process it
started."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from conductor.config import REPO_ROOT

CONDUCTOR = str(Path(sys.executable).with_name("conductor"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree(pid: int) -> set[int]:
    """`pid` and every live process below it, from /proc's parent links."""
    parents: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                parents[int(d)] = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                pass
    out, todo = {pid}, [pid]
    while todo:
        p = todo.pop()
        for c, pp in parents.items():
            if pp == p and c not in out:
                out.add(c)
                todo.append(c)
    return out


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_conductor_ui_serves_every_printed_url_and_ctrl_c_stops_every_process(tmp_path: Path) -> None:
    pp, mp = free_port(), free_port()
    env = {**os.environ, "CONDUCTOR_HOME": str(tmp_path / "home"), "PREFECT_HOME": str(tmp_path / "home" / "prefect")}
    # mlflow.set_tracking_uri (an earlier test's registry/ call) also exports MLFLOW_TRACKING_URI
    # into os.environ; this test is about the project's default store under CONDUCTOR_HOME.
    env.pop("MLFLOW_TRACKING_URI", None)
    env.pop("PREFECT_API_URL", None)
    env.pop("PREFECT_UI_API_URL", None)
    ui = subprocess.Popen([CONDUCTOR, "ui", "--prefect-port", str(pp), "--mlflow-port", str(mp)], env=env,
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True)  # its own process group, as in a terminal
    started: set[int] = set()
    try:
        assert ui.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = ui.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "Ctrl-C stops them all" in line:
                break
        out = "".join(lines)
        urls = dict(re.findall(r"^(Prefect UI|Prefect API|MLflow UI):\s+(\S+)$", out, re.M))
        assert urls == {"Prefect UI": f"http://127.0.0.1:{pp}", "Prefect API": f"http://127.0.0.1:{pp}/api",
                        "MLflow UI": f"http://127.0.0.1:{mp}"}, out

        page = httpx.get(urls["Prefect UI"], timeout=30)
        assert page.status_code == 200 and "<title>Prefect" in page.text and '<div id="app"' in page.text
        assert httpx.get(f"{urls['Prefect API']}/health", timeout=30).json() is True
        # what the web UI calls: the real port, not the 4200 default
        assert httpx.get(f"{urls['Prefect UI']}/ui-settings", timeout=30).json()["api_url"] == urls["Prefect API"]
        # the worker polls the `local` pool of this server
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            workers = httpx.post(f"{urls['Prefect API']}/work_pools/local/workers/filter", json={}, timeout=30)
            if workers.status_code == 200 and workers.json():
                break
            time.sleep(1)
        assert [w["name"] for w in workers.json()] == ["conductor-ui-local"]

        page = httpx.get(urls["MLflow UI"], timeout=30)
        assert page.status_code == 200 and "<title>MLflow" in page.text
        models = httpx.get(f"{urls['MLflow UI']}/ajax-api/2.0/mlflow/registered-models/search", timeout=30)
        assert models.status_code == 200
        assert (tmp_path / "home" / "mlflow.db").is_file()  # the project's store, under CONDUCTOR_HOME

        started = tree(ui.pid)
        assert len(started) >= 4  # conductor ui, prefect server, mlflow server (+ its uvicorn), worker
        os.killpg(ui.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends
        rest, _ = ui.communicate(timeout=120)
        assert ui.returncode == 0, rest
        assert "stopped: Prefect server, worker and MLflow UI" in rest
        time.sleep(0.5)
        left = {p for p in started if running(p)}
        assert not left, [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]
        for port in (pp, mp):
            with socket.socket() as s:
                assert s.connect_ex(("127.0.0.1", port)) != 0  # nothing listens any more
    finally:
        if ui.poll() is None:
            ui.kill()
        for p in started | tree(ui.pid):  # ours: leave nothing behind when the check fails
            if running(p) and p != os.getpid():
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass


def test_conductor_ui_refuses_a_taken_port_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "CONDUCTOR_HOME": str(tmp_path)}
        res = subprocess.run([CONDUCTOR, "ui", "--prefect-port", str(port), "--mlflow-port", str(free_port())],
                             env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert f"port {port} on 127.0.0.1 is taken" in res.stderr
