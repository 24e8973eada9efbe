"""`conductor train` from the shell, warm start included: one bar per stage and the summary, not
the trainers' raw log dicts or a bar per library call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A small warm start (64 problems x 1 draw) and one GRPO step of 2 questions x 4 rollouts.
SMALL = ["sft_problems=64", "sft_copies=1", "per_device_train_batch_size=8", "num_generations=4",
         "validation_problems=8", "temperature=0.5", "save_steps=1"]


def test_train_cli_shows_one_bar_per_stage(tmp_path: Path) -> None:
    conductor = Path(sys.executable).parent / "conductor"
    args = [str(conductor), "train", "--profile", "local", "--out", str(tmp_path / "run"), "--max-steps", "1",
            "--no-track", "--no-warehouse", "--compare", "0"]
    for kv in SMALL:
        args += ["--set", kv]
    env = {**os.environ, "CONDUCTOR_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "stopped: max_steps after 1 steps" in done.stdout
    assert "warm start:" in done.stderr and "GRPO:" in done.stderr  # tqdm's bars
    # The trainers' log dicts went to the bars, not to stdout as transformers' PrinterCallback
    # prints them; the libraries' own bars are off.
    assert "{'loss'" not in out and "'reward'" not in out
    for library_bar in ("Tokenizing train dataset", "Loading weights", "Writing model shards", "Map"):
        assert library_bar not in out, library_bar
