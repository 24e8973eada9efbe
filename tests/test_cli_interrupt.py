"""Ctrl-C during `conductor eval` with no PREFECT_API_URL (the temporary Prefect server), as a
terminal sends it: SIGINT to the command's whole process group. The server is tied to the command
in a session of its own, so the signal does not reach it: after the interrupt the command prints
at most 5 lines and no traceback, exits 130, leaves no run `running`, and every question it
counted is in the warehouse. (tests/test_eval_interrupt.py covers the same with the session's
Prefect server, where no temporary one starts.)"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from conductor.training.problems import bank_splits
from tests.test_eval_interrupt import CONDUCTOR, PROBLEMS, interrupt_while_answering, slow_pool
from warehouse import TraceStore


def _as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a child of a pytest worker may inherit it ignored


def test_ctrl_c_during_eval_with_its_temporary_server_is_quiet(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(p.model_dump_json() + "\n" for p in bank_splits().train[:PROBLEMS]))
    home, db = tmp_path / "home", tmp_path / "w.duckdb"
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_HOME")}
    env["CONDUCTOR_HOME"] = str(home)
    proc = subprocess.Popen(
        [str(CONDUCTOR), "eval", "-m", "template:single", "--problems", str(problems), "--pool",
         str(slow_pool(tmp_path / "slow.yaml")), "--db", str(db), "--no-mlflow", "--out", str(tmp_path / "out")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        preexec_fn=_as_from_a_terminal)
    # Ctrl-C: SIGINT to the terminal's foreground process group
    output, interrupted_at = interrupt_while_answering(proc, group=True)
    after = [line for line in output.split("\n")[interrupted_at:] if line.strip()]
    assert proc.returncode == 130, output[-3000:]
    assert len(after) <= 5 and "Traceback" not in output, output[-3000:]
    said = re.findall(r"^interrupted: (\d+) questions recorded, runs cancelled$", output, flags=re.MULTILINE)
    assert len(said) == 1, output[-3000:]
    with TraceStore(db, read_only=True) as store:
        statuses = store.query("SELECT status FROM runs").column(0).to_pylist()
        traces = store.query("SELECT count(*) AS n FROM traces WHERE depth = 0").to_pylist()[0]["n"]
    assert statuses and set(statuses) == {"cancelled"}
    assert traces == int(said[0]) > 0
