"""`conductor pool check` against loopback servers: key status, reachability, exit code."""

from __future__ import annotations

import textwrap

from typer.testing import CliRunner

from conductor.cli import app
from conductor.workers.limits import reset_limits
from tests.loopback import OPENAI_CHAT, LoopbackServer, Reply, openai_chat, openai_error

KEY = "sk-check-0123456789abcdefghijklmnop"


def write_pool(tmp_path, server_url: str, dead_url: str):
    path = tmp_path / "pool.yaml"
    path.write_text(textwrap.dedent(f"""
        name: mixed
        workers:
          - {{id: gpt, provider: openai, model: gpt-5, options: {{base_url: "{server_url}/v1"}}}}
          - {{id: vllm, provider: openai_compatible, model: m, options: {{base_url: "{server_url}/v1"}}}}
          - {{id: down, provider: openai_compatible, model: m, options: {{base_url: "{dead_url}/v1"}}}}
          - {{id: claude, provider: anthropic, model: claude-sonnet-4}}
          - {{id: me, provider: conductor}}
    """))
    return path


def test_pool_check_reports_each_worker(tmp_path, monkeypatch):
    reset_limits()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with LoopbackServer() as dead:
        dead_url = dead.url
    with LoopbackServer() as server:
        server.on(OPENAI_CHAT, lambda r: Reply(body=openai_chat("OK", completion_tokens=1)))
        path = write_pool(tmp_path, server.url, dead_url)
        result = CliRunner().invoke(app, ["pool", "check", str(path), "--timeout", "5"], env={"COLUMNS": "250"})
        sent = [r.json for r in server.requests_to(OPENAI_CHAT)]
    out = result.output
    assert result.exit_code == 1, out
    assert "down" in out and "cannot reach" in out and "claude" in out and "ANTHROPIC_API_KEY" in out
    assert "set (OPENAI_API_KEY)" in out and "4 of 5" not in out and "2 of 5 workers failed" in out
    assert KEY not in out
    # one-token requests, one per reachable worker
    assert sorted(s.get("max_completion_tokens") or s.get("max_tokens") for s in sent) == [1, 1]


def test_pool_check_all_ok_and_auth_failure(tmp_path, monkeypatch):
    reset_limits()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with LoopbackServer() as server:
        server.on(OPENAI_CHAT, lambda r: Reply(body=openai_chat("OK")))
        path = tmp_path / "ok.yaml"
        path.write_text(f"workers:\n  - {{id: v, provider: openai_compatible, model: m, "
                        f"options: {{base_url: '{server.url}/v1'}}}}\n")
        ok = CliRunner().invoke(app, ["pool", "check", str(path)], env={"COLUMNS": "250"})
        assert ok.exit_code == 0 and "all 1 workers answered" in ok.output
        server.on(OPENAI_CHAT, lambda r: Reply(401, openai_error(401, f"bad key {KEY}")))
        path.write_text(f"workers:\n  - {{id: g, provider: openai, model: gpt-5, "
                        f"options: {{base_url: '{server.url}/v1'}}}}\n")
        bad = CliRunner().invoke(app, ["pool", "check", str(path)], env={"COLUMNS": "250"})
    assert bad.exit_code == 1 and "HTTP 401" in bad.output and KEY not in bad.output
    missing = CliRunner().invoke(app, ["pool", "check", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2


def test_paper_pool_builds_with_the_papers_budgets(monkeypatch):
    from conductor.workers import Message, Pool

    reset_limits()
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, KEY)
    monkeypatch.setenv("QWEN3_32B_URL", "http://gpu-box:9000/v1")
    pool = Pool.load("deployments/pools/paper.yaml")
    assert len(pool) == 7 and pool.ids[0] == "gpt-5"
    msgs = [Message(role="user", content="q")]
    gpt = pool.worker("gpt-5").request(msgs, None, None)
    assert gpt["reasoning_effort"] == "minimal" and "temperature" not in gpt
    assert gpt["max_completion_tokens"] == 4096
    claude = pool.worker("claude-sonnet-4").request(msgs, None, None)
    assert claude["thinking"] == {"type": "disabled"} and claude["extra_body"] == {"temperature": 0.2}
    gemini = pool.worker("gemini-2.5-pro").request(msgs, None, None)["config"]
    assert gemini.thinking_config.thinking_budget == 128 and gemini.max_output_tokens == 4096
    direct = pool.worker("qwen3-32b-direct")
    assert direct.request(msgs, None, None)["extra_body"] == {"chat_template_kwargs": {"enable_thinking": False}}
    assert str(direct.client.base_url).startswith("http://gpu-box:9000/v1")
    assert str(pool.worker("gemma-3-27b-it").client.base_url).startswith("http://localhost:8002/v1")


def test_a_pool_file_is_read_afresh_when_it_changes_and_each_reader_gets_its_own_copy(tmp_path):
    """`read_pool_file` parses each version of a file once (an evaluation reads a pool ~5 times):
    an edited file is read again, and a caller changing its copy changes no one else's."""
    import os

    from conductor.workers.pool import PoolError, read_pool_file

    path = tmp_path / "pool.yaml"
    worker = "  - id: {id}\n    provider: simulated\n    options: {{skill: 0.5}}\n"
    path.write_text("workers:\n" + worker.format(id="first"))
    first = read_pool_file(path)
    assert [w.id for w in first.workers] == ["first"]
    first.workers[0].options["skill"] = 0.9  # what a frozen spec still lets a caller change
    first.workers.clear()
    again = read_pool_file(path)
    assert [w.id for w in again.workers] == ["first"] and again.workers[0].options == {"skill": 0.5}
    st = path.stat()
    path.write_text("workers:\n" + worker.format(id="second") + worker.format(id="third"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the old modification time
    assert [w.id for w in read_pool_file(path).workers] == ["second", "third"]
    path.write_text("workers: [")
    try:
        read_pool_file(path)
    except PoolError as exc:
        assert str(path) in str(exc) and "not valid YAML" in str(exc)
    else:
        raise AssertionError("a broken pool file was read")
