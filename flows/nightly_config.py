"""What a night runs: `NightConfig`, the nightly's one typed parameter (the CLI's options, the
flow's signature and `deployments/prefect.yaml`'s `parameters: {config: ...}` all read it), and
`Night`, the same resolved against the settings (CONDUCTOR_POOL_FILE, CONDUCTOR_ACCELERATE_CONFIG,
CONDUCTOR_HOME): the pools, the accelerate command and the budget that `conductor nightly
--dry-run` prints and the flow runs. Resolving refuses a night that would be simulated by
accident (conductor/config.py's `refuse_accidental_simulation`)."""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from conductor.config import Settings, refuse_accidental_simulation
from conductor.effort import Effort, parse_effort
from conductor.profiles import Profile, get_profile, profile_help
from conductor.simulation import simulated_note
from conductor.workers.pool import read_pool_file
from registry.promotion import GateConfig

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

# `single:*` in the baselines: each worker of the night's pool alone (the summary then shows
# whether the challenger beats every single worker, with a confidence bound).
EVERY_SINGLE_WORKER = "single:*"


class NightConfig(BaseModel):
    """One night's parameters. Each description is the CLI's help and the deployment's schema."""

    profile: Profile = Field(default="local", description=f"Settings and training profile. {profile_help()}.")
    steps: int = Field(default=200, description="GRPO steps this night (from the champion, else the SFT warm start).")
    chunk_steps: int = Field(default=50, description="GRPO steps per checkpointed chunk (a retried chunk resumes).")
    seed: int = Field(default=0, description="Seed of the training run and of the held-out problems' draw.")
    pool_file: Path | None = Field(default=None, description="Pool YAML every stage uses (default: the settings'"
                                   " pool, CONDUCTOR_POOL_FILE, else deployments/pools/local.yaml).")
    training_pool_file: Path | None = Field(default=None, description="Pool YAML training plans over, when it"
                                            " differs from the evaluation's (default: `pool_file`); simulated and"
                                            " real pools are never mixed.")
    heldout_problems: int = Field(default=512, description="Held-out problems the challenger and champion are"
                                  " compared on, spread over the domains (the generated bank holds 509: 512 takes"
                                  " them all; a paired difference's standard error is ~2 points at 509, ~4 at 128).")
    baselines: list[str] = Field(default_factory=lambda: ["random", EVERY_SINGLE_WORKER], description="Baseline"
                                 " method specs evaluated beside the challenger and the champion; `single:*` is"
                                 " each worker of the pool alone.")
    challenger_efforts: list[Effort] | None = Field(default=None, description="Effort levels (low, medium,"
                                                    " high) the challenger is also evaluated at: its `conductor:` spec"
                                                    " with `?effort=LEVEL`, one row each in the evaluation and the"
                                                    " summary (the gate compares the challenger with no level stated,"
                                                    " which a model trained with effort rows serves at medium)."
                                                    " Default: the levels the challenger is trained on (the training"
                                                    " config's effort_levels); empty: none.")
    gate: GateConfig = Field(default_factory=GateConfig, description="The promotion gate's margin, confidence,"
                             " cost bound and method.")
    max_usd: float | None = Field(default=None, ge=0, description="Dollar budget of the training's worker calls:"
                                  " training stops cleanly (with a checkpoint) once spent.")
    training_overrides: dict[str, Any] = Field(default_factory=dict, description="Training config fields"
                                               " (conductor/training/config.py) over the profile's.")
    concurrency: int = Field(default=4, ge=1, description="Method x repeat tasks of the evaluation solved at once.")
    run_key: str | None = Field(default=None, description="Names the night (default: today's UTC date); a rerun"
                                " with the same key reuses the stages that completed.")
    allow_simulated: bool = Field(default=False, description="Let the production profile run on a simulated pool"
                                  " (also CONDUCTOR_ALLOW_SIMULATED=1).")
    accelerate_config: Path | None = Field(default=None, description="`accelerate launch` config: each GRPO chunk"
                                           " runs as `accelerate launch --config_file FILE conductor train --resume"
                                           " ...` (default: CONDUCTOR_ACCELERATE_CONFIG; unset: in-process).")
    db_path: str | None = Field(default=None, description="Warehouse file (default: $CONDUCTOR_HOME/warehouse.duckdb).")
    curate: bool = Field(default=True, description="Curate the profile's data sets first (production: the pinned"
                         " hub data sets, so it needs the network). The night's training and held-out problems"
                         " come from the generated bank either way.")

    @model_validator(mode="after")
    def _check(self) -> NightConfig:
        problems = []
        if self.steps < 1:
            problems.append(f"steps must be at least 1 (got {self.steps})")
        if self.chunk_steps < 1:
            problems.append(f"chunk_steps must be at least 1 (got {self.chunk_steps})")
        if self.heldout_problems < 1:
            problems.append(f"heldout_problems must be at least 1 (got {self.heldout_problems})")
        if self.run_key is not None and not _KEY.match(self.run_key):
            problems.append(f"run_key {self.run_key!r}: letters, digits, '.', '_' and '-' only (at most 64)")
        if not 0.5 <= self.gate.confidence < 1:
            problems.append(f"confidence must be in [0.5, 1) (got {self.gate.confidence})")
        if self.gate.cost_bound < 0 or not -1 < self.gate.margin < 1:
            problems.append(f"cost_bound must be >= 0 and margin in (-1, 1) (got {self.gate.cost_bound},"
                            f" {self.gate.margin})")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @classmethod
    def parse(cls, **values: Any) -> NightConfig:
        """Validated, with a bad value as one ValueError line (pydantic's own message is a block)."""
        try:
            return cls(**values)
        except ValidationError as exc:
            raise ValueError("; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())) from None

    def resolve(self, settings: Settings) -> Night:
        """This night against the settings: one pool per stage (refused when simulated by
        accident), the accelerate command, the budget."""
        pool = self.pool_file or settings.pool_file
        training_pool = self.training_pool_file or pool
        files = {path: read_pool_file(path) for path in {pool, training_pool}}
        simulated = {path: f.simulated for path, f in files.items()}
        refuse_accidental_simulation(self.profile, {"training": (training_pool, simulated[training_pool]),
                                                    "evaluation": (pool, simulated[pool])},
                                     self.allow_simulated or settings.allow_simulated)
        overrides = {**get_profile(self.profile).nightly_training, **self.training_overrides,
                     "pool_file": str(training_pool)}
        if self.max_usd is not None:
            overrides["max_usd"] = self.max_usd
        trained = overrides.get("effort_levels", get_profile(self.profile).training.get("effort_levels", []))
        asked = trained if self.challenger_efforts is None else self.challenger_efforts
        efforts = [parse_effort(str(e)) for e in asked]
        workers = [spec.id for spec in files[pool].workers if not spec.is_conductor]
        baselines = [b for spec in self.baselines
                     for b in ([f"single:{w}" for w in workers] if spec == EVERY_SINGLE_WORKER else [spec])]
        return Night(config=self, run_key=self.run_key or datetime.now(UTC).strftime("%Y-%m-%d"),
                     baselines=list(dict.fromkeys(baselines)),
                     pool_file=pool, training_pool_file=training_pool, simulated=simulated[pool],
                     accelerate_config=self.accelerate_config or settings.accelerate_config,
                     home=settings.home, training_overrides=overrides, challenger_efforts=efforts)


class Night(BaseModel):
    """A night as it will run: what `--dry-run` prints."""

    config: NightConfig
    run_key: str
    pool_file: Path = Field(description="The pool the evaluation and the gate use.")
    training_pool_file: Path = Field(description="The pool training plans over (the same kind as `pool_file`).")
    simulated: bool
    baselines: list[str] = Field(description="The baselines evaluated (`single:*` expanded to the pool's workers).")
    accelerate_config: Path | None
    home: Path
    training_overrides: dict[str, Any]
    challenger_efforts: list[Effort] = Field(default_factory=list, description="The levels the challenger is also"
                                             " evaluated at (NightConfig.challenger_efforts, resolved).")

    def evaluation_settings(self) -> dict[str, Any]:
        """The EvalConfig fields a night's evaluations share (its pool among them)."""
        c = self.config
        return {"pool_file": self.pool_file, "profile": c.profile, "seed": c.seed, "concurrency": c.concurrency}

    @property
    def night_dir(self) -> Path:
        return self.home / "nightly" / self.config.profile / self.run_key

    @property
    def training_dir(self) -> Path:
        return self.night_dir / "training"

    def training_run_overrides(self) -> dict[str, Any]:
        """The training config's fields over the profile's, as the training stage sets them (it adds
        the champion's model directory when there is a champion)."""
        return {**self.training_overrides, "max_steps": self.config.steps, "seed": self.config.seed}

    def check_training_config(self) -> None:
        """ValueError, before anything starts, for a value the training config refuses (`--set
        bad_worker_fraction=2`), which the training stage would otherwise meet as it began, after
        the curation. Builds the config read-only: nothing is written."""
        from conductor.training.config import profile_config

        profile_config(self.config.profile, self.training_dir, read_only=True, **self.training_run_overrides())

    def accelerate_command(self) -> list[str] | None:
        """The command each GRPO chunk runs (tasks/launch.py), placeholders for what each chunk
        fills in; None: chunks train in the flow's process."""
        from tasks.launch import launch_command

        if self.accelerate_config is None:
            return None
        chunks = self.training_dir / "chunks"
        return launch_command(str(self.accelerate_config), chunks / "to-step-N.json", chunks / "to-step-N.result.json",
                              "<train run id>", port="<free port>")

    def lines(self) -> list[str]:
        """The resolved settings, one per line."""
        c = self.config
        launch = self.accelerate_command()
        trainer = (shlex.join(launch) if launch
                   else "in-process (no accelerate config: CONDUCTOR_ACCELERATE_CONFIG or --accelerate-config)")
        budget = self.training_overrides.get("max_usd")
        kind = simulated_note(self.simulated) or " (real)"
        return [
            f"profile        {c.profile}",
            f"run key        {self.run_key}",
            f"home           {self.home}",
            f"pool           {self.pool_file}{kind}: training, evaluation and gate"
            if self.pool_file == self.training_pool_file else
            f"pools          training {self.training_pool_file}, evaluation {self.pool_file}{kind}",
            f"training       {c.steps} GRPO steps in chunks of {c.chunk_steps}, profile {c.profile}'s config"
            + "".join(f", {k}={v}" for k, v in sorted(self.training_overrides.items()) if k != "pool_file"),
            f"trainer        {trainer}",
            f"budget         {f'${budget:,.2f} of training worker calls' if budget is not None else 'none'}"
            f" (max_usd: training stops cleanly, with a checkpoint, once spent)",
            f"evaluation     {c.heldout_problems} held-out problems; baselines: {', '.join(self.baselines) or 'none'}"
            + (f"; the challenger also at effort {', '.join(self.challenger_efforts)}" if self.challenger_efforts
               else ""),
            f"gate           {c.gate.method}, margin {c.gate.margin}, confidence {c.gate.confidence},"
            f" cost bound {c.gate.cost_bound}",
        ]
