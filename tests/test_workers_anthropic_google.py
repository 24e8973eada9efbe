"""Anthropic and Google adapters: the real SDKs against a loopback server."""

from __future__ import annotations

import logging

import pytest

from conductor.workers import Message, Pool, PoolError, WorkerError, WorkerSpec
from conductor.workers.calling import CallFailed, CallPolicy, call_worker
from conductor.workers.limits import reset_limits
from tests.loopback import (
    ANTHROPIC_MESSAGES,
    LoopbackServer,
    Reply,
    anthropic_error,
    anthropic_message,
    gemini_error,
    gemini_path,
    gemini_response,
)

A_KEY = "sk-ant-test-0123456789abcdefghijklmn"
G_KEY = "AIzaTest0123456789abcdefghijklmnopqrstu"
MSGS = [
    Message(role="system", content="be brief"),
    Message(role="user", content="2+2?"),
    Message(role="assistant", content="Let me think."),
    Message(role="user", content="Answer."),
]
FAST = CallPolicy(max_retries=3, backoff_base_s=0.01)
GEMINI = gemini_path("gemini-2.5-pro")


@pytest.fixture
def server(monkeypatch):
    reset_limits()
    monkeypatch.setenv("ANTHROPIC_API_KEY", A_KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", G_KEY)
    with LoopbackServer() as s:
        yield s


def build(server: LoopbackServer, provider: str, model: str, **kw):
    options = {"base_url": server.url, **kw.pop("options", {})}
    spec = WorkerSpec(id=f"w-{provider}", provider=provider, model=model, options=options, **kw)
    return Pool.from_specs([spec]).worker(spec.id)


async def assert_key_kept_out(server, caplog, worker, path: str, reply: Reply, *, status: int, says: str,
                              key: str) -> None:
    """A rejected key fails at once (no retry), says what to fix, and shows the key nowhere: not in
    the error, not in any log line."""
    server.script(path, reply)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(CallFailed) as info:
            await call_worker(worker, MSGS, FAST)
    assert info.value.status == status and info.value.retries == 0
    assert says in str(info.value) and key not in str(info.value)
    assert key not in caplog.text


async def assert_garbled_and_late_are_retryable(server, worker, path: str, garbled: Reply, late: Reply) -> None:
    """A reply the SDK cannot read is a retryable 'malformed' error, and so is `late` (sent after
    more than 0.3 s) to the same worker with a 0.3 s timeout."""
    server.script(path, garbled)
    with pytest.raises(WorkerError) as err:
        await worker.complete(MSGS)
    assert err.value.retryable and "malformed" in str(err.value)

    slow = build(server, worker.spec.provider, worker.spec.model, timeout_s=0.3)
    server.script(path, late)
    with pytest.raises(WorkerError) as err:
        await slow.complete(MSGS)
    assert err.value.retryable
    await slow.aclose()


# --- Anthropic -------------------------------------------------------------------------------


async def test_anthropic_request_usage_and_cost(server):
    server.script(ANTHROPIC_MESSAGES, Reply(body=anthropic_message(
        "4", model="claude-sonnet-4-20250514", input_tokens=100, output_tokens=50,
        cache_read_input_tokens=900,
    )))
    worker = build(server, "anthropic", "claude-sonnet-4-20250514",
                   options={"thinking_budget": 0, "send_temperature": True})
    out = await worker.complete(MSGS)
    sent = server.requests[0]
    assert sent.json["system"] == "be brief"
    assert [m["role"] for m in sent.json["messages"]] == ["user", "assistant", "user"]
    assert sent.json["max_tokens"] == 4096 and sent.json["temperature"] == 0.2
    assert sent.json["thinking"] == {"type": "disabled"}  # the paper's Claude: thinking off
    assert sent.headers["authorization"] == f"Bearer {A_KEY}"  # how the 2.x SDK sends the key
    assert (out.text, out.usage.input_tokens, out.usage.cached_input_tokens, out.usage.output_tokens) == ("4", 1000, 900, 50)
    assert out.usage.cost_usd == pytest.approx((100 * 3 + 900 * 0.3 + 50 * 15) / 1e6)
    assert out.finish_reason == "end_turn"
    await worker.aclose()


async def test_anthropic_thinking_budget(server):
    server.script(ANTHROPIC_MESSAGES, Reply(body=anthropic_message("4", thinking="2+2=4")))
    worker = build(server, "anthropic", "claude-sonnet-4",
                   options={"thinking_budget": 2048, "send_temperature": True})
    out = await worker.complete(MSGS, temperature=0.5)
    sent = server.requests[0].json
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in sent  # Anthropic rejects a temperature with thinking on
    assert out.text == "4"  # thinking blocks are not the answer
    with pytest.raises(PoolError, match="at least 1024"):
        build(server, "anthropic", "claude-sonnet-4", options={"thinking_budget": 100})
    with pytest.raises(PoolError, match="must exceed"):
        build(server, "anthropic", "claude-sonnet-4", max_tokens=1024, options={"thinking_budget": 2048})


async def test_anthropic_failures(server, caplog):
    server.script(
        ANTHROPIC_MESSAGES,
        Reply(529, anthropic_error("Overloaded", "overloaded_error"), {"retry-after": "0"}),
        Reply(500, anthropic_error()),
        Reply(body=anthropic_message("ok")),
    )
    worker = build(server, "anthropic", "claude-sonnet-4")
    out = await call_worker(worker, MSGS, FAST)
    assert "temperature" not in server.requests[0].json and "thinking" not in server.requests[0].json
    assert out.text == "ok" and out.usage.retries == 2 and len(server.requests) == 3

    await assert_key_kept_out(
        server, caplog, worker, ANTHROPIC_MESSAGES,
        Reply(401, anthropic_error(f"invalid x-api-key {A_KEY}", "authentication_error")),
        status=401, says="ANTHROPIC_API_KEY", key=A_KEY)
    await assert_garbled_and_late_are_retryable(
        server, worker, ANTHROPIC_MESSAGES, Reply(body="<html>gateway</html>", content_type="text/html"),
        Reply(body=anthropic_message(), delay_s=1.5))
    await worker.aclose()


# --- Google ----------------------------------------------------------------------------------


async def test_gemini_request_usage_and_cost(server):
    server.script(GEMINI, Reply(body=gemini_response(
        "4", model="gemini-2.5-pro", prompt_tokens=200, candidates_tokens=30, thoughts_tokens=100,
        cached_tokens=50,
    )))
    worker = build(server, "google", "gemini-2.5-pro", options={"thinking_budget": 128})
    out = await worker.complete(MSGS)
    sent = server.requests_to(GEMINI)[0]
    body = sent.json
    assert body["systemInstruction"]["parts"][0]["text"] == "be brief"
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["generationConfig"]["maxOutputTokens"] == 4096
    assert body["generationConfig"]["temperature"] == 0.2
    thinking = body["generationConfig"]["thinkingConfig"]  # google-genai 3.4 sends snake_case here
    assert thinking.get("thinkingBudget", thinking.get("thinking_budget")) == 128
    assert sent.headers["x-goog-api-key"] == G_KEY
    assert (out.text, out.usage.input_tokens, out.usage.cached_input_tokens) == ("4", 200, 50)
    assert (out.usage.output_tokens, out.usage.reasoning_tokens) == (130, 100)  # thinking is billed as output
    assert out.usage.cost_usd == pytest.approx((150 * 1.25 + 50 * 0.31 + 130 * 10) / 1e6)
    await worker.aclose()


async def test_gemini_failures(server, caplog):
    server.script(
        GEMINI,
        Reply(429, gemini_error(429, "quota", "RESOURCE_EXHAUSTED"), {"Retry-After": "0"}),
        Reply(503, gemini_error(503, "unavailable", "UNAVAILABLE")),
        Reply(body=gemini_response("ok")),
    )
    worker = build(server, "google", "gemini-2.5-pro")
    out = await call_worker(worker, MSGS, FAST)
    assert out.text == "ok" and out.usage.retries == 2 and len(server.requests) == 3

    await assert_key_kept_out(
        server, caplog, worker, GEMINI, Reply(400, gemini_error(400, f"API key not valid: {G_KEY}", "INVALID_ARGUMENT")),
        status=400, says="API key not valid", key=G_KEY)

    server.script(GEMINI, Reply(403, gemini_error(403, "denied", "PERMISSION_DENIED")))
    with pytest.raises(WorkerError) as err:
        await worker.complete(MSGS)
    assert not err.value.retryable and "GEMINI_API_KEY" in str(err.value)

    await assert_garbled_and_late_are_retryable(
        server, worker, GEMINI, Reply(body="{broken"), Reply(body=gemini_response(), delay_s=1.5))
    await worker.aclose()


def test_google_key_from_either_variable(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    spec = WorkerSpec(id="g", provider="google", model="gemini-2.5-pro")
    with pytest.raises(PoolError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        Pool.from_specs([spec])
    monkeypatch.setenv("GOOGLE_API_KEY", G_KEY)
    Pool.from_specs([spec])


@pytest.mark.parametrize(("provider", "model"), [("anthropic", "claude-sonnet-4"), ("google", "gemini-2.5-pro")])
async def test_unreachable_server_is_retryable(server, provider, model):
    with LoopbackServer() as gone:
        url = gone.url
    spec = WorkerSpec(id="x", provider=provider, model=model, options={"base_url": url})
    worker = Pool.from_specs([spec]).worker("x")
    with pytest.raises(WorkerError) as err:
        await worker.complete(MSGS)
    assert err.value.retryable and "cannot reach" in str(err.value)
    await worker.aclose()
