"""Request counting and latency as a plain ASGI middleware (Starlette's BaseHTTPMiddleware
costs a task and a stream copy per request, which showed under load)."""

from __future__ import annotations

import time
from typing import Any

from server.metrics import Metrics

ENDPOINTS = frozenset({"/health", "/health/details", "/metrics", "/v1/models", "/v1/chat/completions", "/v1/responses"})


class RequestMetrics:
    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0, status = time.perf_counter(), 500
        endpoint = scope["path"] if scope["path"] in ENDPOINTS else "other"

        async def sending(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            # a stream's latency runs to its last byte
            self.metrics.observe_request(endpoint, status, time.perf_counter() - t0)
