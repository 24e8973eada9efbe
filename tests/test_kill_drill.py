"""The kill drill of issue 8: a run is SIGKILLed (as the OOM killer would) while a sandboxed
program is running. The next run marks it abandoned, the views leave its traces out, and no
sandboxed process and no sandbox file is left anywhere.

Everything is real: the run is a separate Python process writing a DuckDB file through the same
tasks `conductor run` composes (called as plain functions: no Prefect server to wait for), the
worker pool is the simulated one, the code answer is verified in the bubblewrap sandbox, and the
kill is `kill -9` of the run's process only."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conductor.config import REPO_ROOT
from conductor.data.bank import sample_problems
from conductor.data.schema import Problem
from warehouse import TraceStore

# One run as `flows/run.py` does it: mark dead runs, record the run (host, pid) and its problems,
# solve recording each trace as it finishes, mark it finished. Phase 1 (quick questions) is
# recorded before phase 2 (the code question) starts, so the killed run surely left traces.
RUN = """\
import os, socket, sys
from datetime import UTC, datetime
from conductor.data.schema import Problem
from conductor.methods import Method
from conductor.planners import TemplatePlanner
from tasks.records import abandon_dead_runs, record_problems, record_runs
from tasks.solve import SolveRun, solve_problems
from warehouse.records import Run

db, pool_file, run_id = sys.argv[1:4]
phases = [[Problem.model_validate_json(line) for line in open(path)] for path in sys.argv[4:]]
method = Method(TemplatePlanner("single"), pool_file)
print("abandoned:", abandon_dead_runs.fn(db), flush=True)
run = Run(run_id=run_id, kind="eval", method=method.name, simulated=method.simulated,
          started_at=datetime.now(UTC), host=socket.gethostname(), pid=os.getpid())
record_runs.fn([run], db)
record_problems.fn([p for phase in phases for p in phase], db)
for i, problems in enumerate(phases):
    solved = solve_problems.fn(problems, method, SolveRun(run_id=run_id, db_path=db, batch_size=1))
    print(f"phase {i}: {solved} recorded", flush=True)
record_runs.fn([run.model_copy(update={"status": "finished", "finished_at": datetime.now(UTC)})], db)
print("finished", flush=True)
"""

# The answer every worker writes to the code question: it renames itself (so the test can see it
# from outside the sandbox), leaves a setsid'ed grandchild behind, and sleeps far past the kill.
SLEEPER = """\
import ctypes, os, time
def name(n):
    ctypes.CDLL(None).prctl(15, n.encode(), 0, 0, 0)  # PR_SET_NAME: shows in the host's /proc/<pid>/comm
if os.fork() == 0:
    os.setsid()
    name("GRANDCHILD_NAME")
    time.sleep(600)
    os._exit(0)
name("PROGRAM_NAME")
time.sleep(600)
"""

BCB_TEST = """\
import unittest
from solution import task_func
class T(unittest.TestCase):
    def test_it(self):
        self.assertEqual(task_func(), 1)
