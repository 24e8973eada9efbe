"""Server-sent event streams of a request in flight: progress as it happens, then the answer.

Progress events come from the request's queue (server/progress.py); the workflow runs in its own
task, so a client that hangs up stops only its stream."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

from conductor.trace import Trace
from server import openai_format as fmt
from server.progress import Event


async def progress(task: asyncio.Task[Trace], events: asyncio.Queue[Event]) -> AsyncIterator[Event]:
    """Each event as it comes, until the task is done and the queue drained."""
    while not (task.done() and events.empty()):
        getter = asyncio.ensure_future(events.get())
        await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            yield getter.result()
        else:
            getter.cancel()


async def stream_chat(task: asyncio.Task[Trace], events: asyncio.Queue[Event], model: str,
                      include_usage: bool, served_by: str | None = None) -> AsyncIterator[str]:
    """The role, then one chunk per progress event (the workflow, then each step's start and
    finish as they happen; in the `conductor` extension field, with an empty delta), then the
    answer as content, then usage (when asked), then [DONE]."""
    chat_id = fmt.new_chat_id()
    yield fmt.chunk(chat_id, model, {"role": "assistant", "content": ""})
    async for event in progress(task, events):
        yield fmt.chunk(chat_id, model, {}, extra={"conductor": event})
    trace: Trace = task.result()
    yield fmt.chunk(chat_id, model, {"content": fmt.answer_text(trace)})
    yield fmt.chunk(chat_id, model, {}, finish="stop", extra={"conductor": fmt.extension(trace, served_by)})
    if include_usage:
        yield fmt.usage_chunk(chat_id, model, trace, served_by)
    yield fmt.DONE


async def stream_response(task: asyncio.Task[Trace], events: asyncio.Queue[Event], model: str,
                          served_by: str | None = None) -> AsyncIterator[str]:
    """The Responses API's stream: created, then progress as `response.conductor.progress` events
    (a type the client passes through untyped), then the message item with its text, then completed."""
    resp_id, msg_id = f"resp_{uuid.uuid4().hex}", f"msg_{uuid.uuid4().hex}"
    seq = iter(range(1_000_000))

    def send(kind: str, **body: object) -> str:
        return fmt.sse({"type": kind, "sequence_number": next(seq), **body}, event=kind)

    yield send("response.created", response=fmt.response_object(None, model, resp_id, msg_id))
    async for event in progress(task, events):
        yield send("response.conductor.progress", conductor=event)
    trace: Trace = task.result()
    text = fmt.answer_text(trace)
    where = {"item_id": msg_id, "output_index": 0, "content_index": 0}
    yield send("response.output_item.added", output_index=0,
               item={"type": "message", "id": msg_id, "status": "in_progress", "role": "assistant", "content": []})
    yield send("response.content_part.added", **where, part={"type": "output_text", "text": "", "annotations": []})
    yield send("response.output_text.delta", **where, delta=text, logprobs=[])
    yield send("response.output_text.done", **where, text=text, logprobs=[])
    yield send("response.content_part.done", **where, part={"type": "output_text", "text": text, "annotations": []})
    done = fmt.response_object(trace, model, resp_id, msg_id, served_by)
    yield send("response.output_item.done", output_index=0, item=done["output"][0])
    yield send("response.completed", response=done)
