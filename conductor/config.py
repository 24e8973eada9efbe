"""Typed settings. Two profiles (`local`, the offline default, and `production`); every field
can be overridden by an environment variable `CONDUCTOR_<FIELD>` (nested: `CONDUCTOR_EXECUTION__TIMEOUT_S`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

Profile = Literal["local", "production"]
REPO_ROOT = Path(__file__).resolve().parent.parent


class ExecutionConfig(BaseModel):
    """Budgets and failure policy of one workflow execution."""

    max_steps: int = Field(default=5, ge=1)
    max_output_tokens: int = Field(default=4096, gt=0)  # per call; the worker's own cap may be lower
    max_usd_per_question: float | None = Field(default=None, ge=0)
    timeout_s: float | None = Field(default=None, gt=0)  # per call; None = the worker's timeout_s
    max_retries: int = Field(default=3, ge=0)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    on_step_failure: Literal["continue", "stop"] = "continue"
    max_recursion_depth: int = Field(default=1, ge=0)
    # The paper runs steps one by one; the DAG schedule gives the same answers with less wait.
    parallel: bool = True


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CONDUCTOR_", env_nested_delimiter="__", extra="ignore")

    profile: Profile = "local"
    home: Path = Field(default_factory=lambda: Path.home() / ".conductor")
    pool_file: Path = REPO_ROOT / "deployments" / "pools" / "local.yaml"
    seed: int = 0
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)

    @property
    def warehouse_path(self) -> Path:
        return self.home / "warehouse.duckdb"

    @property
    def mlflow_uri(self) -> str:
        return f"sqlite:///{self.home / 'mlflow.db'}"

    def ensure_home(self) -> Path:
        # 0700: the home holds curated eval data, the warehouse and API-bearing config; other local
        # users (and anything running under another uid) must not read it
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.home.stat().st_uid == os.geteuid():
            self.home.chmod(0o700)
        return self.home


def load_settings(**overrides: object) -> Settings:
    return Settings(**overrides)  # type: ignore[arg-type]
