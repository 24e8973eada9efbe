"""A stop from outside (Ctrl-C, SIGTERM, a cancelled task) as opposed to an error, and the few
writes a stop must not cut in half.

A stop reaches the code as an exception that is not an `Exception`: KeyboardInterrupt (SIGINT),
asyncio.CancelledError, SystemExit, or an orchestrator's own (Prefect raises its
TerminationSignal for a SIGTERM). Python keeps these out of `except Exception` because they are
not errors: what was running is ended `cancelled` (a warehouse row) or KILLED (an MLflow run),
never `failed`, and its finished work is kept. A stop lands wherever the code is, and an error
raised while it is being handled belongs to it: Prefect's engine, stopped as a task run begins,
fails as it records the crash ("ValueError: Task run is not set", with the stop as its context).

`signals_held` is for the other side: a handful of registry writes that only mean something
together (a champion alias and its recorded decision). A Ctrl-C that arrives inside waits for
them (a fraction of a second) and is delivered when the block ends. `stops_not_swallowed` keeps
a stop that a finalizer's `__del__` swallowed from being lost."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)


def stop_of(exc: BaseException | None) -> BaseException | None:
    """The stop `exc` is, or was raised while handling (its `__context__` chain); None for an error."""
    while exc is not None and isinstance(exc, Exception):
        exc = exc.__context__
    return exc


def is_stop(exc: BaseException | None) -> bool:
    """Whether `exc` stops the work from outside (not an error of the work itself)."""
    return stop_of(exc) is not None


@contextlib.contextmanager
def signals_held(signals: tuple[int, ...] = HELD) -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends, then go to the handlers that were in place
    (each once). Only the main thread can set handlers, and only it runs them: elsewhere (a
    server's thread, where no handler would interrupt the block anyway) it holds nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def hold(signum: int, frame: object) -> None:
        received.append(signum)

    previous = {s: signal.signal(s, hold) for s in signals}
    try:
        yield
    finally:
        for s, handler in previous.items():
            # None: a handler not set from Python; the default is the nearest thing to it.
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        for s in dict.fromkeys(received):
            signal.raise_signal(s)


@contextlib.contextmanager
def stops_not_swallowed() -> Iterator[None]:
    """A signal handler that raises (Ctrl-C's KeyboardInterrupt; Prefect's TerminationSignal for a
    SIGTERM) runs wherever the main thread is, a finalizer (`__del__`) included, and Python drops
    what a finalizer raises ("Exception ignored in ..."): the stop was lost, and a night trained on
    after its SIGTERM. Inside this block such a stop's signal is sent again, a moment later (sent
    from the hook, its handler would run inside the hook, which drops what it raises too), and
    again if that one lands in a finalizer; anything else dropped there is reported as before."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        exc = unraisable.exc_value
        signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else getattr(exc, "signal", None)
        if is_stop(exc) and isinstance(signum, int):
            again = threading.Timer(0.1, os.kill, (os.getpid(), signum))
            again.daemon = True
            again.start()
        else:
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous
