"""`conductor serve`: the CLI plug-in (entry point `conductor.cli` -> `server.cli:register`)."""

from __future__ import annotations

import gc
import logging
import os
from pathlib import Path
from typing import Optional

import typer
import uvicorn

from conductor.cli.common import UserError, err_console, user_errors
from conductor.cli.options import field_option, fields_of
from conductor.config import Settings, load_settings, refuse_accidental_simulation
from conductor.workers.pool import PoolError, read_pool_file
from server.build import ServeError, build_app, installed_resolver
from server.config import ServeConfig
from server.guards import KEYS_ENV, KeyRing


def _serve(name: str, *flags: str, **kwargs):  # noqa: ANN202 - typer's OptionInfo
    return field_option(ServeConfig, name, *flags, **kwargs)


def serve(
    model_ref: str = _serve("model_ref", "--model"),
    pool_file: Optional[Path] = _serve("pool_file", "--pool", from_profile=True),
    profile: Optional[str] = typer.Option(None, "--profile", help=Settings.model_fields["profile"].description
                                          + " Default: $CONDUCTOR_PROFILE, else local."),
    allow_simulated: bool = typer.Option(False, "--allow-simulated",
                                         help=Settings.model_fields["allow_simulated"].description),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    model_name: str = _serve("model_name", "--name"),
    keys_file: Optional[Path] = typer.Option(None, "--keys-file",
                                             help=f"File of API keys, one a line (also: ${KEYS_ENV}, comma-separated)."),
    no_auth: bool = typer.Option(False, "--no-auth", help="Serve without API keys (only on 127.0.0.1)."),
    max_usd_cap: Optional[float] = _serve("max_usd_cap", "--max-usd"),
    request_timeout_s: float = _serve("request_timeout_s", "--timeout"),
    requests_per_minute: float = _serve("requests_per_minute", "--rpm"),
    burst: int = _serve("burst", "--burst"),
    concurrency_per_key: int = _serve("concurrency_per_key", "--concurrency-per-key"),
    access_log: bool = typer.Option(True, "--access-log/--no-access-log", help="Log each request line."),
    staging_dir: Optional[Path] = _serve("staging_dir", "--staging", from_profile=True),
    registry_models: bool = _serve("registry_models", "--registry/--no-registry"),
    registry_ttl_s: float = _serve("registry_ttl_s", "--registry-ttl"),
    gc_freeze: bool = typer.Option(True, "--gc-freeze/--no-gc-freeze",
                                   help="Move what start-up loaded out of the garbage collector's sight and collect "
                                        "less often (see docs/serve.md, Load): under load the collector's full passes "
                                        "over the imported libraries' objects cost about as much CPU as the requests."),
) -> None:
    """Serve the Conductor behind an OpenAI-compatible API (docs/serve.md)."""
    given = fields_of(ServeConfig, locals())  # the parameters named after ServeConfig's fields
    with user_errors(ServeError, PoolError, ValueError, OSError):  # ValueError: pydantic's ValidationError too
        settings = load_settings(**({"profile": profile} if profile else {}))
        pool = given.pop("pool_file") or settings.pool_file
        loaded = read_pool_file(pool)  # the pool the server is built on, read before anything starts
        refuse_accidental_simulation(settings.profile, {"serving": (pool, loaded.simulated)},
                                     allow_simulated or settings.allow_simulated)
        if no_auth and host != "127.0.0.1":
            raise UserError("--no-auth is allowed only with --host 127.0.0.1")
        keys = None if no_auth else KeyRing.load(os.environ.get(KEYS_ENV), keys_file)
        if keys is not None and not len(keys):
            raise UserError(f"no API keys: set ${KEYS_ENV} or --keys-file (or --no-auth on 127.0.0.1)")
        settings.ensure_home()
        config = ServeConfig(**{**given, "pool_file": pool, "staging_dir": staging_dir or settings.staging_dir},
                             model_cache_dir=settings.home / "serve-models",
                             warehouse_path=settings.warehouse_path, execution=settings.execution)
        app = build_app(config, keys, resolver=installed_resolver())
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    err_console.print(f"serving {model_name} ({model_ref}) on http://{host}:{port}/v1; traces staged in {config.staging_dir}")
    if gc_freeze:
        tune_gc()
    try:
        uvicorn.run(app, host=host, port=port, log_level="info", access_log=access_log,
                    timeout_graceful_shutdown=30)
    finally:
        if gc_freeze:
            gc.unfreeze()  # back in the collector's sight, so interpreter exit tears down as usual


# Generation 0 collects after this many net allocations (CPython's default is 700); 1 and 2 after
# 10 collections of the one below. Measured in-process (2,000 requests, 200 at a time): start-up
# frozen + these thresholds 0.79 ms of CPU a request, frozen only 1.0 ms, neither 1.6 ms.
GC_THRESHOLDS = (10_000, 10, 10)


def tune_gc() -> None:
    """Collect once, then freeze everything alive (the imported libraries, the pool, the
    model): a full collection no longer walks those objects again and again. Only requests'
    objects remain to collect, less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
