"""OpenAI and OpenAI-compatible adapters: the real SDK against a loopback server."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest

from conductor.workers import Message, Pool, PoolError, WorkerError, WorkerSpec
from conductor.workers.calling import CallFailed, CallPolicy, call_worker
from conductor.workers.limits import reset_limits
from tests.virtual_time import VirtualTime
from tests.loopback import OPENAI_CHAT, LoopbackServer, Reply, openai_chat, openai_error

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123"
MSGS = [Message(role="system", content="be brief"), Message(role="user", content="2+2?")]
FAST = CallPolicy(max_retries=3, backoff_base_s=0.01, backoff_max_s=5.0)


@pytest.fixture
def server():
    reset_limits()
    with LoopbackServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def openai_worker(server: LoopbackServer, model: str = "gpt-5", **kw):
    options = {"base_url": server.url + "/v1", **kw.pop("options", {})}
    spec = WorkerSpec(id="w-openai", provider="openai", model=model, options=options, **kw)
    return Pool.from_specs([spec]).worker(spec.id)


def compatible_worker(server: LoopbackServer, **options):
    spec = WorkerSpec(
        id="w-qwen", provider="openai_compatible", model="Qwen/Qwen3-32B",
        options={"base_url": server.url + "/v1", **options},
    )
    return Pool.from_specs([spec]).worker(spec.id)


async def test_reasoning_model_request_and_usage(server):
    server.script(OPENAI_CHAT, Reply(body=openai_chat(
        "4", model="gpt-5-2025-08-07", prompt_tokens=1000, completion_tokens=300,
        cached_tokens=400, reasoning_tokens=120,
    )))
    worker = openai_worker(server, options={"reasoning_effort": "minimal"})
    out = await worker.complete(MSGS)
    sent = server.requests[0]
    assert sent.json["model"] == "gpt-5"
    assert sent.json["max_completion_tokens"] == 4096
    assert sent.json["reasoning_effort"] == "minimal"
    assert "temperature" not in sent.json and "max_tokens" not in sent.json
    assert sent.json["messages"][0] == {"role": "system", "content": "be brief"}
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert (out.text, out.usage.input_tokens, out.usage.output_tokens) == ("4", 1000, 300)
    assert (out.usage.cached_input_tokens, out.usage.reasoning_tokens) == (400, 120)
    assert out.model == "gpt-5-2025-08-07" and out.finish_reason == "stop"
    # gpt-5 list price: 600 x 1.25 + 400 x 0.125 + 300 x 10 per 1M
    assert out.usage.cost_usd == pytest.approx((600 * 1.25 + 400 * 0.125 + 300 * 10) / 1e6)
    await worker.aclose()


async def test_chat_model_sends_temperature_and_overrides(server):
    server.script(OPENAI_CHAT, Reply(body=openai_chat("x")), Reply(body=openai_chat("y")))
    worker = openai_worker(server, model="gpt-4o", max_tokens=256, temperature=0.2)
    await worker.complete(MSGS)
    await worker.complete(MSGS, max_tokens=32, temperature=0.7)
    first, second = (r.json for r in server.requests)
    assert first["temperature"] == 0.2 and first["max_completion_tokens"] == 256
    assert second["temperature"] == 0.7 and second["max_completion_tokens"] == 32
    assert "reasoning_effort" not in first


async def test_compatible_passes_extra_body_and_needs_no_key(server, monkeypatch, caplog):
    monkeypatch.delenv("OPENAI_API_KEY")
    server.on(OPENAI_CHAT, lambda r: Reply(body=openai_chat("hi", prompt_tokens=7, completion_tokens=3)))
    worker = compatible_worker(server, extra_body={"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20})
    with caplog.at_level(logging.WARNING, logger="conductor.pricing"):
        a = await worker.complete(MSGS)
        b = await worker.complete(MSGS)
    sent = server.requests[0].json
    assert sent["chat_template_kwargs"] == {"enable_thinking": False} and sent["top_k"] == 20
    assert sent["max_tokens"] == 4096 and sent["temperature"] == 0.2
    assert a.text == "hi" and a.usage.input_tokens == 7
    # an unknown price is unknown, not free, and warned about once per model
    assert a.usage.cost_usd is None and b.usage.cost_usd is None
    assert sum("no price known" in r.getMessage() for r in caplog.records) == 1


async def test_pool_price_overrides_table(server):
    server.script(OPENAI_CHAT, Reply(body=openai_chat(prompt_tokens=1_000_000, completion_tokens=0)))
    spec = WorkerSpec(id="q", provider="openai_compatible", model="m",
                      prices={"input": 0.5, "output": 1.0}, options={"base_url": server.url + "/v1"})
    out = await Pool.from_specs([spec]).worker("q").complete(MSGS)
    assert out.usage.cost_usd == pytest.approx(0.5)


async def test_429_with_retry_after_is_honoured(server, monkeypatch):
    from conductor.workers import calling

    server.script(
        OPENAI_CHAT,
        Reply(429, openai_error(429, "slow down", "rate_limit_exceeded"), {"Retry-After": "1"}),
        Reply(body=openai_chat("done")),
    )
    clock = VirtualTime()
    monkeypatch.setattr(calling, "asyncio", clock)
    worker = openai_worker(server)
    out = await call_worker(worker, MSGS, FAST)
    assert out.text == "done" and out.usage.retries == 1
    assert clock.slept == [1.0]  # the server's Retry-After is a floor over FAST's 0-10 ms backoff
    assert len(server.requests) == 2  # the SDK itself did not retry


async def test_adapter_error_fields(server):
    server.script(OPENAI_CHAT, Reply(429, openai_error(429), {"retry-after-ms": "250"}))
    worker = openai_worker(server)
    with pytest.raises(WorkerError) as info:
        await worker.complete(MSGS)
    assert info.value.retryable and info.value.status == 429 and info.value.retry_after == 0.25


async def test_500s_are_retried_then_fail(server):
    server.on(OPENAI_CHAT, lambda r: Reply(500, openai_error(500, "boom")))
    worker = openai_worker(server)
    with pytest.raises(CallFailed) as info:
        await call_worker(worker, MSGS, CallPolicy(max_retries=2, backoff_base_s=0.01))
    assert info.value.retries == 2 and info.value.status == 500
    assert len(server.requests) == 3 and "w-openai" in str(info.value)


async def test_401_fails_at_once_and_never_shows_the_key(server, caplog):
    echo = f"Incorrect API key provided: {KEY}. You can find your API key at ..."
    server.on(OPENAI_CHAT, lambda r: Reply(401, openai_error(401, echo, "invalid_request_error")))
    worker = openai_worker(server)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(CallFailed) as info:
            await call_worker(worker, MSGS, FAST)
    message = str(info.value)
    assert info.value.retries == 0 and info.value.status == 401 and len(server.requests) == 1
    assert "w-openai" in message and "OPENAI_API_KEY" in message and "Incorrect API key" in message
    assert KEY not in message and KEY[:20] not in message
    assert KEY not in caplog.text
    assert KEY not in repr(worker) and KEY not in str(worker.spec)


async def test_400_names_what_to_fix(server):
    server.on(OPENAI_CHAT, lambda r: Reply(400, openai_error(400, "Unsupported parameter: 'temperature'")))
    with pytest.raises(WorkerError) as info:
        await openai_worker(server).complete(MSGS)
    assert not info.value.retryable and "check the worker's model" in str(info.value)
    assert "Unsupported parameter" in str(info.value)


async def test_slow_response_times_out(server):
    # the call's own per-attempt timeout (the client's is 30 s: only the policy's can end it)
    server.script(OPENAI_CHAT, Reply(body=openai_chat("late"), delay_s=1.5))
    with pytest.raises(CallFailed) as info:
        await call_worker(openai_worker(server, timeout_s=30), MSGS, CallPolicy(max_retries=0, timeout_s=0.3))
    assert "timed out after 0.3s" in str(info.value)
    # the client's own timeout (spec.timeout_s) also ends the request, as a retryable error
    server.script(OPENAI_CHAT, Reply(body=openai_chat("late"), delay_s=1.5))
    with pytest.raises(WorkerError) as err:
        await openai_worker(server, timeout_s=0.3).complete(MSGS)
    assert err.value.retryable and "cannot reach" in str(err.value)


async def test_malformed_body_is_a_retryable_error(server):
    server.script(OPENAI_CHAT, Reply(body="{not json"), Reply(body={"unexpected": True}),
                  Reply(body=openai_chat("fine")))
    worker = openai_worker(server)
    for _ in range(2):
        with pytest.raises(WorkerError) as info:
            await worker.complete(MSGS)
        assert info.value.retryable and "malformed" in str(info.value)
    assert (await worker.complete(MSGS)).text == "fine"


async def test_connection_refused_is_retryable():
    with LoopbackServer() as s:
        url = s.url
    spec = WorkerSpec(id="gone", provider="openai_compatible", model="m", options={"base_url": url + "/v1"})
    with pytest.raises(WorkerError) as info:
        await Pool.from_specs([spec]).worker("gone").complete(MSGS)
    assert info.value.retryable and "cannot reach" in str(info.value)


def test_bad_options_and_missing_key_fail_at_build(monkeypatch):
    spec = WorkerSpec(id="t", provider="openai", model="gpt-5", options={"reasoning_efort": "low"})
    with pytest.raises(PoolError, match="reasoning_efort is not a openai option"):
        Pool.from_specs([spec])
    with pytest.raises(PoolError, match="api_key"):  # keys never go in the pool file
        Pool.from_specs([WorkerSpec(id="t", provider="openai", model="gpt-5", options={"api_key": KEY})])
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(PoolError, match="no API key: set OPENAI_API_KEY"):
        Pool.from_specs([WorkerSpec(id="t", provider="openai", model="gpt-5")])
    monkeypatch.setenv("MY_KEY", KEY)
    Pool.from_specs([WorkerSpec(id="t", provider="openai", model="gpt-5", options={"api_key_env": "MY_KEY"})])
    with pytest.raises(PoolError, match="QWEN_URL is not set"):
        Pool.from_specs([WorkerSpec(id="q", provider="openai_compatible", model="m",
                                    options={"base_url": "${QWEN_URL}"})])


async def test_provider_concurrency_and_rpm_limits(server, monkeypatch):
    active, peak, lock = 0, 0, threading.Lock()

    def slow(_r):
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with lock:
            active -= 1
        return Reply(body=openai_chat())

    server.on(OPENAI_CHAT, slow)
    specs = [  # two workers on one endpoint share its limit
        WorkerSpec(id=f"q{i}", provider="openai_compatible", model="m",
                   options={"base_url": server.url + "/v1", "provider_concurrency": 2})
        for i in range(2)
    ]
    pool = Pool.from_specs(specs)
    await asyncio.gather(*(pool.worker(f"q{i % 2}").complete(MSGS) for i in range(8)))
    assert len(server.requests) == 8 and peak == 2

    reset_limits()
    from conductor.workers import limits

    clock = VirtualTime()  # the token bucket's clock and sleeps
    monkeypatch.setattr(limits, "asyncio", clock)
    monkeypatch.setattr(limits, "time", clock)
    spec = WorkerSpec(id="r", provider="openai_compatible", model="m",
                      options={"base_url": server.url + "/v1", "rpm": 600})  # 10/s, bursts of 10
    worker = Pool.from_specs([spec]).worker("r")
    server.on(OPENAI_CHAT, lambda r: Reply(body=openai_chat()))
    await asyncio.gather(*(worker.complete(MSGS) for _ in range(15)))
    # 10 go at once (the burst); the 5 beyond it wait 0.1 s each, one after another
    assert len(server.requests) == 8 + 15 and clock.now == pytest.approx(0.5)
    assert [round(d, 6) for d in clock.slept if d > 1e-9] == [0.1] * 5
