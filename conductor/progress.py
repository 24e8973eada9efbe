"""Progress of a workflow as it runs, for whoever watches (a server streaming to its client).

The executor calls `notify` when a round's workflow is known and when each step starts and
finishes. Nothing is reported unless a caller installed an observer for its own context
(`observe`): asyncio tasks copy their context when created, so every step task of one question
reports to that question's observer and to no other. An observer must be quick and must not
raise (what it raises is swallowed: watching never breaks a run)."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

ProgressEvent = dict[str, Any]
Observer = Callable[[ProgressEvent], None]

_observer: ContextVar[Observer | None] = ContextVar("conductor_progress_observer", default=None)


def observe(observer: Observer | None) -> None:
    """Install `observer` for the current context (call it inside the task, or with
    `contextvars.copy_context().run`, that runs the question)."""
    _observer.set(observer)


def watching() -> bool:
    return _observer.get() is not None


def notify(event: ProgressEvent) -> None:
    observer = _observer.get()
    if observer is None:
        return
    try:
        observer(event)
    except Exception:  # noqa: BLE001, S110 - a watcher's bug must not fail the workflow it watches
        pass
