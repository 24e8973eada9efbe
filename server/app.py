"""The ASGI app: OpenAI-compatible endpoints over a Service, with its guards.

Plain Starlette (FastAPI's router, on which it is built, without FastAPI's per-request
dependency solving and exit-stack middleware: we validate bodies ourselves, and those layers
were a tenth of a request's CPU under load in benchmarks/serve.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from server.endpoints import CHAT, RESPONSES, Endpoint
from server.guards import KeyRing
from server.progress import Event
from server.recording import run_lifecycle
from server.schemas import ApiError
from server.service import Job, Service
from server.timing import RequestMetrics

log = logging.getLogger("conductor.serve")
M = TypeVar("M", bound=BaseModel)


def error_response(err: ApiError) -> JSONResponse:
    headers = {"Retry-After": str(int(err.retry_after))} if err.retry_after is not None else None
    return JSONResponse(err.body(), status_code=err.status, headers=headers)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 past `limit` bytes whether or not Content-Length is sent."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body of {declared} bytes is over the {limit}-byte limit", code="request_too_large")
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limit:
            raise ApiError(413, f"request body is over the {limit}-byte limit", code="request_too_large")
    return bytes(body)


def parse_body(model: type[M], body: bytes) -> M:
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise ApiError(400, f"invalid request: {where}: {first['msg']}", param=where) from None


def create_app(service: Service, keys: KeyRing | None) -> Starlette:
    """`keys=None` serves without auth (only when asked for explicitly: `--no-auth`)."""
    config, catalog = service.config, service.catalog

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        service.stager.start()
        life = run_lifecycle(config.warehouse_path, service.run)
        await asyncio.to_thread(life.__enter__)
        error: BaseException | None = None
        try:
            yield
        except BaseException as exc:
            error = exc
            raise
        finally:
            await service.drain()
            await service.pool.aclose()
            await catalog.aclose()
            await asyncio.to_thread(life.end_with, error)

    async def _api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(exc)

    async def _http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code)
        return error_response(ApiError(exc.status_code, str(exc.detail), code=code))

    async def _crash(request: Request, exc: Exception) -> Response:
        log.error("unexpected %s on %s", type(exc).__name__, request.url.path)  # no body, no headers
        return error_response(ApiError(500, "internal server error", type="server_error", code="internal_error"))

    def authenticate(request: Request) -> str:
        if keys is None:
            return "anonymous"
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        key_id = keys.identify(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        if key_id is None:
            raise ApiError(401, "missing or invalid API key (send `Authorization: Bearer KEY`)",
                           type="invalid_request_error", code="invalid_api_key")
        return key_id

    def admit(key_id: str) -> None:
        wait = service.limits.admit(key_id)
        if wait is not None:
            raise ApiError(429, f"too many requests for this key; retry after {wait:g}s", type="rate_limit_error",
                           code="rate_limit_exceeded", retry_after=wait)

    async def health(request: Request) -> JSONResponse:
        # Liveness for load balancers and probes, which hold no key: it says nothing about the
        # deployment (run id, model versions, load), which would help someone probing it.
        return JSONResponse({"status": "ok"})

    async def health_details(request: Request) -> JSONResponse:
        authenticate(request)
        return JSONResponse({"status": "ok", "model": config.model_name, "run_id": service.run.run_id,
                             "in_flight": len(service.in_flight), "staged_traces": service.stager.staged,
                             "models_loaded": catalog.loaded_versions})

    async def metrics(request: Request) -> Response:
        authenticate(request)
        return Response(service.metrics.render(), media_type="text/plain; version=0.0.4")

    async def list_models(request: Request) -> JSONResponse:
        authenticate(request)
        return JSONResponse({"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                         "owned_by": "conductor"} for m in await catalog.ids()]})

    def runs(endpoint: Endpoint[Any]) -> Callable[[Request], Awaitable[Response]]:
        """The one path of every endpoint that runs a question: authenticate (before the body is
        read), parse, resolve the model, admit, start; then the endpoint's stream or object."""

        async def handle(request: Request) -> Response:
            key_id = authenticate(request)
            req = parse_body(endpoint.request, await read_body(request, config.max_body_bytes))
            question = endpoint.question(req)
            effort = endpoint.effort(req)
            model = await catalog.resolve(req.model)
            pool = service.pool_without(req.conductor.exclude if req.conductor else [])
            job = Job(question, req.max_usd, key_id, model.planner, pool, effort)
            admit(key_id)
            if req.stream:
                # started here, not in the generator: a client gone before the first byte still frees its slot
                events: asyncio.Queue[Event] = asyncio.Queue()
                task = service.start(job, events)
                return StreamingResponse(endpoint.stream(req, task, events, model), media_type="text/event-stream")
            # a client gone stops nothing
            trace = await asyncio.shield(service.start(job))
            return JSONResponse(endpoint.answer(req, trace, model))

        return handle

    return Starlette(
        routes=[Route("/health", health, methods=["GET"]), Route("/health/details", health_details, methods=["GET"]),
                Route("/metrics", metrics, methods=["GET"]),
                Route("/v1/models", list_models, methods=["GET"]),
                Route("/v1/chat/completions", runs(CHAT), methods=["POST"]),
                Route("/v1/responses", runs(RESPONSES), methods=["POST"])],
        middleware=[Middleware(RequestMetrics, metrics=service.metrics)],
        exception_handlers={ApiError: _api_error, StarletteHTTPException: _http_error, Exception: _crash},
        lifespan=lifespan)
