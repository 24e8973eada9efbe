"""What a server is started with: typed, described, validated once at start."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from conductor.config import ExecutionConfig


class ServeConfig(BaseModel):
    model_name: str = Field(default="conductor", description="The model id clients name in requests and /v1/models.")
    model_ref: str = Field(default="template:fanout",
                           description="What plans: a model directory, `models:/NAME@ALIAS`, or `template:SHAPE`.")
    pool_file: Path = Field(description="Pool YAML file of the workers the Conductor may call.")
    max_body_bytes: int = Field(default=256 * 1024, gt=0, description="Largest request body accepted (413 above).")
    concurrency_per_key: int = Field(default=64, gt=0, description="Requests one key may have in flight (429 above).")
    requests_per_minute: float = Field(default=600.0, gt=0, description="Sustained request rate allowed per key.")
    burst: int = Field(default=200, gt=0, description="Requests a key may send at once before the rate applies.")
    request_timeout_s: float = Field(default=300.0, gt=0, description="Whole-request limit (504 above).")
    max_usd_cap: float | None = Field(default=None, gt=0,
                                      description="Most a request may spend; a request's own `max_usd` may lower it.")
    staging_dir: Path | None = Field(default=None,
                                     description="Where traces are staged for the warehouse's writer (None: not kept).")
    warehouse_path: Path | None = Field(default=None,
                                        description="Warehouse file for the server's run row (opened briefly).")
    flush_interval_s: float = Field(default=0.5, gt=0, description="How often finished traces are staged as a batch.")
    registry_models: bool = Field(default=True, description="Also serve the registry's versions of `conductor` "
                                  "(conductor@ALIAS, conductor/N), resolved lazily through registry/.")
    registry_uri: str | None = Field(default=None, description="MLflow tracking/registry URI (None: registry/'s default).")
    registry_ttl_s: float = Field(default=5.0, ge=0, description="How long an alias lookup is reused.")
    model_cache_dir: Path | None = Field(default=None, description="Where registry versions are downloaded (None: a temp dir).")
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig, description="How workflows run.")
