"""Test session setup: offline, isolated from the user's home, wide terminal output."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

# Set before any project or rich import reads them.
_home = tempfile.mkdtemp(prefix="conductor-test-home-")
# Removed when the test process ends (after pytest's own teardown, the Prefect harness's included),
# so a test run leaves nothing in TMPDIR.
atexit.register(shutil.rmtree, _home, ignore_errors=True)
os.environ["CONDUCTOR_HOME"] = _home  # never the user's or the Makefile's home
os.environ["PREFECT_HOME"] = os.path.join(_home, "prefect")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["COLUMNS"] = "200"

# --- verifiers, data and curation (issue 3) ---
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

# `datasets` caches what it reads, local JSONL included: keep it inside the test home
os.environ["HF_DATASETS_CACHE"] = os.path.join(_home, "hf-datasets")


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[Path]:
    """One Prefect test server per test process (~18-27 s to start on 2 cores; `make test` runs
    TEST_WORKERS processes, each with its own CONDUCTOR_HOME): reuse this fixture, never start
    another harness. Yields the CONDUCTOR_HOME flows write to."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield Path(os.environ["CONDUCTOR_HOME"])


# What MLflow writes into the working directory when a run is logged without the project's store
# (`registry.store.use_store`): a test that does so litters the checkout it runs in.
MLFLOW_DEFAULTS = ("mlruns", "mlartifacts", "mlflow.db")


@pytest.fixture(scope="session")
def mlflow_files_at_start() -> set[str]:
    return {name for name in MLFLOW_DEFAULTS if (Path.cwd() / name).exists()}


@pytest.fixture(autouse=True)
def nothing_written_into_the_working_directory(mlflow_files_at_start: set[str]) -> Iterator[None]:
    """Checked after each test against the session's start, so a module fixture that wrote them
    fails its module's first test."""
    yield
    cwd = Path.cwd()
    made = sorted(name for name in MLFLOW_DEFAULTS if name not in mlflow_files_at_start and (cwd / name).exists())
    mlflow_files_at_start.update(made)  # one test fails for it, not every test after
    assert not made, (f"{', '.join(made)} appeared in {cwd} during this test, its module's fixtures or a test"
                      " beside it: log runs through registry.store.use_store's experiment")


@pytest.fixture(autouse=True)
def prefect_console_on_a_live_stderr() -> Iterator[None]:
    """A flow run inside `CliRunner().invoke` sets Prefect's console handler up on the runner's
    stderr, which is closed when the command returns; the next flow in this process then logs into
    a closed file (ValueError, then a RecursionError through Prefect's print-as-log). Seen when
    test_evaluation_flow and test_training_flow share a process. After each test, such a handler
    is pointed at the process's own stderr (never closed)."""
    yield
    import logging

    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                       if isinstance(lg, logging.Logger))]
    for handler in (h for lg in loggers for h in lg.handlers):
        if type(handler).__name__ == "PrefectConsoleHandler" and getattr(handler.stream, "closed", False):
            handler.stream = sys.__stderr__  # not setStream: it flushes the closed one first
            handler.console.file = sys.__stderr__


@pytest.fixture(scope="module")
def fast_pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """deployments/pools/local.yaml with 1 ms latency, so hundreds of questions run in seconds."""
    import yaml

    from tests.local_pool import local_pool

    path = tmp_path_factory.mktemp("pool") / "fast.yaml"
    path.write_text(yaml.safe_dump(local_pool(latency_ms=1)))
    return path


@pytest.fixture
def plot_titles(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """(title, simulated) of every plot saved during the test, in order: how each PNG was
    labelled, which the pixels do not say. The plots are still drawn and saved."""
    from conductor.evaluation import plots

    titles: list[tuple[str, bool]] = []
    save = plots._save

    def spy(fig, path: Path, title: str, simulated: bool) -> Path:  # noqa: ANN001
        titles.append((title, simulated))
        return save(fig, path, title, simulated)

    monkeypatch.setattr(plots, "_save", spy)
    return titles
