"""Price table look-ups, cost rules, Retry-After parsing, key scrubbing."""

from __future__ import annotations

import email.utils
import logging
import time

import pytest

from conductor.workers.pricing import PRICE_TABLE, cost_of, lookup
from conductor.types import Usage, WorkerSpec
from conductor.workers.failures import parse_retry_after, status_error
from conductor.workers.secrets import Scrubber


@pytest.mark.parametrize(("model", "key"), [
    ("gpt-5", "gpt-5"), ("gpt-5-2025-08-07", "gpt-5"), ("gpt-5-mini", "gpt-5-mini"),
    ("openai/gpt-4o", "gpt-4o"), ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("claude-sonnet-4-5", "claude-sonnet-4-5"), ("Gemini-2.5-Pro", "gemini-2.5-pro"),
    ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
])
def test_lookup_known(model, key):
    assert lookup(model) is PRICE_TABLE[key]


@pytest.mark.parametrize("model", ["gpt-5-pro", "Qwen/Qwen3-32B", "claude-sonnet-4-9", "gpt-5x", ""])
def test_lookup_unknown_is_none(model):
    assert lookup(model) is None  # a different model is never priced as its prefix


def test_every_entry_is_dated():
    for entry in PRICE_TABLE.values():
        time.strptime(entry.checked, "%Y-%m-%d")


def test_cost_unknown_warns_once_per_model(caplog):
    usage = Usage(input_tokens=10, output_tokens=10)
    a = WorkerSpec(id="a", provider="openai_compatible", model="org/unknown-model-xyz")
    b = WorkerSpec(id="b", provider="openai_compatible", model="org/unknown-model-xyz")
    with caplog.at_level(logging.WARNING, logger="conductor.pricing"):
        assert cost_of(a, usage) is None and cost_of(b, usage) is None and cost_of(a, usage) is None
    assert len(caplog.records) == 1 and "org/unknown-model-xyz" in caplog.text
    priced = WorkerSpec(id="c", provider="openai", model="org/unknown-model-xyz", prices={"input": 2, "output": 4})
    assert cost_of(priced, usage) == pytest.approx(60 / 1e6)


def test_retry_after_forms():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < parse_retry_after({"Retry-After": date}) <= 30
    assert parse_retry_after({"Retry-After": "soon"}) is None and parse_retry_after(None) is None


def test_status_error_scrubs_and_classifies():
    key = "my-very-secret-key-value"
    s = Scrubber([key])
    err = status_error("w", 403, headers={"retry-after": "5"}, detail=f"key {key} and sk-{'x' * 30}",
                       scrubber=s, key_envs=["MY_KEY"], model="m")
    assert not err.retryable and err.retry_after is None and "MY_KEY" in str(err)
    assert key not in str(err) and "sk-xxx" not in str(err)
    err = status_error("w", 503, headers={"retry-after": "5"}, detail="busy", scrubber=s, key_envs=[], model="m")
    assert err.retryable and err.retry_after == 5.0 and err.worker_id == "w"
