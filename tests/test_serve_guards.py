"""Guards and planners of `conductor serve`: rate and concurrency limits, hashed keys, a
garbage-writing model planner, and a registry reference with no registry."""

from __future__ import annotations

import time
from pathlib import Path

import openai
import pytest

from conductor.planners import ModelPlanner
from conductor.workers.pool import read_pool_file
from server.build import ServeError, build_app, resolve_planner
from server.config import ServeConfig
from server.guards import KeyRing, Limits
from server.running import running_server
from warehouse.staging import pending, read_batch

POOL = Path(__file__).resolve().parent.parent / "deployments" / "pools" / "local.yaml"
ASK = [{"role": "user", "content": "What is 6 * 7?"}]


def test_keys_are_held_hashed_and_identified():
    ring = KeyRing(["sk-alpha-secret", " sk-beta-secret ", ""])
    assert len(ring) == 2
    assert "sk-alpha-secret" not in repr(vars(ring))
    a, b = ring.identify("sk-alpha-secret"), ring.identify("sk-beta-secret")
    assert a and b and a != b and "secret" not in a
    assert ring.identify("sk-alpha-secre") is None and ring.identify("") is None


def test_keys_file_and_env_are_both_read(tmp_path):
    f = tmp_path / "keys"
    f.write_text("# comment\nsk-from-file\n\n")
    ring = KeyRing.load("sk-env-1,sk-env-2", f)
    assert len(ring) == 3 and ring.identify("sk-from-file") and ring.identify("sk-env-2")


def test_limits_cap_concurrency_and_rate_per_key():
    limits = Limits(per_minute=60, burst=3, concurrency=2)
    assert limits.admit("a") is None and limits.admit("a") is None
    assert limits.admit("a") == 1.0  # two in flight: the cap
    assert limits.admit("b") is None  # another key is not held back
    limits.release("a")
    assert limits.admit("a") is None  # the burst's third token
    limits.release("a")
    wait = limits.admit("a")  # burst spent; 1 token/s comes back
    assert wait is not None and wait >= 1


def test_over_the_rate_is_429_with_retry_after(tmp_path):
    config = ServeConfig(pool_file=POOL, burst=2, requests_per_minute=1)
    with running_server(build_app(config, KeyRing(["k1", "k2"]))) as url:
        c = openai.OpenAI(base_url=url + "/v1", api_key="k1", max_retries=0)
        for _ in range(2):
            c.chat.completions.create(model="conductor", messages=ASK)
        with pytest.raises(openai.RateLimitError) as e:
            c.chat.completions.create(model="conductor", messages=ASK)
        assert int(e.value.response.headers["Retry-After"]) >= 1
        assert e.value.code == "rate_limit_exceeded"
        with pytest.raises(openai.RateLimitError):  # the Responses API is admitted by the same limits
            c.responses.create(model="conductor", input="What is 6 * 7?")
        other = openai.OpenAI(base_url=url + "/v1", api_key="k2", max_retries=0)
        assert other.chat.completions.create(model="conductor", messages=ASK).choices[0].message.content


def test_a_registry_reference_without_a_registry_is_a_clear_error():
    with pytest.raises(ServeError, match="no registry"):
        resolve_planner("models:/conductor@champion")
    with pytest.raises(ServeError, match="not a model directory"):
        resolve_planner("/nonexistent/model")
    with pytest.raises(ServeError, match="unknown template shape"):
        resolve_planner("template:spiral")


