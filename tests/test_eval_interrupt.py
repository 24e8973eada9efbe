"""Ctrl-C during `conductor eval`, as a user presses it: SIGINT to the command while its questions
are being answered. The command prints one line saying how many questions were recorded, every
one of them is in the warehouse (none of the batches handed to the writer thread is lost), every
run of the evaluation is `cancelled` (not left `running`), and the Prefect flow run is Cancelled,
not Crashed. Real parts: the `conductor` executable, the session's Prefect test server, DuckDB,
the simulated pool slowed to one second a call so that the evaluation is surely mid-way."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from conductor.config import REPO_ROOT
from conductor.training.problems import bank_splits
from tasks.evaluation import BenchmarkSolve
from tests.local_pool import local_pool
from warehouse import TraceStore

CONDUCTOR = Path(sys.executable).with_name("conductor")
PROBLEMS = 400  # at 16 questions in flight and ~1 s a call: ~25 s of answering, interrupted early
BATCH = BenchmarkSolve.batch_size  # questions a solve hands to the warehouse at once


def slow_pool(path: Path) -> Path:
    """The local pool at ~1 s a call, written to `path`."""
    path.write_text(yaml.safe_dump(local_pool(latency_ms=1000, sigma=0.1)))
    return path


def _flow_run_states(api_url: str) -> dict[str, str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName

    async def read() -> dict[str, str]:
        async with get_client() as client:
            runs = await client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=["conductor-eval"])))
            return {str(r.id): r.state.type.value for r in runs if r.state is not None}

    return asyncio.run(read())


def interrupt_while_answering(proc: subprocess.Popen, *, group: bool = False,
                              sig: signal.Signals = signal.SIGINT) -> tuple[str, int]:
    """Wait until the evaluation's first batch of questions is answered (its progress line; each
    call takes ~1 s, 16 in flight, so ~3/4 of the questions are still to come), send SIGINT (to
    the process's whole group with `group`, as a terminal does), wait for the exit. Returns the
    process's output and how many lines it had printed when interrupted."""
    lines: list[str] = []
    answering = threading.Event()
    interrupted_at: list[int] = []

    def send(sig: signal.Signals) -> None:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if re.search(rf"\b{BATCH} of {PROBLEMS} questions answered", line):  # the first batch
                answering.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert answering.wait(timeout=400), "".join(lines)[-3000:]
        interrupted_at.append(len(lines))
        send(sig)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            send(signal.SIGKILL)
    reader.join(timeout=30)
    return "".join(lines), interrupted_at[0]


# The signal, the one line the command prints, and the flow run's end: Ctrl-C goes through the
# command's cancellation (Cancelled, with the count); a SIGTERM reaches Prefect's own handler
# first, whose rule is Crashed, and the command's line then names the signal.
STOPS = [(signal.SIGINT, r"^interrupted: (\d+) questions recorded, runs cancelled$", "CANCELLED"),
         (signal.SIGTERM, r"^interrupted by SIGTERM: finished questions recorded, runs cancelled$()", "CRASHED")]


@pytest.mark.parametrize("sig,line,flow_state", STOPS, ids=["ctrl-c", "sigterm"])
def test_ctrl_c_during_an_evaluation_keeps_every_finished_question_and_cancels_the_runs(
        prefect_harness: Path, tmp_path: Path, sig: signal.Signals, line: str, flow_state: str) -> None:
    from prefect.settings import PREFECT_API_URL

    api_url = PREFECT_API_URL.value()
    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(p.model_dump_json() + "\n" for p in bank_splits().train[:PROBLEMS]))
    home, db = tmp_path / "home", tmp_path / "w.duckdb"
    env = os.environ | {"CONDUCTOR_HOME": str(home), "PREFECT_HOME": str(home / "prefect"), "PREFECT_API_URL": api_url}
    before = _flow_run_states(api_url)
    proc = subprocess.Popen(
        [str(CONDUCTOR), "eval", "-m", "template:single", "--problems", str(problems), "--pool",
         str(slow_pool(tmp_path / "slow.yaml")), "--db", str(db), "--no-mlflow", "--out", str(tmp_path / "out")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = interrupt_while_answering(proc, sig=sig)
    assert proc.returncode == 128 + sig, output[-3000:]
    said = re.findall(line, output, flags=re.MULTILINE)
    assert len(said) == 1, output[-3000:]
    assert "Traceback" not in output and "CancelledError" not in output, output[-3000:]
    # Prefect says "Crash detected" for the flow it ends Crashed (its rule for SIGTERM), never else
    assert ("Crash detected" in output) == (flow_state == "CRASHED"), output[-3000:]
    with TraceStore(db, read_only=True) as store:
        runs = store.query("SELECT kind, status, finished_at FROM runs").to_pylist()
        traces = store.query("SELECT count(*) AS n FROM traces WHERE depth = 0").to_pylist()[0]["n"]
    recorded = int(said[0]) if said[0] else traces  # the count, where the line states one
    assert BATCH <= recorded < PROBLEMS  # interrupted mid-way, after a batch was answered
    assert traces == recorded  # every question it counted is in the warehouse
    assert {(r["kind"], r["status"]) for r in runs} == {("evaluation", "cancelled"), ("eval", "cancelled")}
    assert all(r["finished_at"] is not None for r in runs)
    new = {k: v for k, v in _flow_run_states(api_url).items() if k not in before}
    assert list(new.values()) == [flow_state], new


# The child starts with Ctrl-C's default handler, as from a user's shell: a pytest worker that an
# earlier test left with SIGINT ignored would hand that on to the child (a child that starts with
# SIGINT ignored gets no KeyboardInterrupt at all), and a fresh-clone CI saw exactly that twice.
LEFT_BY_AN_INTERRUPT = """\
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
import sys
from pathlib import Path
from conductor.evaluation.config import EvalConfig
from flows.evaluation import evaluation_flow

problems, pool, db, out = sys.argv[1:5]
evaluation_flow(EvalConfig(methods=["template:single"], problems_file=Path(problems), pool_file=Path(pool),
                           log_to_mlflow=False, out_dir=Path(out)), db_path=db)
"""


def test_an_interrupt_without_the_commands_handler_still_stops_the_solves(prefect_harness: Path,
                                                                           tmp_path: Path) -> None:
    """An evaluation called with no command's cancellation and Python's own Ctrl-C (a
    KeyboardInterrupt in the flow's thread; a SIGTERM in a flow is Prefect's TerminationSignal,
    raised the same way): the flow stops its solves as it unwinds, instead of waiting for the
    worker threads to answer every question, what they finished is written, and its runs end
    `cancelled` on the way out (none left `running`)."""
    from prefect.settings import PREFECT_API_URL

    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(p.model_dump_json() + "\n" for p in bank_splits().train[:PROBLEMS]))
    home, db = tmp_path / "home", tmp_path / "w.duckdb"
    env = os.environ | {"CONDUCTOR_HOME": str(home), "PREFECT_HOME": str(home / "prefect"),
                        "PREFECT_API_URL": PREFECT_API_URL.value()}
    proc = subprocess.Popen(
        [sys.executable, "-c", LEFT_BY_AN_INTERRUPT, str(problems), str(slow_pool(tmp_path / "slow.yaml")), str(db),
         str(tmp_path / "out")], env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = interrupt_while_answering(proc)
    assert proc.returncode != 0 and "KeyboardInterrupt" in output, output[-3000:]
    with TraceStore(db, read_only=True) as store:
        traces = store.query("SELECT count(*) AS n FROM traces WHERE depth = 0").to_pylist()[0]["n"]
        runs = store.query("SELECT kind, status, finished_at FROM runs").to_pylist()
    assert BATCH <= traces < PROBLEMS, output[-3000:]  # stopped mid-way, with its finished questions kept
    assert {(r["kind"], r["status"]) for r in runs} == {("evaluation", "cancelled"), ("eval", "cancelled")}, runs
    assert all(r["finished_at"] is not None for r in runs)


def test_waiting_for_the_solves_wakes_for_a_ctrl_c_another_thread_received() -> None:
    """The flow waits for its solve tasks in slices (`flows.evaluation.wait_interruptibly`): a
    SIGINT the kernel hands to a worker thread (here sent to one with `pthread_kill`) raises
    KeyboardInterrupt in the waiting thread while the solve is still running. A wait with no
    timeout raised it only once the solve ended."""
    import concurrent.futures
    import time
    import uuid

    from prefect.futures import PrefectConcurrentFuture

    from flows.evaluation import wait_interruptibly

    solve: concurrent.futures.Future = concurrent.futures.Future()
    ends = threading.Timer(30, solve.set_result, args=(None,))  # a solve that ends by itself, late
    ends.start()
    sender = threading.Thread(target=lambda: (time.sleep(0.5), signal.pthread_kill(threading.get_ident(), signal.SIGINT)))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        sender.start()
        with pytest.raises(KeyboardInterrupt):
            wait_interruptibly([PrefectConcurrentFuture(task_run_id=uuid.uuid4(), wrapped_future=solve)])
        assert not solve.done()  # woken by the Ctrl-C, not by the solve's end
    finally:
        signal.signal(signal.SIGINT, previous)
        ends.cancel()
        sender.join()


def test_a_solve_done_before_the_wait_keeps_its_final_state(prefect_harness: Path) -> None:
    """A solve task that ended before the flow waits on it: its future still holds the task's final
    state (a failed solve counts as failed), not the state the API server has on record (none here)."""
    import concurrent.futures
    import uuid

    from prefect.futures import PrefectConcurrentFuture
    from prefect.states import Failed

    from flows.evaluation import wait_interruptibly

    solve: concurrent.futures.Future = concurrent.futures.Future()
    solve.set_result(Failed(message="the solve raised"))
    future = PrefectConcurrentFuture(task_run_id=uuid.uuid4(), wrapped_future=solve)
    wait_interruptibly([future])
    assert future.state.is_failed()
