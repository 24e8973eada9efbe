"""Outages at run time (issue 35): real `openai_compatible` adapters against loopback HTTP
workers that fail without end (503, a hang cut at its timeout, 429 forever). The worker's
circuit breaker opens after the configured failures and stays shared by the pool's questions;
each affected step is answered by a fallback (the pool file's, else the nearest worker of the
same provider), the trace shows who was asked and who answered, and the warehouse stores it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from conductor.config import ExecutionConfig
from conductor.executor import RunOptions, execute
from conductor.trace import Trace
from conductor.types import Task
from conductor.workers.breaker import BreakerPolicy, Breakers
from conductor.workers.pool import Pool, PoolError, read_pool_file
from conductor.workflow import Workflow
from tests.loopback import LoopbackServer, Received, Reply, openai_chat, openai_error
from warehouse.store import TraceStore

CONFIG = ExecutionConfig(max_retries=1, backoff_base_s=0.0, backoff_max_s=0.0, breaker_failures=2,
                         breaker_cooldown_s=3600.0)
CONFIG_BREAKER = BreakerPolicy(failures=CONFIG.breaker_failures, cooldown_s=CONFIG.breaker_cooldown_s)
HANG_TIMEOUT_S = 0.3

FAULTS = {
    "down": lambda r: Reply(503, openai_error(503, "service unavailable")),
    "hang": lambda r: Reply(body=openai_chat("too late"), delay_s=HANG_TIMEOUT_S * 10),
    "limited": lambda r: Reply(429, openai_error(429, "slow down", "rate_limit_error"), {"Retry-After": "0"}),
}


def _answers(text: str):  # noqa: ANN202
    return lambda r: Reply(body=openai_chat(text, prompt_tokens=20, completion_tokens=3))


def _path(worker: str) -> str:
    return f"/{worker}/v1/chat/completions"


@pytest.fixture
def server():  # noqa: ANN201
    with LoopbackServer() as s:
        for kind, handler in FAULTS.items():
            s.on(_path(kind), handler)
        for name in ("ok1", "ok2"):
            s.on(_path(name), _answers(f"answer of {name}"))
        yield s


def _pool(tmp: Path, url: str, workers: list[str], fallback: dict[str, str] | None = None) -> Pool:
    """openai_compatible workers, each at its own path of the loopback server, priced so that
    every call has a cost."""
    lines = ["name: outage-test", "workers:"]
    for w in workers:
        extra = f", fallback: {fallback[w]}" if fallback and w in fallback else ""
        timeout = f", timeout_s: {HANG_TIMEOUT_S}" if w == "hang" else ""
        lines.append(f"  - {{id: {w}, provider: openai_compatible, model: m-{w}, prices: {{input: 1.0, output: 2.0}},"
                     f" options: {{base_url: \"{url}/{w}/v1\"}}{timeout}{extra}}}")
    path = tmp / "pool.yaml"
    path.write_text("\n".join(lines) + "\n")
    return Pool.load(path)


def _one_step(pool: Pool, worker: str) -> Workflow:
    return Workflow(model_id=(pool.index_of(worker),), subtasks=("Answer.",), access_list=((),))


async def _ask(pool: Pool, worker: str, n: int) -> list[Trace]:
    """`n` questions, one after another, each a one-step workflow on `worker`."""
    return [await execute(_one_step(pool, worker), Task.adhoc(f"question {i}"), pool, RunOptions(config=CONFIG))
            for i in range(n)]


@pytest.mark.parametrize("kind", ["down", "hang", "limited"])
async def test_breaker_opens_after_the_configured_failures_and_a_fallback_answers(server, tmp_path, kind):
    pool = _pool(tmp_path, server.url, [kind, "ok1", "ok2"])
    async with pool:
        traces = await _ask(pool, kind, 4)
    # Each of the first two questions tried it 1 + max_retries times; then it was down: not called.
    attempts = (1 + CONFIG.max_retries) * CONFIG.breaker_failures
    assert len(server.requests_to(_path(kind))) == attempts
    assert len(server.requests_to(_path("ok1"))) == 4  # the nearest worker of the same provider
    assert not server.requests_to(_path("ok2"))
    steps = [t.steps[0] for t in traces]
    assert all(s.status == "ok" and s.worker_id == kind and s.answered_by == "ok1" for s in steps)
    assert [t.answer for t in traces] == ["answer of ok1"] * 4
    # The first two: the failed call and the fallback's, both in the trace and its usage.
    for s, t in zip(steps[:2], traces[:2]):
        assert s.call is not None and s.call.worker_id == kind and s.call.error and s.call.output is None
        assert s.call.usage.retries == CONFIG.max_retries
        assert s.fallback_call is not None and s.fallback_call.worker_id == "ok1"
        assert t.calls == 2 and t.usage.cost_usd == s.call.usage.cost_usd + s.fallback_call.usage.cost_usd > 0
    reason = {"down": "503", "hang": f"timed out after {HANG_TIMEOUT_S:g}s", "limited": "429"}[kind]
    assert reason in (steps[0].fallback_reason or "")
    # Then the breaker was open: no call to it, the fallback's only.
    for s, t in zip(steps[2:], traces[2:]):
        assert s.call is None and "circuit breaker open" in (s.fallback_reason or "")
        assert t.calls == 1 and s.fallback_call is not None and s.fallback_call.worker_id == "ok1"
    assert pool.breakers.down(CONFIG_BREAKER) == [kind]


async def test_the_pool_files_fallback_answers_before_the_nearest(server, tmp_path):
    pool = _pool(tmp_path, server.url, ["down", "ok1", "ok2"], fallback={"down": "ok2"})
    async with pool:
        traces = await _ask(pool, "down", 3)
    assert [t.steps[0].answered_by for t in traces] == ["ok2"] * 3
    assert not server.requests_to(_path("ok1"))


async def test_a_fallback_that_is_not_offered_is_never_called(server, tmp_path):
    """An excluded worker is no one's fallback: the nearest offered one of the same kind answers."""
    pool = _pool(tmp_path, server.url, ["down", "ok1", "ok2"], fallback={"down": "ok2"}).without(["ok2"])
    async with pool:
        traces = await _ask(pool, "down", 2)
    assert [t.steps[0].answered_by for t in traces] == ["ok1"] * 2
    assert not server.requests_to(_path("ok2"))


