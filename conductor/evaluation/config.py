"""What `conductor eval` runs: the evaluation's typed settings (each description is the CLI's help)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from conductor.evaluation.methods import SPEC_HELP, Setting
from conductor.evaluation.prices import DEFAULT_MAX_AGE_DAYS
from conductor.profiles import Profile, profile_help
from conductor.types import Prices


class EvalConfig(BaseModel):
    """What `conductor eval` runs. Each field's description is the CLI's help."""

    methods: list[str] = Field(description=f"Method specs (repeat the option): {SPEC_HELP}.")
    benchmarks: list[str] = Field(default_factory=list,
                                  description="Benchmarks (problem sources) to run; empty: every one present.")
    repeats: int = Field(default=1, ge=1, description="Repeats of every method x benchmark (mean ± SE over them).")
    problems_file: Path | None = Field(default=None, description="Problems (JSONL, Problem schema) instead of"
                                       " the profile's curated evaluation sets.")
    pool_file: Path | None = Field(default=None, description="Pool YAML file (default: the profile's pool).")
    exclude: list[str] = Field(default_factory=list, description="Worker ids opted out (repeat the option): every"
                               " method plans over the rest of the pool and never calls them.")
    setting: Setting = Field(default="constrained", description="constrained (4096 output tokens per call, the"
                             " paper's training budget) or unconstrained (32k tokens, also the reasoning budget).")
    limit_per_benchmark: int = Field(default=0, ge=0, description="At most N problems per benchmark (0: all).")
    profile: Profile = Field(default="local", description=f"The settings profile. {profile_help()}.")
    seed: int = Field(default=0, description="Seed of the random baseline and of every run's draws.")
    concurrency: int = Field(default=8, ge=1, description="Method x repeat tasks solved at once (each in its own"
                             " event loop; the default runs 8 methods side by side).")
    questions_in_flight: int = Field(default=64, ge=1, description="Questions each method x repeat task solves at"
                                     " once (each worker's own `concurrency:` in the pool file still bounds its"
                                     " calls; the router's training uses the same). A conductor: method keeps"
                                     " the profile's execution.questions_in_flight: a local Conductor writes one"
                                     " workflow at a time and its planner timeout counts the wait.")
    out_dir: Path | None = Field(default=None, description="Where the table and plots go (default:"
                                 " $CONDUCTOR_HOME/evaluations/<id>).")
    # Optional additions (flows/nightly.py calls evaluation_flow with the fields above).
    provider_limit: int = Field(default=4, ge=1, description="Prefect global concurrency limit"
                                " `conductor-provider-<provider>`: how many benchmark x method tasks may use one"
                                " provider at once, across every flow on the server. Created when missing; an"
                                " existing limit keeps its value unless --provider-limits names it.")
    use_provider_limits: bool = Field(default=True, description="Hold the per-provider global concurrency"
                                      " limits (false: only the task runner's --concurrency bounds the tasks).")
    provider_limits: dict[str, int] = Field(default_factory=dict, description="Per-provider limits (provider ->"
                                            " slots), set on the server (created or updated) by the flow.")
    task_runner: Literal["threads", "dask"] = Field(default="threads", description="threads (one process) or"
                                                    " dask (prefect-dask; a LocalCluster unless --dask-address).")
    dask_address: str | None = Field(default=None, description="Scheduler address of a running Dask cluster.")
    max_price_age_days: int = Field(default=DEFAULT_MAX_AGE_DAYS, ge=0, description="Warn (once per evaluation)"
                                    " when a price used is older than this many days.")
    conductor_usd_per_gpu_hour: float | None = Field(default=None, ge=0, description="A self-hosted Conductor's"
                                                     " cost: $/GPU-hour x its generation time.")
    conductor_prices: Prices | None = Field(default=None, description="An endpoint Conductor's token prices"
                                            " (USD per 1M tokens: input, output).")
    task_per_benchmark: bool = Field(default=False, description="One Prefect task per benchmark x method x"
                                     " repeat; default: one per method x repeat, its benchmarks' questions in one"
                                     " event loop (no drain between benchmarks, a third of the task overhead).")
    log_to_mlflow: bool = Field(default=True, description="Log metrics, the table and the plots as an MLflow run"
                                " (experiment conductor-evaluation).")
