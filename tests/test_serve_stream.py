"""Streaming a workflow's progress through the official openai client: the workflow, then each
step's start and finish as it happens (with its worker), then the answer.

The workers are openai-compatible servers on loopback; the middle step's worker answers slowly,
so a chunk that arrives long before the answer proves the stream is not held back until the
workflow ends."""

from __future__ import annotations

import time

import openai
import pytest

from conductor.planners import ScriptedPlanner
from server.build import build_app
from server.config import ServeConfig
from server.guards import KeyRing
from server.running import running_server
from tests.loopback import LoopbackServer, Received, Reply, openai_chat

KEY = "sk-stream-test"
SLOW_S = 2.0
# step 0 (w-fast) -> step 1 (w-slow, reads 0) -> step 2 (w-fast, reads both)
PLAN = """model_id = [0, 1, 0]
subtasks = ["Work out the key facts.", "Solve it carefully.", "Check the answer and state it."]
access_list = [[], [0], "all"]"""


def _reply(received: Received) -> Reply:
    slow = received.json["model"] == "m-slow"
    return Reply(body=openai_chat("slow part" if slow else "Paris"), delay_s=SLOW_S if slow else 0.0)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stream")
    with LoopbackServer(default=_reply) as loop:
        pool = tmp / "pool.yaml"
        pool.write_text("name: stream-test\nworkers:\n"
                        f"  - {{id: w-fast, provider: openai_compatible, model: m-fast, options: {{base_url: \"{loop.url}/v1\"}}}}\n"
                        f"  - {{id: w-slow, provider: openai_compatible, model: m-slow, options: {{base_url: \"{loop.url}/v1\"}}}}\n")
        config = ServeConfig(pool_file=pool, staging_dir=None, registry_models=False)
        with running_server(build_app(config, KeyRing([KEY]), planner=ScriptedPlanner([PLAN]))) as url:
            yield openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0)


def _timed(stream) -> list[tuple[float, object]]:
    return [(time.monotonic(), chunk) for chunk in stream]


def test_chat_stream_sends_the_workflow_then_each_step_as_it_happens_then_the_answer(served):
    t0 = time.monotonic()
    chunks = _timed(served.chat.completions.create(model="conductor", messages=[{"role": "user", "content": "Capital of France?"}],
                                                   stream=True))
    progress = [(t, c.model_extra["conductor"]) for t, c in chunks if "event" in (c.model_extra.get("conductor") or {})]
    kinds = [(e["event"], e.get("index"), e.get("worker")) for _, e in progress]
    assert kinds == [("workflow", None, None),
                     ("step_started", 0, "w-fast"), ("step_finished", 0, "w-fast"),
                     ("step_started", 1, "w-slow"), ("step_finished", 1, "w-slow"),
                     ("step_started", 2, "w-fast"), ("step_finished", 2, "w-fast")]
    workflow = progress[0][1]
    assert [s["worker"] for s in workflow["steps"]] == ["w-fast", "w-slow", "w-fast"]
    assert workflow["steps"][1]["reads"] == [0]
    finished = {e["index"]: e for _, e in progress if e["event"] == "step_finished"}
    assert all(e["status"] == "ok" for e in finished.values()) and finished[1]["latency_s"] >= SLOW_S
    # every progress chunk comes before the answer, and the answer is the last step's
    content = [(t, c.choices[0].delta.content) for t, c in chunks if c.choices and c.choices[0].delta.content]
    assert [text for _, text in content] == ["Paris"]
    answer_at = content[0][0]
    assert all(t <= answer_at for t, _ in progress)
    # real time: the workflow and step 0 reached the client while the slow step was still running
    started_slow = next(t for t, e in progress if e["event"] == "step_started" and e["index"] == 1)
    assert answer_at - started_slow >= SLOW_S / 2, (started_slow - t0, answer_at - t0)
    assert answer_at - progress[0][0] >= SLOW_S / 2
    last = chunks[-1][1]
    assert last.choices[0].finish_reason == "stop" and last.model_extra["conductor"]["status"] == "answered"


def test_responses_stream_carries_the_same_step_progress(served):
    # The client builds its Responses event types on first use (~1 s of CPU here, during which the
    # chunks already sent wait in the socket): warm it up, then time a second request.
    list(served.responses.create(model="conductor", input="Warm up.", stream=True))
    events = _timed(served.responses.create(model="conductor", input="Capital of France?", stream=True))
    progress = [(t, e.model_extra["conductor"]) for t, e in events if e.type == "response.conductor.progress"]
    assert [(p["event"], p.get("index")) for _, p in progress] == [
        ("workflow", None), ("step_started", 0), ("step_finished", 0), ("step_started", 1), ("step_finished", 1),
        ("step_started", 2), ("step_finished", 2)]
    delta_at = next(t for t, e in events if e.type == "response.output_text.delta")
    started_slow = next(t for t, p in progress if p["event"] == "step_started" and p["index"] == 1)
    assert delta_at - started_slow >= SLOW_S / 2
    assert events[-1][1].response.output_text == "Paris"
