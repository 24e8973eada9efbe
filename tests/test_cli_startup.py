"""Every `conductor` command builds the whole app first, so what the app imports is paid by each
one (`conductor sql`, `conductor --help`, a one-line mistake). The training stack stays out of it:
importing `ConductorTrainingConfig` (TRL's GRPOConfig) to build `conductor train`'s options once made
every command start ~4 s later on 2 cores. So do `datasets` (~1.3 s, with pandas) and matplotlib
(~0.7 s): the commands that read problem files or draw plots import them when they run. Without
them `conductor --help` starts in ~1.7 s here, not ~3.5 s."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["trl", "transformers", "torch", "peft", "accelerate", "datasets", "pandas", "matplotlib", "mlflow",
         "prefect"]

PROBE = """\
import json, sys
from typer.main import get_command
from conductor.cli.main import app
print(json.dumps({"heavy": [m for m in json.loads(sys.argv[1]) if m in sys.modules],
                  "commands": sorted(get_command(app).commands)}))
"""


def test_building_the_cli_app_imports_no_heavy_library() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(HEAVY)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    built = json.loads(done.stdout)
    assert built["heavy"] == []
    # the layers' commands (the `conductor.cli` entry points) were built too, so they were checked
    assert {"ask", "sql", "nightly", "eval", "serve", "train", "deploy"} <= set(built["commands"])
