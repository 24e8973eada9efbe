"""`conductor ask` over a pool mixing a real OpenAI-style HTTP server and simulated workers."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from conductor.cli import app
from conductor.data.bank import sample_problems
from tests.loopback import OPENAI_CHAT, LoopbackServer, Reply, openai_chat, openai_error

runner = CliRunner()


def test_ask_mixes_loopback_openai_server_and_simulated_workers(tmp_path):
    question = sample_problems()[0].question
    local = yaml.safe_load(open("deployments/pools/local.yaml"))
    with LoopbackServer() as server:
        server.script(OPENAI_CHAT, Reply(429, openai_error(429, "slow down"), {"Retry-After": "0"}))
        server.on(OPENAI_CHAT, lambda req: Reply(body=openai_chat("Checked: the answer is 720.", prompt_tokens=120, completion_tokens=8)))
        pool = {
            "workers": [
                local["workers"][2],  # sim-mathematician
                {
                    "id": "vllm-checker",
                    "provider": "openai_compatible",
                    "model": "qwen-checker",
                    "description": "A model behind an OpenAI-compatible server.",
                    "prices": {"input": 1.0, "output": 2.0},
                    "options": {"base_url": server.url + "/v1"},
                },
            ]
        }
        pool_file = tmp_path / "mixed.yaml"
        pool_file.write_text(yaml.safe_dump(pool))
        plan = tmp_path / "plan.txt"
        plan.write_text('model_id = [0, 1]\nsubtasks = ["Solve it.", "Check the answer above."]\naccess_list = [[], "all"]')
        result = runner.invoke(app, ["ask", question, "--pool", str(pool_file), "--plan", str(plan), "--json"])
        assert result.exit_code == 0, result.output
        trace = json.loads(result.stdout)
        sent = server.requests_to(OPENAI_CHAT)

    first, second = trace["steps"]
    assert first["worker_id"] == "sim-mathematician" and first["status"] == "ok"
    assert second["worker_id"] == "vllm-checker" and second["status"] == "ok"
    assert second["call"]["usage"]["retries"] == 1 and len(sent) == 2  # the 429 was retried
    assert second["call"]["usage"]["input_tokens"] == 120 and second["call"]["usage"]["output_tokens"] == 8
    assert abs(second["call"]["usage"]["cost_usd"] - (120 * 1.0 + 8 * 2.0) / 1e6) < 1e-12
    assert trace["answer"] == "Checked: the answer is 720."
    # The real server received exactly the step message: task, step 0's work, its instruction.
    content = sent[-1].json["messages"][-1]["content"]
    assert content.startswith("# Task\n" + question)
    assert first["output"] in content and content.endswith("# Your instruction\nCheck the answer above.")
