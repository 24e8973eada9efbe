"""What `conductor eval` runs: the evaluation's typed settings (each description is the CLI's help)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from conductor.evaluation.methods import SPEC_HELP, Setting


class EvalConfig(BaseModel):
    """What `conductor eval` runs. Each field's description is the CLI's help."""

    methods: list[str] = Field(description=f"Method specs (repeat the option): {SPEC_HELP}.")
    benchmarks: list[str] = Field(default_factory=list,
                                  description="Benchmarks (problem sources) to run; empty: every one present.")
    repeats: int = Field(default=1, ge=1, description="Repeats of every method x benchmark (mean ± SE over them).")
    problems_file: Path | None = Field(default=None, description="Problems (JSONL, Problem schema) instead of"
                                       " the profile's curated evaluation sets.")
    pool_file: Path | None = Field(default=None, description="Pool YAML file (default: the profile's pool).")
    setting: Setting = Field(default="constrained", description="constrained (4096 output tokens per call, the"
                             " paper's training budget) or unconstrained (32k).")
    limit_per_benchmark: int = Field(default=0, ge=0, description="At most N problems per benchmark (0: all).")
    profile: str = Field(default="local", description="Settings profile (local or production).")
    seed: int = Field(default=0, description="Seed of the random baseline and of every run's draws.")
    concurrency: int = Field(default=4, ge=1, description="Benchmark x method tasks solved at once.")
    out_dir: Path | None = Field(default=None, description="Where the table and plots go (default:"
                                 " $CONDUCTOR_HOME/evaluations/<id>).")
