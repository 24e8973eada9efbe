"""What a flow started from the shell prints on the terminal. Prefect logs one line per finished
task run ("Task run 'spend-674' - Finished in state Completed()"): a night has ~50, which bury its
stages' lines. On the terminal they are dropped; the Prefect UI (the API's log handler) still has
every one, and a task that fails, retries, or is read from the cache still prints."""

from __future__ import annotations

import logging

_TASK_RUNS = "prefect.task_runs"


class HideCompletedTaskRuns(logging.Filter):
    """Drops a task run's "Finished in state Completed()" line; passes everything else."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == _TASK_RUNS and record.levelno < logging.WARNING
                    and record.getMessage().startswith("Finished in state Completed("))


def quiet_terminal() -> None:
    """Install the filter on Prefect's console handler (idempotent)."""
    from prefect.logging.handlers import PrefectConsoleHandler

    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler) and not any(
                isinstance(f, HideCompletedTaskRuns) for f in handler.filters):
            handler.addFilter(HideCompletedTaskRuns())
