"""What a flow started from the shell prints on the terminal. Prefect logs one line per finished
task run ("Task run 'spend-674' - Finished in state Completed()"): a night has ~50, which bury its
stages' lines. On the terminal they are dropped; the Prefect UI (the API's log handler) still has
every one, and a task that fails, retries, or is read from the cache still prints.

A Ctrl-C or SIGTERM crashes every task and flow run it passes through, and each says so twice
("Crash detected! Execution was aborted by an interrupt signal.", "Finished in state
Crashed(...)"): a dozen lines for one keypress, which the command sums up in one of its own. A
signal that lands as Prefect begins a task run makes the engine fail as it records the crash
("ValueError: Task run is not set", raised while handling the stop: conductor/stops.py), and the
task and flow runs print that error's traceback; those lines are the stop's too, and are dropped."""

from __future__ import annotations

import logging

from conductor.stops import is_stop

_TASK_RUNS = "prefect.task_runs"
_BY_A_SIGNAL = ("Execution was aborted by an interrupt signal.", "Execution was aborted by a termination signal.",
                # Prefect's engine stopped as a task run begins (its state lines carry no exception)
                "Task run is not set")


class HideCompletedTaskRuns(logging.Filter):
    """Drops a task run's "Finished in state Completed()" line; passes everything else."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == _TASK_RUNS and record.levelno < logging.WARNING
                    and record.getMessage().startswith("Finished in state Completed("))


class HideCrashesBySignals(logging.Filter):
    """Drops a task or flow run's lines about its crash by a signal (Ctrl-C, SIGTERM)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("prefect."):
            return True
        if record.exc_info and is_stop(record.exc_info[1]):
            return False  # an error raised while a stop was handled, with its traceback
        return not any(m in record.getMessage() for m in _BY_A_SIGNAL)


def quiet_terminal() -> None:
    """Install the filter on Prefect's console handler (idempotent)."""
    from prefect.logging.handlers import PrefectConsoleHandler

    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler):
            for hide in (HideCompletedTaskRuns, HideCrashesBySignals):
                if not any(isinstance(f, hide) for f in handler.filters):
                    handler.addFilter(hide())
