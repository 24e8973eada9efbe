"""The quiet, offline environment of a benchmark that trains or loads a model.

Call `quiet_environment()` at the top of the script, after putting the repo root on sys.path and
before importing anything that reads these variables (transformers, datasets, huggingface_hub,
MLflow read them at import time)."""

from __future__ import annotations

import os

# The CLI's quiet switches (Makefile, `conductor train`): no library progress bars ("Tokenizing
# train dataset", weight loading, MLflow transfers), so the benchmark's own lines and tables are
# what it prints. Set them in the environment to see the bars.
QUIET_SWITCHES: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",  # nothing downloads from the hub
    "TOKENIZERS_PARALLELISM": "false",  # no fork warning from the tokenizers' thread pool
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
}


def quiet_environment() -> None:
    """Each switch set for this process unless the environment already sets it."""
    for name, value in QUIET_SWITCHES.items():
        os.environ.setdefault(name, value)
