"""Opting workers out (issue 35): `conductor ask --exclude`, `conductor eval --exclude` and a
serve request's `"conductor": {"exclude": [...]}`. The workflow is planned over the workers that
remain and an excluded worker is never called: each worker is a real `openai_compatible` adapter
at its own path of a loopback HTTP server, which counts the calls it gets. An unknown id is one
`error:` line (rc 2), or a 400."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import openai
import pytest
from typer.testing import CliRunner

from conductor.cli import app
from conductor.evaluation.methods import MethodSpecError, method_from_spec
from server.build import build_app
from server.config import ServeConfig
from server.guards import KeyRing
from server.running import running_server
from tests.loopback import LoopbackServer, Reply, openai_chat

WORKERS = ("w0", "w1", "w2", "w3")
KEY = "sk-exclude"
runner = CliRunner()


@pytest.fixture
def loop():  # noqa: ANN201
    with LoopbackServer() as s:
        for w in WORKERS:
            s.on(f"/{w}/v1/chat/completions", lambda r, w=w: Reply(body=openai_chat(f"4 (from {w})")))
        yield s


def _calls(loop: LoopbackServer) -> Counter[str]:
    """Calls received per worker (its path's first segment)."""
    return Counter(r.path.split("/")[1] for r in loop.requests)


@pytest.fixture
def pool_file(tmp_path: Path, loop: LoopbackServer) -> Path:
    path = tmp_path / "pool.yaml"
    path.write_text("name: exclude-test\nworkers:\n" + "".join(
        f"  - {{id: {w}, provider: openai_compatible, model: m-{w}, description: worker {w},"
        f" options: {{base_url: \"{loop.url}/{w}/v1\"}}}}\n" for w in WORKERS))
    return path


def test_ask_never_calls_an_excluded_worker(loop, pool_file):
    result = runner.invoke(app, ["ask", "What is 2 + 2?", "--pool", str(pool_file), "--exclude", "w1",
                                 "--exclude", "w3", "--json"])
    assert result.exit_code == 0, result.output
    trace = json.loads(result.stdout)
    assert trace["pool"] == ["w0", "w2"]  # what the workflow was planned over
    calls = _calls(loop)
    assert calls["w1"] == calls["w3"] == 0 and calls["w0"] > 0 and calls["w2"] > 0
    assert {s["worker_id"] for s in trace["steps"]} == {"w0", "w2"}


def test_ask_with_an_unknown_id_is_one_error_line(loop, pool_file):
    result = runner.invoke(app, ["ask", "What is 2 + 2?", "--pool", str(pool_file), "--exclude", "w9"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: exclude: no worker w9 in this pool (it has w0, w1, w2, w3)"]
    assert not loop.requests


def test_eval_methods_are_offered_the_rest(pool_file):
    method = method_from_spec("template:fanout", pool_file, exclude=["w1"])
    assert [w.id for w in method.pool.workers] == ["w0", "w2", "w3"]
    with pytest.raises(MethodSpecError, match="no worker .w1. in .*; one of w0, w2, w3"):
        method_from_spec("single:w1", pool_file, exclude=["w1"])  # a baseline on an excluded worker


def test_eval_with_an_unknown_id_is_one_error_line(loop, pool_file):
    result = runner.invoke(app, ["eval", "-m", "template:fanout", "--pool", str(pool_file), "--exclude", "nobody",
                                 "--no-mlflow"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: --exclude: no worker nobody in the pool (it has w0, w1, w2, w3)")
    assert not loop.requests


async def _ask(url: str, exclude: list[str]) -> openai.types.chat.ChatCompletion:
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0, timeout=60)
    try:
        return await client.chat.completions.create(
            model="conductor", messages=[{"role": "user", "content": "What is 2 + 2?"}],
            extra_body={"conductor": {"exclude": exclude}})
    finally:
        await client.close()


def test_serve_request_field_excludes_workers(loop, pool_file, tmp_path):
    config = ServeConfig(pool_file=pool_file, staging_dir=tmp_path / "staging", warehouse_path=tmp_path / "wh.duckdb")
    with running_server(build_app(config, KeyRing([KEY]))) as url:
        reply = asyncio.run(_ask(url, ["w0", "w2"]))
        assert reply.choices[0].message.content
        calls = _calls(loop)
        assert calls["w0"] == calls["w2"] == 0 and calls["w1"] > 0 and calls["w3"] > 0
        with pytest.raises(openai.BadRequestError) as bad:
            asyncio.run(_ask(url, ["w7"]))
    assert bad.value.status_code == 400
    assert bad.value.body["message"] == (
        "invalid request: conductor.exclude: no worker w7 in this pool (it has w0, w1, w2, w3)")
