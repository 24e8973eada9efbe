"""A Trace as the bodies an OpenAI client reads: chat completions, chunks and responses.

`usage` sums the tokens of every call of the request (the Conductor's and all workers');
the `conductor` extension field carries the cost, trace id and status."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from conductor.effort import stated_effort
from conductor.trace import Trace


def answer_text(trace: Trace) -> str:
    """The reply: the answer, or a plain statement of why there is none (never empty)."""
    if trace.answer is not None:
        return trace.answer
    if trace.parse_status != "ok":
        return (f"[conductor] no answer: the Conductor's workflow could not be used "
                f"({trace.parse_status}: {trace.parse_error})")
    return f"[conductor] no answer: {trace.stop_reason or 'the workflow produced none'}"


def extension(trace: Trace, served_by: str | None = None) -> dict[str, Any]:
    """`served_by`: what planned (the start reference, or `conductor/VERSION` from the registry)."""
    return {"trace_id": trace.trace_id, "served_by": served_by, "cost_usd": trace.usage.cost_usd, "status": status_of(trace),
            "parse_status": trace.parse_status, "calls": trace.calls, "retries": trace.usage.retries,
            "stop_reason": trace.stop_reason, "effort": stated_effort(trace.conductor_prompt)}


def status_of(trace: Trace) -> str:
    if trace.parse_status != "ok":
        return "unparseable" if trace.parse_status != "planner_error" else "planner_error"
    return "answered" if trace.answer is not None else "no_answer"


def chat_usage(trace: Trace) -> dict[str, Any]:
    u = trace.usage
    return {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_input_tokens},
            "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens}}


def new_chat_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def chat_completion(trace: Trace, model: str, chat_id: str, served_by: str | None = None) -> dict[str, Any]:
    return {"id": chat_id, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer_text(trace)},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": chat_usage(trace), "conductor": extension(trace, served_by)}


def chunk(chat_id: str, model: str, delta: dict[str, Any], *, finish: str | None = None,
          extra: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"id": chat_id, "object": "chat.completion.chunk", "created": int(time.time()),
                            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return sse(body | (extra or {}))


def usage_chunk(chat_id: str, model: str, trace: Trace, served_by: str | None = None) -> str:
    return sse({"id": chat_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                "choices": [], "usage": chat_usage(trace), "conductor": extension(trace, served_by)})


def sse(body: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(body, separators=(',', ':'))}\n\n"


DONE = "data: [DONE]\n\n"


def response_object(trace: Trace | None, model: str, resp_id: str | None = None,
                    msg_id: str | None = None, served_by: str | None = None) -> dict[str, Any]:
    """The Responses API object; `trace=None` gives the in-progress shell a stream opens with."""
    resp_id, msg_id = resp_id or f"resp_{uuid.uuid4().hex}", msg_id or f"msg_{uuid.uuid4().hex}"
    if trace is None:
        return {"id": resp_id, "object": "response", "created_at": int(time.time()), "model": model,
                "status": "in_progress", "output": [], "parallel_tool_calls": False, "tool_choice": "none",
                "tools": [], "metadata": {}}
    u = trace.usage
    return {"id": resp_id, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "completed", "error": None, "incomplete_details": None, "instructions": None,
            "parallel_tool_calls": False, "tool_choice": "none", "tools": [], "metadata": {},
            "output": [{"type": "message", "id": msg_id, "status": "completed",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": answer_text(trace), "annotations": []}]}],
            "usage": {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                      "total_tokens": u.input_tokens + u.output_tokens,
                      "input_tokens_details": {"cached_tokens": u.cached_input_tokens},
                      "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens}},
            "conductor": extension(trace, served_by)}