async def test_no_fallback_of_the_same_kind_fails_the_step(server, tmp_path):
    path = tmp_path / "pool.yaml"
    path.write_text(f"workers:\n  - {{id: down, provider: openai_compatible, model: m, options: {{base_url: \"{server.url}/down/v1\"}}}}\n"
                    "  - {id: sim, provider: simulated, model: sim}\n")
    pool = Pool.load(path)
    async with pool:
        [trace] = await _ask(pool, "down", 1)
    step = trace.steps[0]
    assert step.status == "error" and "503" in (step.error or "") and step.answered_by is None
    assert step.fallback_call is None and trace.answer is None


async def test_the_breaker_half_opens_after_its_cooldown(server, tmp_path):
    """Down -> after the cool-down one trial call; the worker is back: the breaker closes."""
    now = [0.0]
    pool = _pool(tmp_path, server.url, ["down", "ok1"])
    pool.breakers = Breakers(clock=lambda: now[0])
    async with pool:
        await _ask(pool, "down", 3)  # two failures open it; the third is not called
        assert len(server.requests_to(_path("down"))) == 4
        server.on(_path("down"), _answers("back up"))
        now[0] = CONFIG.breaker_cooldown_s - 1
        [still_down] = await _ask(pool, "down", 1)
        assert still_down.steps[0].answered_by == "ok1" and len(server.requests_to(_path("down"))) == 4
        now[0] = CONFIG.breaker_cooldown_s
        traces = await _ask(pool, "down", 2)  # the trial succeeds: closed again
    assert [t.steps[0].answered_by for t in traces] == ["down", "down"]
    assert len(server.requests_to(_path("down"))) == 6


