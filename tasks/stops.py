"""A stop from outside (Ctrl-C, SIGTERM: conductor/stops.py) as Prefect's tasks and flows meet it:
never retried, and, for a flow the command's Ctrl-C stopped, told apart from a SIGTERM."""

from __future__ import annotations

from typing import Any

from prefect.exceptions import CancelledRun

from conductor.stops import is_stop, stop_of


def unless_stopped(task: Any, task_run: Any, state: Any) -> bool:
    """A task's `retry_condition_fn`: retry an error, never a stop. A stop can reach a task's
    engine as an error (a library, or Prefect's own engine, raising while it unwinds): retried, a
    GRPO chunk stopped by SIGTERM trained on as if nothing had happened."""
    return not (isinstance(state.data, BaseException) and is_stop(state.data))


def ctrl_c_in(exc: BaseException) -> BaseException:
    """The Ctrl-C that ended a flow: `exc` itself (a KeyboardInterrupt; the CancelledRun of a flow
    whose solves `Cancellation.stop` stopped) or the KeyboardInterrupt an error was raised while
    handling. Anything else is raised again: an error as it is, another stop (Prefect's
    TerminationSignal for a SIGTERM) as that stop, even where Prefect's engine, stopped as a task
    run began, failed as it recorded the crash (conductor/stops.py), so that Prefect ends the
    flow run by its own rule."""
    stop = exc if isinstance(exc, CancelledRun) else stop_of(exc)
    if isinstance(stop, (KeyboardInterrupt, CancelledRun)):
        return stop
    raise stop or exc
