"""`conductor serve` through the official openai client, against uvicorn on 127.0.0.1.

The pool is the simulated one (deployments/pools/local.yaml: an environment, not results) and
the planner the template stand-in; traces go through staging into a real DuckDB file."""

from __future__ import annotations

import httpx
import openai
import pytest

from server.build import build_app
from server.config import ServeConfig
from server.guards import KeyRing
from server.running import running_server
from tests.local_pool import ASK, POOL, served_local_pool
from warehouse.staging import ingest_staged
from warehouse.store import TraceStore

KEY = "sk-test-serve-0123456789"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("serve")
    with served_local_pool(home, [KEY, "sk-other"], max_body_bytes=20_000) as url:
        yield url, home


@pytest.fixture
def client(served):
    return openai.OpenAI(base_url=served[0] + "/v1", api_key=KEY, max_retries=0)


def test_chat_completion_answers_with_summed_usage_and_the_extension(client):
    r = client.chat.completions.create(model="conductor", messages=ASK)
    assert r.object == "chat.completion" and r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content and r.choices[0].finish_reason == "stop"
    ext = r.model_extra["conductor"]
    assert ext["status"] == "answered" and ext["calls"] == 5  # the planner, then fanout: three attempts and an aggregator
    assert ext["cost_usd"] > 0 and len(ext["trace_id"]) == 32
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0


def test_stream_sends_workflow_then_progress_then_answer(client):
    chunks = list(client.chat.completions.create(model="conductor", messages=ASK, stream=True,
                                                 stream_options={"include_usage": True}))
    events = [c.model_extra["conductor"]["event"] for c in chunks
              if c.model_extra.get("conductor", {}).get("event")]
    assert events[0] == "workflow"
    assert events.count("step_started") == events.count("step_finished") == 4  # fanout: three attempts, an aggregator
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    first_content = next(i for i, c in enumerate(chunks) if c.choices and c.choices[0].delta.content)
    last_event = max(i for i, c in enumerate(chunks) if c.model_extra.get("conductor", {}).get("event"))
    assert text and first_content > last_event  # the answer comes after every step's progress
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert chunks[-1].model_extra["conductor"]["status"] == "answered"


def test_responses_endpoint(client):
    r = client.responses.create(model="conductor", input="Name a prime number above 10.", instructions="Be brief.")
    assert r.status == "completed" and r.output_text
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens > 0


