"""Typed settings. The profile (`local`, the offline default, unless set) is one of
conductor/profiles.py's registry; every field can be overridden by an environment variable `CONDUCTOR_<FIELD>` (nested: `CONDUCTOR_EXECUTION__TIMEOUT_S`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from conductor.profiles import Profile, get_profile, profile_help

REPO_ROOT = Path(__file__).resolve().parent.parent
# The pool every command, flow and training config uses unless told otherwise (CONDUCTOR_POOL_FILE,
# --pool): the simulated pool, so a fresh checkout runs offline. The production profile refuses it.
DEFAULT_POOL_FILE = REPO_ROOT / "deployments" / "pools" / "local.yaml"
ALLOW_SIMULATED_FLAG = "--allow-simulated"


class ExecutionConfig(BaseModel):
    """Budgets, limits and failure policy of running workflows: a Method's execution settings.
    Each field's description is its documentation and the CLI's help."""

    max_steps: int = Field(default=5, ge=1, description="Most steps a workflow may have (the paper uses 5).")
    max_output_tokens: int = Field(
        default=4096, gt=0, description="Output tokens per call; a worker's own `max_tokens` may be lower.")
    max_usd_per_question: float | None = Field(
        default=None, ge=0,
        description="Dollar budget per question, recursion rounds included; no new call starts once it is"
        " spent. A worker with no known price is refused under a budget (its cost could not be counted).")
    timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds per call attempt; unset: each worker's own `timeout_s`.")
    planner_timeout_s: float = Field(
        default=300.0, gt=0, description="Seconds the planner (the Conductor) may take to write a workflow.")
    max_retries: int = Field(default=3, ge=0, description="Retries of a call after a 429, a 5xx or a timeout.")
    backoff_base_s: float = Field(default=0.5, ge=0, description="First retry's backoff ceiling (doubles each retry).")
    backoff_max_s: float = Field(default=30.0, ge=0, description="Longest wait between retries.")
    breaker_failures: int = Field(
        default=3, ge=0,
        description="Consecutive outage failures of a worker (failed past its retries, or timed out) that open its"
        " circuit breaker: the worker is marked down for the run's questions and its steps go to a fallback"
        " (0: never).")
    breaker_cooldown_s: float = Field(
        default=60.0, ge=0,
        description="Seconds a worker stays down before one trial call (half-open): a success brings it back.")
    on_step_failure: Literal["continue", "stop"] = Field(
        default="continue", description="After a failed step: `continue` (later steps see the failure) or `stop`.")
    max_recursion_depth: int = Field(
        default=1, ge=0, description="How many times the Conductor may re-plan within one question.")
    parallel: bool = Field(
        default=True,
        description="Start each step as soon as the steps it reads are done; false runs them one by one, as"
        " the paper does (same answers, longer wait).")
    questions_in_flight: int = Field(
        default=16, gt=0, description="Questions solved at once; each worker's own concurrency limit still applies.")


def default_home() -> Path:
    """Where data lives unless CONDUCTOR_HOME says otherwise: a checkout keeps it in its own
    `.conductor` (where `make run` writes, so `conductor sql` run there finds it); an installed
    package uses ~/.conductor."""
    cwd = Path.cwd().resolve()
    if (REPO_ROOT / "pyproject.toml").is_file() and (cwd == REPO_ROOT or REPO_ROOT in cwd.parents):
        return REPO_ROOT / ".conductor"
    return Path.home() / ".conductor"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CONDUCTOR_", env_nested_delimiter="__", extra="ignore")

    profile: Profile = Field(default="local", description=f"The profile. {profile_help()}.")
    home: Path = Field(default_factory=default_home, description="Where the warehouse, curated data and caches live.")
    pool_file: Path = Field(default=DEFAULT_POOL_FILE,
                            description="Pool YAML file every stage uses (training, evaluation, serving).")
    allow_simulated: bool = Field(
        default=False, description="Let the production profile run on a simulated pool (refused otherwise).")
    accelerate_config: Path | None = Field(
        default=None,
        description="An `accelerate launch` config file: the nightly then trains each GRPO chunk as"
        " `accelerate launch --config_file FILE conductor train --resume ...` (the gpu work pool sets"
        " CONDUCTOR_ACCELERATE_CONFIG); unset: in this process.")
    warehouse_staging: Path | None = Field(
        default=None,
        description="Where traces are staged as Parquet batches for the one warehouse writer to ingest: set"
        " (CONDUCTOR_WAREHOUSE_STAGING) where several processes write traces at once; unset, flows write"
        " directly and training stages under $CONDUCTOR_HOME/staging.")
    seed: int = Field(default=0, description="Seed of every random choice of a run (retries' jitter, sampling).")
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)

    @property
    def warehouse_path(self) -> Path:
        return self.home / "warehouse.duckdb"

    @property
    def staging_dir(self) -> Path:
        """Where staged trace batches go: `warehouse_staging`, else $CONDUCTOR_HOME/staging."""
        return self.warehouse_staging or self.home / "staging"

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


class SimulatedPoolRefused(ValueError):
    """A run that would be simulated by accident; the message is one line for users."""


def refuse_accidental_simulation(profile: Profile, pools: dict[str, tuple[Path, bool]], allow_simulated: bool) -> None:
    """Refuse, in one line, a run that is simulated by accident: a profile whose pool policy refuses
    a simulated pool (production) on one (unless `allow_simulated`), or stages that disagree (`pools` maps a stage,
    e.g. "training", to its pool file and whether that pool is simulated), since a model trained
    in simulation and judged on real workers, or the reverse, measures neither."""
    kinds = {simulated for _, simulated in pools.values()}
    if len(kinds) > 1:
        said = ", ".join(f"{stage} on {'simulated' if sim else 'real'} pool {path}" for stage, (path, sim) in pools.items())
        raise SimulatedPoolRefused(f"refusing a run that mixes simulated and real pools: {said}")
    if not get_profile(profile).simulated_pool and True in kinds and not allow_simulated:
        path = next(path for path, sim in pools.values() if sim)
        raise SimulatedPoolRefused(f"the {profile} profile refuses the simulated pool {path}; name a real pool"
                                   f" (CONDUCTOR_POOL_FILE, --pool) or pass {ALLOW_SIMULATED_FLAG}")