def test_a_registry_reference_goes_through_the_resolver(tmp_path):
    seen = []

    def resolver(ref: str) -> Path:
        seen.append(ref)
        return tmp_path  # no config.json: refused after resolving

    with pytest.raises(ServeError, match="not a model directory"):
        resolve_planner("models:/conductor@champion", resolver)
    assert seen == ["models:/conductor@champion"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from conductor.models.tiny import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny") / "model", seed=0)


def test_a_garbage_writing_model_gets_a_parse_failure_answer_never_a_500(tiny_model):
    config = ServeConfig(pool_file=POOL, model_ref=str(tiny_model))
    planner = ModelPlanner.from_directory(tiny_model, max_tokens=24)
    with running_server(build_app(config, KeyRing(["k"]), planner=planner)) as url:
        c = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        r = c.chat.completions.create(model="conductor", messages=ASK)
        ext = r.model_extra["conductor"]
        # The model ran and wrote text that is no workflow: "unparseable". A planner that cannot
        # generate at all ("planner_error") is a different failure and must not pass here.
        assert ext["status"] == "unparseable" and ext["parse_status"] not in ("ok", "planner_error"), ext
        assert r.choices[0].message.content.startswith("[conductor] no answer")
        chunks = list(c.chat.completions.create(model="conductor", messages=ASK, stream=True))
        assert chunks[-1].model_extra["conductor"]["status"] == "unparseable"


def test_a_request_over_the_time_limit_is_answered_and_kept(tmp_path):
    config = ServeConfig(pool_file=POOL, request_timeout_s=0.05, staging_dir=tmp_path / "staging", flush_interval_s=60)
    app = build_app(config, KeyRing(["k"]))
    ids = [w.id for w in read_pool_file(POOL).workers]
    with running_server(app) as url:
        c = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        # simulated calls take ~100 ms; the request opts one worker out
        r = c.chat.completions.create(model="conductor", messages=ASK,
                                      extra_body={"conductor": {"exclude": [ids[0]]}})
    ext = r.model_extra["conductor"]
    assert ext["status"] == "no_answer" and "timed out" in ext["stop_reason"]
    [batch] = pending(tmp_path / "staging")
    traces = read_batch(batch).traces
    assert traces.column("trace_id").to_pylist() == [ext["trace_id"]]
    # the kept trace names the pool the request planned over: the excluded worker is not in it
    assert traces.column("pool").to_pylist() == [list(ids[1:])]


def test_a_client_gone_mid_stream_still_gets_its_trace_kept_and_its_slot_freed(tmp_path):
    import httpx

    config = ServeConfig(pool_file=POOL, concurrency_per_key=1, staging_dir=tmp_path / "staging", flush_interval_s=60)
    with running_server(build_app(config, KeyRing(["k"]))) as url:
        body = {"model": "conductor", "messages": ASK, "stream": True}
        with httpx.stream("POST", url + "/v1/chat/completions", json=body,
                          headers={"Authorization": "Bearer k"}) as r:
            assert r.status_code == 200
            next(r.iter_lines())  # the first chunk, then hang up
        deadline = time.monotonic() + 30
        while httpx.get(url + "/health/details", headers={"Authorization": "Bearer k"}).json()["in_flight"] \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        c = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        c.chat.completions.create(model="conductor", messages=ASK)  # the one slot is free again
    staged = [t for b in pending(tmp_path / "staging") for t in read_batch(b).traces.column("trace_id").to_pylist()]
    assert len(staged) == 2


def test_the_cli_refuses_to_start_without_keys_or_with_an_unresolvable_model(tmp_path):
    import os
    import subprocess
    import sys

    conductor = Path(sys.executable).with_name("conductor")
    env = {k: v for k, v in os.environ.items() if k != "CONDUCTOR_SERVE_API_KEYS"} | {"CONDUCTOR_HOME": str(tmp_path)}
    r = subprocess.run([str(conductor), "serve", "--pool", str(POOL)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "no API keys" in r.stderr
    r = subprocess.run([str(conductor), "serve", "--no-auth", "--model", "models:/conductor@champion"], env=env,
                       capture_output=True, text=True, timeout=120)
    # registry/ is installed, so the reference is looked up, and a missing model is one line
    assert r.returncode == 2 and "cannot resolve models:/conductor@champion" in r.stderr and "Traceback" not in r.stderr
