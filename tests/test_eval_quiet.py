"""`conductor eval` as a user runs it (its own process, the shipped eval sets curated through
`datasets`): its output is the flow's lines and the table, not a library progress bar per
curated file (issue 33, quiet by default)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONDUCTOR = Path(sys.executable).with_name("conductor")


def test_eval_prints_no_library_bars(prefect_harness: Path, tmp_path: Path) -> None:
    from prefect.settings import PREFECT_API_URL

    home = tmp_path / "home"
    env = os.environ | {"CONDUCTOR_HOME": str(home), "PREFECT_HOME": str(home / "prefect"),
                        "PREFECT_API_URL": PREFECT_API_URL.value()}
    done = subprocess.run([str(CONDUCTOR), "eval", "-m", "single:sim-generalist", "--limit", "1", "--no-mlflow"],
                          env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "Task run 'load-math" in output  # the eval sets were curated here (through `datasets`)
    assert "single-sim-generalist" in done.stdout
    assert "Generating train split" not in output and "examples/s]" not in output, output[-3000:]
