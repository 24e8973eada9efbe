"""A GRPO chunk under `accelerate launch`: one process per device (or per CPU process with
gloo), each running `conductor train --config CHUNK.json --resume`. The chunk's config is the
in-process chunk's, written as JSON; rank 0 writes the chunk's result, every rank a line saying
how far it stepped; the launch's output streams into the calling task's log line by line.

accelerate 1.15 starts several CPU processes only through its torchrun launcher:
`accelerate launch --cpu --num_processes 2` runs ONE process unless MPI is set up. A config with
`distributed_type: MULTI_GPU` (deployments/accelerate/cpu_2proc.yaml) starts the processes, and
the profile's `use_cpu` makes each join torch.distributed with gloo."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
from collections import deque
from pathlib import Path
from conductor.training.chunks import ChunkPlan
from conductor.training.result import TrainResult
from tasks.training_sink import ingest_launched


def script(name: str) -> str:
    """A console script of this environment (`accelerate`, and `conductor`, which accelerate runs
    as each rank's script), else the one on PATH."""
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.is_file() else (shutil.which(name) or name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch_command(accelerate_config: str, chunk_config: Path | str, result: Path | str, run_id: str | None,
                   port: int | str | None = None) -> list[str]:
    """The chunk's command line. A free rendezvous port by default: two launches on one host (two
    nights, a retry while the last one's port is in TIME_WAIT) must not share accelerate's 29500."""
    return [script("accelerate"), "launch", "--config_file", accelerate_config, "--main_process_port",
            str(port if port is not None else _free_port()),
            script("conductor"), "train", "--config", str(chunk_config), "--resume", "--result", str(result),
            "--no-track", "--compare", "0", *(["--run-id", run_id] if run_id else ["--no-warehouse"])]


def run_chunk(plan: ChunkPlan, logger: logging.Logger | logging.LoggerAdapter) -> TrainResult:
    """Run the chunk under accelerate and return rank 0's result (`conductor train --result`); a
    failed launch raises with its last lines, so the task's retries resume from the checkpoint.
    Rollouts the ranks staged are ingested here, under the plan's warehouse run."""
    assert plan.accelerate_config is not None
    chunks = Path(plan.output_dir) / "chunks"
    chunks.mkdir(parents=True, exist_ok=True)
    cfg_file, result = chunks / f"to-step-{plan.until_step}.json", chunks / f"to-step-{plan.until_step}.result.json"
    cfg_file.write_text(plan.model_dump_json(indent=1), encoding="utf-8")
    result.unlink(missing_ok=True)
    cmd = launch_command(plan.accelerate_config, cfg_file, result, plan.run_id)
    logger.info("launch: %s", " ".join(cmd))
    tail: deque[str] = deque(maxlen=20)
    # torch's elastic agent leaves a `torchelastic_*` folder in the temp dir at every launch; the
    # launch gets a temp dir of its own inside the chunk, removed when it ends
    scratch = chunks / f"to-step-{plan.until_step}.tmp"
    scratch.mkdir(exist_ok=True)
    try:
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(scratch)}) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:  # universal newlines: a progress bar's \r updates are lines too
                if line := line.rstrip():
                    tail.append(line)
                    logger.info("%s", line)
            rc = proc.wait()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if rc != 0 or not result.is_file():
        raise RuntimeError(f"accelerate launch of GRPO to step {plan.until_step} exited {rc}: " + " | ".join(tail))
    out = TrainResult.from_json(result.read_text(encoding="utf-8"))
    if plan.run_id:
        ingest_launched(plan.run_id)
    return out
