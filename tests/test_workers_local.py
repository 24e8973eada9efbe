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


async def test_a_batch_waits_once_for_its_calls_not_once_per_call(tmp_path, monkeypatch):
    """Each call queues a drain on the engine's one thread; a drain whose call an earlier batch took
    returns at once. (Each used to wait `batch_wait_s` first: 20 ms per call, ~20 s queued after a
    nightly's evaluation, which Python sat through at exit, joining the thread.) The
    waits are counted through the module's clock; the model and its generations are real."""
    import time

    import conductor.workers.local as local

    class CountingClock:
        def __init__(self) -> None:
            self.waits = 0

        def sleep(self, seconds: float) -> None:
            self.waits += 1
            time.sleep(seconds)

        def __getattr__(self, name: str):  # noqa: ANN204 - perf_counter and the rest, unchanged
            return getattr(time, name)

    clock = CountingClock()
    monkeypatch.setattr(local, "time", clock)
    # a model of its own: the engine (and its options) is shared by every worker of the same weights
    worker = local_worker(build_tiny_causal_lm(tmp_path / "model", hidden_size=16, seed=0), max_batch=8, batch_wait_s=0.05)
    await asyncio.gather(*(worker.complete(MSGS) for _ in range(16)))
    assert worker.batch_sizes == [8, 8]
    await worker.complete(MSGS)  # a call after them: its drain is queued behind their 16
    assert worker.batch_sizes == [8, 8, 1]
    assert clock.waits == 3  # one per batch; none for the 14 drains whose calls a batch had taken
    await worker.aclose()
