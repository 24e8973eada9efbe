"""What differs between the OpenAI endpoints that run a question: the request body, how the
question is read from it, and the two shapes of the answer (a stream, or one JSON object).

Everything else (authenticate, read and parse the body, resolve the model, admit, start the
run) is one path in server/app.py, so a guard changed there holds for every endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from conductor.effort import Effort
from conductor.trace import Trace
from server import openai_format as fmt
from server.catalog import Resolved
from server.progress import Event
from server.schemas import (
    ChatRequest, QuestionRequest, ResponsesRequest, chat_effort, chat_question, responses_effort, responses_question,
)
from server.streams import stream_chat, stream_response

R = TypeVar("R", bound=QuestionRequest)  # a pydantic model with these fields


@dataclass(frozen=True)
class Endpoint(Generic[R]):
    """One question-running endpoint: its body's model, the question read from a parsed body,
    and its answer as a stream or as one object."""

    request: type[R]
    question: Callable[[R], str]
    # the effort level the body asks for (None: none; a word not served raises a 400 ApiError)
    effort: Callable[[R], Effort | None]
    # the SSE stream of a run started with a progress queue; `Resolved` says who answers
    stream: Callable[[R, asyncio.Task[Trace], asyncio.Queue[Event], Resolved], AsyncIterator[str]]
    # the one JSON object of a finished run
    answer: Callable[[R, Trace, Resolved], dict[str, Any]]


CHAT: Endpoint[ChatRequest] = Endpoint(
    request=ChatRequest,
    question=chat_question,
    effort=chat_effort,
    stream=lambda req, task, events, model: stream_chat(
        task, events, req.model, bool(req.stream_options and req.stream_options.include_usage), model.served_by),
    answer=lambda req, trace, model: fmt.chat_completion(trace, req.model, fmt.new_chat_id(), model.served_by),
)

RESPONSES: Endpoint[ResponsesRequest] = Endpoint(
    request=ResponsesRequest,
    question=responses_question,
    effort=responses_effort,
    stream=lambda req, task, events, model: stream_response(task, events, req.model, model.served_by),
    answer=lambda req, trace, model: fmt.response_object(trace, req.model, served_by=model.served_by),
)
