"""The local transformers adapter on a tiny Qwen2 built from a config (no download)."""

from __future__ import annotations

import asyncio

import pytest

from conductor.models.tiny import build_tiny_causal_lm
from conductor.workers import Message, Pool, PoolError, WorkerSpec
from conductor.workers.calling import CallPolicy, call_worker

MSGS = [Message(role="system", content="You are a helpful assistant."), Message(role="user", content="2+2?")]


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny") / "model", hidden_size=32, seed=0)


def local_worker(path, **options):
    spec = WorkerSpec(id="tiny", provider="local", model=str(path), max_tokens=8, temperature=0.0,
                      prices={"input": 0.0, "output": 0.0}, options=options)
    return Pool.from_specs([spec]).worker("tiny")


def test_tiny_model_files_and_template(tiny_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_path)
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False)
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>" and tok.padding_side == "left"
    assert tok.decode(tok("héllo wörld ∑")["input_ids"]) == "héllo wörld ∑"  # byte-level: nothing unknown


async def test_local_generates_with_usage_and_one_load(tiny_path):
    from transformers import AutoTokenizer

    worker = local_worker(tiny_path, chat_template_kwargs={"enable_thinking": False})
    first = await worker.complete(MSGS)
    model = worker._model
    results = await asyncio.gather(*(worker.complete(MSGS) for _ in range(3)))
    assert worker._model is model  # loaded once, shared by every call
    prompt = AutoTokenizer.from_pretrained(tiny_path).apply_chat_template(
        [m.model_dump() for m in MSGS], add_generation_prompt=True, return_dict=True)
    assert first.usage.input_tokens == len(prompt["input_ids"])
    assert 0 < first.usage.output_tokens <= 8 and isinstance(first.text, str)
    assert all(r.text == first.text for r in results)  # greedy at temperature 0
    assert first.usage.cost_usd == 0.0  # priced in the pool file
    short = await worker.complete(MSGS, max_tokens=2)
    assert short.usage.output_tokens <= 2
    await worker.aclose()


async def test_local_through_call_policy_and_bad_path(tiny_path, tmp_path):
    worker = local_worker(tiny_path)
    out = await call_worker(worker, MSGS, CallPolicy(timeout_s=60))
    assert out.usage.retries == 0 and out.usage.latency_s > 0
    await worker.aclose()
    with pytest.raises(PoolError, match="no model at"):
        local_worker(tmp_path / "missing")
    with pytest.raises(PoolError, match="not a local option"):
        local_worker(tiny_path, temprature=0.1)
