"""The effort knob through `conductor serve`: the official openai client's own
`reasoning_effort` (chat) and `reasoning={"effort": ...}` (responses) change the calls made,
against uvicorn on 127.0.0.1 with the simulated pool and the template stand-in Conductor
(which writes one call at low, a solve and a check at medium, three attempts and an aggregator
at high: conductor/planners.py EFFORT_SHAPES)."""

from __future__ import annotations

import asyncio
from typing import get_args

import openai
import pytest
from openai.types.shared import ReasoningEffort

from conductor.effort import CLIENT_EFFORTS, Effort
from conductor.planners import TemplatePlanner
from conductor.prompts import conductor_messages
from conductor.workers.pool import read_pool_file
from conductor.workflow import Workflow, parse
from tests.local_pool import ASK, POOL, served_local_pool

KEY = "sk-test-effort-0123456789"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with served_local_pool(tmp_path_factory.mktemp("serve-effort"), [KEY]) as url:
        yield openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0)


# calls in the reply: the planner's one, then the workflow's worker calls
@pytest.mark.parametrize("word,level,calls", [("low", "low", 1 + 1), ("medium", "medium", 1 + 2), ("high", "high", 1 + 4),
                                              ("minimal", "low", 1 + 1), ("max", "high", 1 + 4), (None, None, 1 + 4)])
def test_chat_reasoning_effort_changes_the_calls_made(client, word, level, calls):
    extra = {} if word is None else {"reasoning_effort": word}
    r = client.chat.completions.create(model="conductor", messages=ASK, **extra)
    ext = r.model_extra["conductor"]
    assert ext["status"] == "answered"
    assert (ext["calls"], ext["effort"]) == (calls, level)


@pytest.mark.parametrize("word,calls", [("low", 2), ("medium", 3), ("high", 5)])
def test_responses_reasoning_effort_changes_the_calls_made(client, word, calls):
    r = client.responses.create(model="conductor", input="What is 17 * 3?", reasoning={"effort": word})
    assert r.status == "completed" and r.output_text
    assert (r.model_extra["conductor"]["calls"], r.model_extra["conductor"]["effort"]) == (calls, word)


def test_a_streamed_request_obeys_the_effort_too(client):
    chunks = list(client.chat.completions.create(model="conductor", messages=ASK, stream=True, reasoning_effort="low"))
    events = [c.model_extra["conductor"]["event"] for c in chunks if c.model_extra.get("conductor", {}).get("event")]
    assert events.count("step_started") == 1


@pytest.mark.parametrize("word", ["none", "xhigh", "ultra"])
def test_an_effort_not_served_is_a_400_naming_the_served_ones(client, word):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="conductor", messages=ASK, reasoning_effort=word)  # type: ignore[arg-type]
    error = caught.value.body
    assert caught.value.status_code == 400
    assert (error["code"], error["param"], error["type"]) == ("unsupported_value", "reasoning_effort", "invalid_request_error")
    assert all(f"'{w}'" in error["message"] for w in ("minimal", "low", "medium", "high", "max"))
    assert "'xhigh'" not in error["message"].partition("supported values are")[2]


def test_responses_refuse_an_effort_not_served_naming_its_param(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="conductor", input="What is 17 * 3?", reasoning={"effort": "none"})
    assert caught.value.body["param"] == "reasoning.effort"


def test_the_table_maps_every_word_of_the_clients_vocabulary():
    words = {w for w in get_args(get_args(ReasoningEffort)[0])}
    assert set(CLIENT_EFFORTS) == words


@pytest.mark.parametrize("effort,steps", [(Effort.LOW, 1), (Effort.MEDIUM, 2), (Effort.HIGH, 4), (None, 2)])
def test_the_template_planner_obeys_the_effort_its_prompt_states(effort, steps):
    specs = read_pool_file(POOL).workers
    messages = conductor_messages("What is 17 * 3?", specs, effort=effort)
    workflow = parse(asyncio.run(TemplatePlanner("verify").plan(messages, specs)).text, [s.id for s in specs])
    assert isinstance(workflow, Workflow) and len(workflow.model_id) == steps
