"""Live progress of a request: the executor reports the workflow and each step's start and
finish (conductor/progress.py) to an observer installed in the request's own context, which
puts them on the request's queue for its stream (server/streams.py).

asyncio tasks copy their context when created, so every step task the executor starts for a
request reports to that request's queue, and nothing else's."""

from __future__ import annotations

import asyncio
from typing import Any

from conductor import progress

Event = dict[str, Any]


def watch(events: asyncio.Queue[Event] | None) -> None:
    """In the request's context: send the executor's progress events to `events` (None: none)."""
    progress.observe(events.put_nowait if events is not None else None)