async def test_a_failed_trial_opens_it_again(server, tmp_path):
    now = [0.0]
    pool = _pool(tmp_path, server.url, ["down", "ok1"])
    pool.breakers = Breakers(clock=lambda: now[0])
    async with pool:
        await _ask(pool, "down", 2)
        now[0] = CONFIG.breaker_cooldown_s
        await _ask(pool, "down", 2)  # one trial (1 + retries attempts), failed: down again at once
    assert len(server.requests_to(_path("down"))) == 2 * 2 + 2


def test_a_fallback_must_be_another_worker_of_the_file(tmp_path):
    for fallback, message in (("nobody", "fallback 'nobody' is not a worker of this pool"),
                              ("a", "names itself as its fallback")):
        path = tmp_path / "pool.yaml"
        path.write_text(f"workers:\n  - {{id: a, provider: simulated, fallback: {fallback}}}\n"
                        "  - {id: b, provider: simulated}\n")
        with pytest.raises(PoolError, match=message):
            read_pool_file(path)


async def test_the_warehouse_stores_who_was_asked_and_who_answered(server, tmp_path):
    pool = _pool(tmp_path, server.url, ["down", "ok1", "ok2"])
    async with pool:
        traces = await _ask(pool, "down", 3)
    for t in traces:
        t.run_id = "run-outage"
    with TraceStore(tmp_path / "w.duckdb") as store:
        store.write_traces(traces)
        for t in traces:
            assert store.get_trace(t.trace_id) == t
        steps = store.query("SELECT worker_id, answered_by, call_id IS NULL AS not_called, fallback_call_id"
                            " FROM steps ORDER BY started_at_s").to_pylist()
        calls = store.query("SELECT worker_id, status, count(*) AS n FROM calls GROUP BY ALL ORDER BY ALL").to_pylist()
        outages = store.query("SELECT * FROM v_outages").to_pylist()
    assert all(s["worker_id"] == "down" and s["answered_by"] == "ok1" and s["fallback_call_id"] for s in steps)
    assert calls == [{"worker_id": "down", "status": "error", "n": 2}, {"worker_id": "ok1", "status": "ok", "n": 3}]
    assert outages == [{"run_id": "run-outage", "worker_id": "down", "answered_by": "ok1", "steps": 3,
                        "not_called": 1, "answered": 3}]


async def test_half_open_lets_one_trial_through_while_the_others_go_to_the_fallback(server, tmp_path):
    now = [0.0]
    pool = _pool(tmp_path, server.url, ["down", "ok1"])
    pool.breakers = Breakers(clock=lambda: now[0])
    async with pool:
        await _ask(pool, "down", 2)  # open
        now[0] = CONFIG.breaker_cooldown_s
        traces = await asyncio.gather(*(execute(_one_step(pool, "down"), Task.adhoc(f"at once {i}"), pool,
                                                RunOptions(config=CONFIG)) for i in range(3)))
    # one trial (1 + retries attempts), failed; the two others were not called
    assert len(server.requests_to(_path("down"))) == 2 * 2 + 2
    assert sorted(t.steps[0].call is None for t in traces) == [False, True, True]
    assert all(t.steps[0].answered_by == "ok1" for t in traces)


def test_ask_shows_who_was_asked_and_who_answered(server, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from conductor.cli import app

    monkeypatch.setenv("COLUMNS", "200")
    _pool(tmp_path, server.url, ["down", "ok1"])
    result = CliRunner().invoke(app, ["ask", "What is 2 + 2?", "--pool", str(tmp_path / "pool.yaml")])
    assert result.exit_code == 0, result.output
    assert "down -> ok1 (fallback)" in result.output  # the verify step, asked of `down`