def test_responses_stream_sends_progress_then_the_text_then_completed(client):
    events = list(client.responses.create(model="conductor", input="What is 17 * 3?", stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    progress = [e for e in events if e.type == "response.conductor.progress"]
    assert progress and progress[0].model_extra["conductor"]["event"] == "workflow"
    assert kinds.index("response.output_text.delta") > kinds.index("response.conductor.progress")
    delta = next(e for e in events if e.type == "response.output_text.delta").delta
    final = events[-1].response
    assert delta and final.output_text == delta and final.usage.total_tokens > 0
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_models_lists_the_served_model(client):
    assert [m.id for m in client.models.list()] == ["conductor"]


@pytest.mark.parametrize("path,body", [("/v1/chat/completions", {"model": "conductor", "messages": ASK}),
                                       ("/v1/responses", {"model": "conductor", "input": "What is 17 * 3?"})])
@pytest.mark.parametrize("key", [None, "sk-wrong"])
def test_a_request_without_a_valid_key_is_401(served, key, path, body):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    r = httpx.post(served[0] + path, json=body, headers=headers)
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=served[0] + "/v1", api_key="sk-wrong", max_retries=0).models.list()


def test_health_needs_no_key_and_tells_nothing_more_than_alive(served):
    r = httpx.get(served[0] + "/health")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
    # a key changes nothing there: the details have their own address
    assert httpx.get(served[0] + "/health", headers={"Authorization": f"Bearer {KEY}"}).json() == {"status": "ok"}


@pytest.mark.parametrize("key", [None, "sk-wrong"])
def test_health_details_need_a_valid_key(served, key):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    r = httpx.get(served[0] + "/health/details", headers=headers)
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    assert "run_id" not in r.text and "models_loaded" not in r.text


def test_health_details_name_the_run_and_the_loaded_models(served):
    r = httpx.get(served[0] + "/health/details", headers={"Authorization": f"Bearer {KEY}"})
    assert r.status_code == 200
    details = r.json()
    assert details["status"] == "ok" and details["run_id"].startswith("serve-") and details["models_loaded"] == []
    assert details["model"] == "conductor" and details["in_flight"] == 0


def test_errors_have_openai_bodies(client, served):
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="gpt-nope", messages=ASK)
    assert e.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="conductor", messages=[])
    assert "messages" in e.value.message
    with pytest.raises(openai.BadRequestError, match="only text content"):
        client.chat.completions.create(model="conductor", messages=[{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}])
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="conductor", messages=ASK, n=2)
    r = httpx.post(served[0] + "/v1/chat/completions", content=b"{not json",
                   headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    r = httpx.get(served[0] + "/v1/nothing-here", headers={"Authorization": f"Bearer {KEY}"})
    assert r.status_code == 404 and "error" in r.json()


def test_a_body_over_the_limit_is_413_with_or_without_content_length(served, client):
    with pytest.raises(openai.APIStatusError) as e:
        client.chat.completions.create(model="conductor", messages=[{"role": "user", "content": "x" * 30_000}])
    assert e.value.status_code == 413
    chunked = (b"x" * 5000 for _ in range(6))  # a generator body is sent chunked, with no Content-Length
    r = httpx.post(served[0] + "/v1/chat/completions", content=chunked, headers={"Authorization": f"Bearer {KEY}"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"


def test_max_usd_stops_spending(client):
    r = client.chat.completions.create(model="conductor", messages=ASK, extra_body={"max_usd": 1e-6})
    ext = r.model_extra["conductor"]
    assert ext["status"] == "no_answer" and "budget" in ext["stop_reason"]
    assert "[conductor] no answer" in r.choices[0].message.content


def test_metrics_count_requests_calls_and_dollars(client, served):
    client.chat.completions.create(model="conductor", messages=ASK)
    text = httpx.get(served[0] + "/metrics", headers={"Authorization": f"Bearer {KEY}"}).text
    assert 'conductor_requests_total{endpoint="/v1/chat/completions",status="200"}' in text
    assert 'conductor_worker_calls_total{worker="sim-generalist"}' in text
    cost = next(line for line in text.splitlines() if line.startswith("conductor_cost_usd_total"))
    assert float(cost.split()[-1]) > 0
    assert httpx.get(served[0] + "/metrics").status_code == 401


def test_served_traces_are_staged_ingestible_and_queryable(tmp_path):
    """A server of its own, so that its shutdown (which stages what is left and marks the run
    finished) happens inside the test."""
    db, staging = tmp_path / "wh.duckdb", tmp_path / "staging"
    config = ServeConfig(pool_file=POOL, staging_dir=staging, warehouse_path=db, flush_interval_s=60)
    ids = []
    with running_server(build_app(config, KeyRing([KEY]))) as url:
        c = openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0)
        for q, budget in (("What is 2 + 2?", None), ("What is 3 + 5?", None), ("What is 1 + 1?", 1e-6)):
            r = c.chat.completions.create(model="conductor", messages=[{"role": "user", "content": q}],
                                          extra_body={"max_usd": budget} if budget else None)
            ids.append((r.model_extra["conductor"]["trace_id"], r.usage.total_tokens))
        assert r.model_extra["conductor"]["status"] == "no_answer"  # an unanswered request is kept too
        run_id = httpx.get(url + "/health/details", headers={"Authorization": f"Bearer {KEY}"}).json()["run_id"]
    with TraceStore(db) as store:
        report = ingest_staged(store, staging)
        assert report.traces == 3
        rows = store.query("SELECT trace_id, run_id, source FROM traces ORDER BY trace_id").to_pylist()
        assert sorted(r["trace_id"] for r in rows) == sorted(t for t, _ in ids)
        assert {r["run_id"] for r in rows} == {run_id} and {r["source"] for r in rows} == {"serve"}
        run = store.query("SELECT kind, status, simulated FROM runs WHERE run_id = ?", [run_id]).to_pylist()
        assert run == [{"kind": "serve", "status": "finished", "simulated": True}]
        calls = store.query("SELECT trace_id, sum(input_tokens + output_tokens) AS t FROM calls GROUP BY trace_id")
        assert dict(zip(*calls.to_pydict().values())) == dict(ids)  # usage = the sum over the stored calls
