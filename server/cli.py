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
from conductor.config import Settings, load_settings, refuse_accidental_simulation
from conductor.workers.pool import PoolError, read_pool_file
from server.build import ServeError, build_app, installed_resolver
from server.config import ServeConfig
from server.guards import KEYS_ENV, KeyRing


def serve(
    model: str = typer.Option("template:fanout", "--model",
                              help="A model directory, models:/NAME@ALIAS (needs registry/), or template:SHAPE."),
    pool_file: Optional[Path] = typer.Option(None, "--pool", help="Pool YAML file (default: the profile's pool)."),
    profile: Optional[str] = typer.Option(None, "--profile", help=Settings.model_fields["profile"].description
                                          + " Default: $CONDUCTOR_PROFILE, else local."),
    allow_simulated: bool = typer.Option(False, "--allow-simulated",
                                         help=Settings.model_fields["allow_simulated"].description),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    name: str = typer.Option("conductor", "--name", help="Model id clients use in requests."),
    keys_file: Optional[Path] = typer.Option(None, "--keys-file",
                                             help=f"File of API keys, one a line (also: ${KEYS_ENV}, comma-separated)."),
    no_auth: bool = typer.Option(False, "--no-auth", help="Serve without API keys (only on 127.0.0.1)."),
    max_usd: Optional[float] = typer.Option(None, "--max-usd", help="Most one request may spend."),
    timeout_s: float = typer.Option(300.0, "--timeout", help="Whole-request time limit in seconds."),
    rpm: float = typer.Option(600.0, "--rpm", help="Requests per minute allowed per key (sustained)."),
    burst: int = typer.Option(200, "--burst", help="Requests a key may send at once before --rpm applies."),
    per_key: int = typer.Option(64, "--concurrency-per-key", help="Requests one key may have in flight."),
    access_log: bool = typer.Option(True, "--access-log/--no-access-log", help="Log each request line."),
    staging: Optional[Path] = typer.Option(None, "--staging",
                                           help="Staging directory for traces (default: $CONDUCTOR_HOME/staging)."),
    registry: bool = typer.Option(True, "--registry/--no-registry",
                                  help="Also serve the registry's versions: conductor@ALIAS, conductor/N (MLflow)."),
    registry_ttl: float = typer.Option(5.0, "--registry-ttl", help="Seconds an alias lookup is reused."),
    gc_freeze: bool = typer.Option(True, "--gc-freeze/--no-gc-freeze",
                                   help="Move what start-up loaded out of the garbage collector's sight and collect "
                                        "less often (see docs/serve.md, Load): under load the collector's full passes "
                                        "over the imported libraries' objects cost about as much CPU as the requests."),
) -> None:
    """Serve the Conductor behind an OpenAI-compatible API (docs/serve.md)."""
    with user_errors(ServeError, PoolError, ValueError, OSError):  # ValueError: pydantic's ValidationError too
        settings = load_settings(**({"profile": profile} if profile else {}))
        pool = pool_file or settings.pool_file
        loaded = read_pool_file(pool)  # the pool the server is built on, read before anything starts
        refuse_accidental_simulation(settings.profile, {"serving": (pool, loaded.simulated)},
                                     allow_simulated or settings.allow_simulated)
        if no_auth and host != "127.0.0.1":
            raise UserError("--no-auth is allowed only with --host 127.0.0.1")
        keys = None if no_auth else KeyRing.load(os.environ.get(KEYS_ENV), keys_file)
        if keys is not None and not len(keys):
            raise UserError(f"no API keys: set ${KEYS_ENV} or --keys-file (or --no-auth on 127.0.0.1)")
        settings.ensure_home()
        config = ServeConfig(model_name=name, model_ref=model, pool_file=pool,
                             max_usd_cap=max_usd, request_timeout_s=timeout_s,
                             requests_per_minute=rpm, burst=burst, concurrency_per_key=per_key,
                             staging_dir=staging or settings.staging_dir,
                             registry_models=registry, registry_ttl_s=registry_ttl,
                             model_cache_dir=settings.home / "serve-models",
                             warehouse_path=settings.warehouse_path, execution=settings.execution)
        app = build_app(config, keys, resolver=installed_resolver())
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    err_console.print(f"serving {name} ({model}) on http://{host}:{port}/v1; traces staged in {config.staging_dir}")
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
