"""Run an app with uvicorn on 127.0.0.1 in a background thread (tests, benchmarks, drills)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(app: Starlette, *, port: int | None = None, log_level: str = "warning",
                   startup_timeout_s: float = 60.0) -> Iterator[str]:
    """Yield the base URL (`http://127.0.0.1:PORT`) while the server runs; stop it gracefully
    on exit (requests in flight finish, the app's shutdown runs)."""
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level,
                                           lifespan="on", timeout_graceful_shutdown=30))
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server stopped while starting (see its log)")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise TimeoutError(f"the server did not start within {startup_timeout_s:g}s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
