"""Prometheus metrics of one server (its own registry, so two servers in a process don't mix)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from conductor.trace import Trace


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("conductor_requests", "Requests answered, by endpoint and HTTP status.",
                                ["endpoint", "status"], registry=r)
        self.latency = Histogram("conductor_request_latency_seconds", "Wall time of answered requests.",
                                 ["endpoint"], registry=r,
                                 buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300))
        self.worker_calls = Counter("conductor_worker_calls", "Model calls made (the Conductor's included).",
                                    ["worker"], registry=r)
        self.tokens = Counter("conductor_tokens", "Tokens used by model calls.", ["kind"], registry=r)
        self.cost = Counter("conductor_cost_usd", "Dollars spent on model calls (known prices only).", registry=r)
        self.retries = Counter("conductor_call_retries", "Retries of model calls.", registry=r)

        # labelled children looked up once (`labels()` takes a lock and builds a key every time)
        self._input_tokens, self._output_tokens = self.tokens.labels("input"), self.tokens.labels("output")
        self._calls_of: dict[str, Any] = {}
        self._requests_of: dict[tuple[str, str], Any] = {}
        self._latency_of: dict[str, Any] = {}

    def observe_trace(self, trace: Trace) -> None:
        calls = trace.all_calls()
        for call in calls:
            child = self._calls_of.get(call.worker_id)
            if child is None:
                child = self._calls_of[call.worker_id] = self.worker_calls.labels(call.worker_id)
            child.inc()
        self._input_tokens.inc(trace.usage.input_tokens)
        self._output_tokens.inc(trace.usage.output_tokens)
        self.retries.inc(trace.usage.retries)
        self.cost.inc(sum(c.usage.cost_usd or 0.0 for c in calls))

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        key = (endpoint, str(status))
        counter = self._requests_of.get(key)
        if counter is None:
            counter = self._requests_of[key] = self.requests.labels(*key)
        counter.inc()
        histogram = self._latency_of.get(endpoint)
        if histogram is None:
            histogram = self._latency_of[endpoint] = self.latency.labels(endpoint)
        histogram.observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
