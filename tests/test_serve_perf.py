"""What the serve load work changed keeps its behaviour: metrics counted exactly with the
labelled children cached, ids still random UUID4 hex whatever seeds the global `random`,
`Usage.sum` as the field-by-field sum, and the server's GC tuning (`conductor serve --gc-freeze`)
freezes and sets the thresholds it says. (The timings are in benchmarks/serve.py, not here.)"""

from __future__ import annotations

import gc
import random
import uuid

from prometheus_client.parser import text_string_to_metric_families

from conductor.trace import new_id
from conductor.types import Usage
from server.metrics import Metrics
from tests.factories import make_trace


def _samples(m: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(m.render().decode()) for s in fam.samples}


def test_metrics_count_exactly_per_label_set():
    m = Metrics()
    for endpoint, status, seconds in [("/v1/chat/completions", 200, 0.3), ("/v1/chat/completions", 200, 0.7),
                                      ("/v1/chat/completions", 429, 0.001), ("/v1/models", 200, 0.002)]:
        m.observe_request(endpoint, status, seconds)
    rng = random.Random(7)
    traces = [make_trace(rng, parse_error=False, recurse=False) for _ in range(5)]
    for t in traces:
        m.observe_trace(t)
    got = _samples(m)
    chat = (("endpoint", "/v1/chat/completions"),)
    assert got[("conductor_requests_total", chat + (("status", "200"),))] == 2
    assert got[("conductor_requests_total", chat + (("status", "429"),))] == 1
    assert got[("conductor_requests_total", (("endpoint", "/v1/models"), ("status", "200")))] == 1
    assert got[("conductor_request_latency_seconds_count", chat)] == 3
    assert abs(got[("conductor_request_latency_seconds_sum", chat)] - 1.001) < 1e-9
    calls: dict[str, int] = {}
    for t in traces:
        for c in t.all_calls():
            calls[c.worker_id] = calls.get(c.worker_id, 0) + 1
    assert len(calls) > 1
    for worker, n in calls.items():
        assert got[("conductor_worker_calls_total", (("worker", worker),))] == n
    assert got[("conductor_tokens_total", (("kind", "input"),))] == sum(t.usage.input_tokens for t in traces)
    assert got[("conductor_tokens_total", (("kind", "output"),))] == sum(t.usage.output_tokens for t in traces)


def test_ids_are_random_uuid4_hex_whatever_seeds_the_global_random():
    random.seed(0)
    a = [new_id() for _ in range(3)]
    random.seed(0)
    b = [new_id() for _ in range(3)]
    assert not set(a) & set(b)
    ids = {new_id() for _ in range(20_000)}
    assert len(ids) == 20_000
    for i in list(ids)[:500]:
        u = uuid.UUID(i)
        assert u.hex == i and u.version == 4 and u.variant == uuid.RFC_4122


def test_usage_sum_is_the_field_by_field_sum():
    rng = random.Random(3)
    parts = [Usage(input_tokens=rng.randrange(500), output_tokens=rng.randrange(500),
                   reasoning_tokens=rng.randrange(50), cached_input_tokens=rng.randrange(50),
                   cost_usd=rng.random() / 100, latency_s=rng.random(), retries=rng.randrange(3)) for _ in range(9)]
    total = Usage.sum(parts)
    for name in ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens", "retries"):
        assert getattr(total, name) == sum(getattr(p, name) for p in parts), name
    assert abs(total.cost_usd - sum(p.cost_usd for p in parts)) < 1e-12
    assert abs(total.latency_s - sum(p.latency_s for p in parts)) < 1e-12
    assert Usage.sum([*parts, Usage(input_tokens=1)]).cost_usd is None  # one unknown price: the total is unknown
    assert Usage.sum([Usage(input_tokens=1), *parts]).cost_usd is None
    assert Usage.sum([]) == Usage(cost_usd=0.0)


def test_tune_gc_freezes_start_up_objects_and_sets_the_thresholds():
    from server.cli import GC_THRESHOLDS, tune_gc

    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_freeze_count() > 1000 and gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert gc.get_freeze_count() == 0
