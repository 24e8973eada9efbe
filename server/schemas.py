"""Request bodies of the OpenAI endpoints we serve, and their OpenAI-style errors.

Fields we do not use are accepted and ignored (clients send many), except those whose meaning
we cannot honour (`n` > 1, images), which are refused with a clear 400."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from conductor.effort import Effort, UnservedEffort, client_effort


class ApiError(Exception):
    """An error answered as `{"error": {"message", "type", "code", "param"}}`."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type, code, param
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "code": self.code, "param": self.param}}


def text_of(content: Any, where: str) -> str:
    """The text of a message's content: a string, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") not in ("text", "input_text", "output_text"):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise ApiError(400, f"{where}: only text content is supported, not {kind!r}", param=where)
            texts.append(str(part.get("text", "")))
        return "\n".join(texts)
    raise ApiError(400, f"{where}: content must be a string or a list of text parts", param=where)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Any = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


# One definition of the budget extension, for every body that asks a question.
MaxUsd = Annotated[float | None, Field(gt=0, description="Extension: this request's dollar budget.")]


class ConductorOptions(BaseModel):
    """Extension: the request's `conductor` field, what the Conductor is asked to do differently."""

    model_config = ConfigDict(extra="forbid")
    exclude: list[str] = Field(default_factory=list,
                               description="Worker ids opted out: the Conductor plans over the rest, none is called.")


class QuestionRequest(Protocol):
    """What server/app.py reads of every body that asks a question (the rest is the endpoint's:
    server/endpoints.py). A Protocol, not a base class: the fields keep their order in each body,
    and with it which invalid field a 400 names first."""

    model: str
    stream: bool
    max_usd: float | None
    conductor: ConductorOptions | None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int = Field(default=1, ge=1, le=1, description="One answer per request: a workflow is one run.")
    max_usd: MaxUsd = None
    conductor: ConductorOptions | None = None
    # the client's word (conductor/effort.py CLIENT_EFFORTS says what each is served at)
    reasoning_effort: str | None = None


class Reasoning(BaseModel):
    model_config = ConfigDict(extra="allow")  # `summary` and the like: accepted, not used
    effort: str | None = None


class ResponsesRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    stream: bool = False
    max_usd: MaxUsd = None
    conductor: ConductorOptions | None = None
    reasoning: Reasoning | None = None


def served_effort(word: str | None, param: str) -> Effort | None:
    """The effort level a request asks for (None: none stated); a word not served is a 400
    naming the served ones, OpenAI's `unsupported_value`."""
    try:
        return client_effort(word)
    except UnservedEffort as exc:
        raise ApiError(400, str(exc), code="unsupported_value", param=param) from None


def chat_effort(req: ChatRequest) -> Effort | None:
    return served_effort(req.reasoning_effort, "reasoning_effort")


def responses_effort(req: ResponsesRequest) -> Effort | None:
    return served_effort(req.reasoning.effort if req.reasoning else None, "reasoning.effort")


def conversation(turns: list[tuple[str, str]]) -> str:
    """One question for the Conductor from a conversation: the last user turn, with the turns
    before it (system instructions included) given as context."""
    users = [i for i, (role, _) in enumerate(turns) if role == "user"]
    if not users:
        raise ApiError(400, "the request has no user message", param="messages")
    last = users[-1]
    question = turns[last][1].strip()
    if not question:
        raise ApiError(400, "the last user message is empty", param="messages")
    before = [f"{role}: {text}" for role, text in turns[:last] if text.strip()]
    if not before:
        return question
    return "Conversation so far:\n" + "\n".join(before) + "\n\nQuestion:\n" + question


def chat_question(req: ChatRequest) -> str:
    return conversation([(m.role, text_of(m.content, f"messages[{i}].content")) for i, m in enumerate(req.messages)])


def responses_question(req: ResponsesRequest) -> str:
    turns: list[tuple[str, str]] = [("system", req.instructions)] if req.instructions else []
    if isinstance(req.input, str):
        turns.append(("user", req.input))
    else:
        for i, item in enumerate(req.input):
            if item.get("type", "message") != "message" or "role" not in item:
                raise ApiError(400, f"input[{i}]: only message items are supported", param=f"input[{i}]")
            turns.append((str(item["role"]), text_of(item.get("content"), f"input[{i}].content")))
    return conversation(turns)
