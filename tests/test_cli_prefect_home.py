"""Every `conductor` command keeps Prefect's state under CONDUCTOR_HOME (as `make` does): the entry
point sets PREFECT_HOME=$CONDUCTOR_HOME/prefect when the user has not set it, before Prefect is
imported, so Prefect itself reads it; a user's own PREFECT_HOME wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The app runs one cheap command, then Prefect is imported and says where its home is.
SCRIPT = """
from conductor.cli import app
app(["pool", "show", "deployments/pools/local.yaml"], standalone_mode=False)
import prefect.settings
print("PREFECT HOME", prefect.settings.get_current_settings().home)
"""


def prefect_home(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    return next(line for line in done.stdout.splitlines() if line.startswith("PREFECT HOME")).split(" ", 2)[2]


def test_prefect_home_is_under_conductor_home(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_HOME"}
    env["CONDUCTOR_HOME"] = str(tmp_path / "home")
    assert prefect_home(env) == str(tmp_path / "home" / "prefect")
    env["PREFECT_HOME"] = str(tmp_path / "mine")
    assert prefect_home(env) == str(tmp_path / "mine")