"""


def _comms() -> dict[int, str]:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                found[int(name)] = Path(f"/proc/{name}/comm").read_text().strip()
            except OSError:
                continue
    return found


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _descendants(root: int) -> set[int]:
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parent[int(name)] = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier}
        found |= frontier
    return found


def _living(pids: set[int]) -> set[int]:
    return {p for p in pids if _state(p) not in (None, "Z")}


def _write_jsonl(path: Path, problems: list[Problem]) -> str:
    path.write_text("".join(p.model_dump_json() + "\n" for p in problems))
    return str(path)


def _count(store: TraceStore, sql: str) -> int:
    return store.query(sql).column(0)[0].as_py()


@pytest.mark.parametrize("launcher", ["pooled", "per-run"])
def test_sigkill_during_a_sandboxed_program_leaves_no_ghost(tmp_path: Path, launcher: str) -> None:
    token = secrets.token_hex(3)
    program_name, grandchild_name = f"drill-p-{token}", f"drill-g-{token}"  # comm holds 15 bytes
    sleeper = SLEEPER.replace("PROGRAM_NAME", program_name).replace("GRANDCHILD_NAME", grandchild_name)
    code_problem = Problem(
        id=f"drill-{token}", source="bigcodebench", domain="code", question="Write task_func() returning 1.",
        meta={"test": BCB_TEST, "reference_solution": sleeper, "wrong_solutions": [sleeper]})
    quick = [p for p in sample_problems() if p.domain == "choice"][:3]
    phase_quick = _write_jsonl(tmp_path / "quick.jsonl", quick)
    phase_code = _write_jsonl(tmp_path / "code.jsonl", [code_problem])
    db = tmp_path / "warehouse.duckdb"
    pool = str(REPO_ROOT / "deployments" / "pools" / "local.yaml")
    run_tmp = tmp_path / "run-tmp"  # the run's TMPDIR: where any file of its own would land
    run_tmp.mkdir()
    host_tmp_before = set(os.listdir("/tmp"))
    env = {**os.environ, "TMPDIR": str(run_tmp), "CONDUCTOR_SANDBOX_LAUNCHER": launcher,
           "CONDUCTOR_SANDBOX_ISOLATION": "strict", "CONDUCTOR_HOME": str(tmp_path / "home")}

    killed = subprocess.Popen([sys.executable, "-c", RUN, str(db), pool, "killed", phase_quick, phase_code],
                              env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: dict[int, str] = {}
    try:
        # wait until the program and its grandchild run inside the sandbox (seen by the names they gave
        # themselves); generous: the machine is shared and loaded
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and killed.poll() is None:
            seen = {pid: comm for pid, comm in _comms().items() if comm in (program_name, grandchild_name)}
            if len(set(seen.values())) == 2:
                break
            time.sleep(0.1)
        assert len(set(seen.values())) == 2, (killed.poll(), seen)
        sandbox = _descendants(killed.pid)  # bwrap, the sandbox's pid 1, the program (the grandchild escaped the tree)
        assert set(seen) - sandbox <= {p for p, c in seen.items() if c == grandchild_name}
    finally:
        killed.send_signal(signal.SIGKILL)  # the run's Python process only
        out, err = killed.communicate(timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert "phase 0: 3 recorded" in out and "phase 1" not in out, (out, err[-2000:])

    # nothing sandboxed outlives the run: not the program, not its grandchild, not bwrap
    doomed = set(seen) | sandbox
    deadline = time.monotonic() + 30
    while _living(doomed) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = {p: _comms().get(p) for p in _living(doomed)}
    for pid in survivors:  # ours: do not leave them to the machine when the check fails
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert survivors == {}
    assert not [c for c in _comms().values() if token in c]
    # no sandbox file: the program's files lived in memfds and its own tmpfs
    assert list(run_tmp.iterdir()) == []
    # the host /tmp is shared with other jobs, whose sandboxes come and go: a name a sandbox uses that
    # is new and still there after a while is a leftover
    def new_sandbox_names() -> set[str]:
        return {n for n in set(os.listdir("/tmp")) - host_tmp_before
                if n.startswith(("conductor-sbx", "conductor-sandbox")) or n == "w"}

    deadline = time.monotonic() + 30
    while new_sandbox_names() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not new_sandbox_names()

    with TraceStore(db) as store:  # the killed run is still `running`, its traces are in the tables
        assert store.query("SELECT status FROM runs").column(0).to_pylist() == ["running"]
        assert _count(store, "SELECT count(*) FROM traces WHERE run_id = 'killed' AND depth = 0") == 3

    nxt = subprocess.run([sys.executable, "-c", RUN, str(db), pool, "next", phase_quick], env=env, cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=300)
    assert nxt.returncode == 0, nxt.stderr[-3000:]
    assert "abandoned: ['killed']" in nxt.stdout and "finished" in nxt.stdout, nxt.stdout

    with TraceStore(db) as store:
        status = {r["run_id"]: r["status"] for r in store.query("SELECT run_id, status FROM runs").to_pylist()}
        assert status == {"killed": "abandoned", "next": "finished"}
        assert _count(store, "SELECT count(*) FROM traces WHERE run_id = 'killed' AND depth = 0") == 3  # kept
        assert store.query("SELECT DISTINCT run_id FROM v_questions").column(0).to_pylist() == ["next"]
        assert _count(store, "SELECT count(*) FROM v_questions") == 3
        board = store.query("SELECT method, simulated, questions FROM v_leaderboard").to_pylist()
        assert sum(r["questions"] for r in board) == 3 and all(r["simulated"] for r in board), board
        assert store.query("SELECT DISTINCT run_id FROM v_run_summary").column(0).to_pylist() == ["next"]
