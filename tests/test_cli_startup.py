"""Every `conductor` command builds the whole app first, so what the app imports is paid by each
one (`conductor sql`, `conductor --help`). The training stack stays out of it: importing
`ConductorTrainingConfig` (TRL's GRPOConfig) to build `conductor train`'s options once made every
command start ~4 s later on 2 cores."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("trl", "transformers", "torch", "peft", "accelerate")


def test_building_the_cli_app_imports_no_training_stack() -> None:
    code = ("import sys, conductor.cli.main; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
