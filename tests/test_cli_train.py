"""`conductor train` from the shell, at the sizes a user meets: a warm start that logs several
times (the bar is updated more than once) and a GRPO run across a chunk boundary (a run that
stops at its chunk's end, then resumes to the end). One bar per stage and the summary, not the
trainers' raw log dicts or a bar per library call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A warm start of 400 examples (25 steps of 16: it logs at steps 10 and 20, then its summary) and
# GRPO steps of 2 questions x 4 rollouts.
SMALL = ["sft_problems=200", "sft_copies=2", "per_device_train_batch_size=8", "num_generations=4",
         "validation_problems=8", "temperature=0.5", "save_steps=1"]


def _train(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    conductor = Path(sys.executable).parent / "conductor"
    args = [str(conductor), "train", "--profile", "local", "--out", str(tmp_path / "run"), "--max-steps", "2",
            "--no-track", "--no-warehouse", "--compare", "0", *extra]
    for kv in SMALL:
        args += ["--set", kv]
    env = {**os.environ, "CONDUCTOR_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)


def test_train_cli_warm_start_and_a_chunked_grpo_run(tmp_path: Path) -> None:
    first = _train(tmp_path, "--set", "stop_at_step=1")  # the first chunk: warm start, GRPO step 1
    out = first.stdout + first.stderr
    assert first.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    assert "stopped: chunk_end after 1 steps" in first.stdout
    assert "warm start:" in first.stderr and "GRPO:" in first.stderr  # tqdm's bars
    # The warm start logged more than once: its bar reached step 20 (tqdm's "20step" or later).
    assert "warm start: 20" in first.stderr.replace("\r", "\n") or "warm start: 25" in first.stderr, first.stderr[-2000:]
    # The trainers' log dicts went to the bars, not to stdout as transformers' PrinterCallback
    # prints them; the libraries' own bars are off.
    assert "{'loss'" not in out and "'reward'" not in out
    for library_bar in ("Tokenizing train dataset", "Loading weights", "Writing model shards", "Map"):
        assert library_bar not in out, library_bar

    second = _train(tmp_path, "--resume")  # the next chunk, from the first's checkpoint, to the end
    out = second.stdout + second.stderr
    assert second.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    assert "stopped: max_steps after 2 steps" in second.stdout
    assert "warm start:" not in second.stderr  # the warm-started model is reused, not trained again
