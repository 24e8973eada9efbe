"""A GRPO chunk under `accelerate launch`: one process per device (or per CPU process with
gloo), each running `conductor train --config CHUNK.json --resume`. The chunk's config is the
in-process chunk's, written as JSON; rank 0 writes the chunk's result, every rank a line saying
how far it stepped; the launch's output streams into the calling task's log line by line."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
from collections import deque
from dataclasses import fields
from pathlib import Path
from typing import Any

from conductor.training.config import ConductorTrainingConfig
from conductor.workers.pool import read_pool_file


def conductor_executable() -> str:
    """The `conductor` script of this environment (accelerate runs it as each rank's script)."""
    beside = Path(sys.executable).with_name("conductor")
    return str(beside) if beside.is_file() else (shutil.which("conductor") or "conductor")


def write_chunk_config(config: ConductorTrainingConfig, path: Path) -> Path:
    """The config as JSON `conductor train --config` reads back (init fields only; hub tokens,
    which TRL's `to_dict` masks, are left to the environment)."""
    init = {f.name for f in fields(config) if f.init}
    values = {k: v for k, v in config.to_dict().items() if k in init and not k.endswith("_token")}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values, default=str, indent=1), encoding="utf-8")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch_command(accelerate_config: str, chunk_config: Path | str, result: Path | str, run_id: str | None,
                   port: int | str | None = None) -> list[str]:
    """The chunk's command line. A free rendezvous port by default: two launches on one host (two
    nights, a retry while the last one's port is in TIME_WAIT) must not share accelerate's 29500."""
    return ["accelerate", "launch", "--config_file", accelerate_config, "--main_process_port",
            str(port if port is not None else _free_port()),
            conductor_executable(), "train", "--config", str(chunk_config), "--resume", "--result", str(result),
            "--no-track", "--compare", "0", *(["--run-id", run_id] if run_id else ["--no-warehouse"])]


def run_chunk(config: ConductorTrainingConfig, accelerate_config: str, run_id: str | None,
              logger: logging.Logger | logging.LoggerAdapter) -> dict[str, Any]:
    """Run the chunk under accelerate and return rank 0's result (TrainResult's fields); a
    failed launch raises with its last lines, so the task's retries resume from the checkpoint."""
    chunks = Path(config.output_dir) / "chunks"
    cfg_file = write_chunk_config(config, chunks / f"to-step-{config.max_steps}.json")
    result = chunks / f"to-step-{config.max_steps}.result.json"
    result.unlink(missing_ok=True)
    cmd = launch_command(accelerate_config, cfg_file, result, run_id)
    logger.info("launch: %s", " ".join(cmd))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    tail: deque[str] = deque(maxlen=20)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                tail.append(line)
                logger.info("%s", line)
        rc = proc.wait()
    if rc != 0 or not result.is_file():
        raise RuntimeError(f"accelerate launch of GRPO to step {config.max_steps} exited {rc}: " + " | ".join(tail))
    out = json.loads(result.read_text(encoding="utf-8"))
    if run_id:
        from tasks.training import ingest_launched

        ingest_launched(run_id, read_pool_file(config.pool_file).simulated)
    return out
