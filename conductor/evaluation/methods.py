"""One parser from a method spec (`single:sim-coder`, `moa`, `conductor:PATH`, ...) to a
`Method`, shared by `conductor eval` and the evaluation flow.

Settings: `constrained` is the paper's training budget (4096 output tokens per call);
`unconstrained` lifts it to 32k, which is also the reasoning budget a worker may spend (the
simulated pool answers a larger budget with slightly higher accuracy and more output tokens,
docs/simulated.md; real adapters' reasoning-effort options stay as the pool file sets them). A baseline whose workflow is longer than the paper's 5 steps
(reflect, budget, moa) gets `max_steps` raised to its own length, and says so in its docs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from conductor.config import ExecutionConfig
from conductor.data.schema import Problem
from conductor.effort import Effort, parse_effort
from conductor.evaluation.baselines import (
    BUDGET_SAMPLES, REFLECT_ROUNDS, BaselineError, MoAPlanner, OraclePlanner, RandomPlanner, WorkerPlanner,
)
from conductor.evaluation.conductor_cost import GpuHourPlanner
from conductor.methods import Method
from conductor.planners import SHAPES, ModelPlanner, TemplatePlanner
from conductor.types import Prices, WorkerSpec
from conductor.workers.pool import read_pool_file

Setting = Literal["constrained", "unconstrained"]
SETTING_OUTPUT_TOKENS: dict[str, int] = {"constrained": 4096, "unconstrained": 32768}
# `conductor:models:/conductor@champion` -> a local model directory; registry/ supplies it.
ModelResolver = Callable[[str], Path]
METHOD_KINDS = ("conductor", "single", "reflect", "budget", "moa", "random", "oracle", "router", "template")
SPEC_HELP = ("conductor:PATH | conductor:models:/conductor@ALIAS | single:WORKER | reflect:WORKER | budget:WORKER"
             " | moa[:AGGREGATOR] | random | oracle | router | template:SHAPE; conductor: and template: take"
             " ?effort=low|medium|high")
# The methods whose planner reads the Conductor prompt, and so the effort level stated in it
# (a trained Conductor; the template stand-in, which writes conductor/planners.py EFFORT_SHAPES).
EFFORT_KINDS = ("conductor", "template")


class MethodSpecError(ValueError):
    """A method spec that names nothing runnable (one line, says what would be)."""


def execution_for(setting: Setting, base: ExecutionConfig | None = None) -> ExecutionConfig:
    if setting not in SETTING_OUTPUT_TOKENS:
        raise MethodSpecError(f"unknown setting {setting!r}; one of {', '.join(SETTING_OUTPUT_TOKENS)}")
    return (base or ExecutionConfig()).model_copy(update={"max_output_tokens": SETTING_OUTPUT_TOKENS[setting]})


def split_effort(spec: str) -> tuple[str, Effort | None]:
    """A spec without its `?effort=LEVEL` suffix, and the level (None: none asked for), e.g.
    `conductor:models:/conductor@challenger?effort=high`. The level is stated in the Conductor's
    prompt of every question, and named in the Method's name (`...+effort-high@pool`)."""
    base, sep, query = spec.strip().partition("?")
    if not sep:
        return base, None
    key, eq, value = query.partition("=")
    if key != "effort" or not eq:
        raise MethodSpecError(f"{spec}: the one option a method takes is ?effort=LEVEL, LEVEL one of {', '.join(Effort)}")
    try:
        level = parse_effort(value)
    except ValueError as exc:
        raise MethodSpecError(f"{spec}: {exc}") from None
    if base.partition(":")[0] not in EFFORT_KINDS:
        raise MethodSpecError(f"{spec}: ?effort= is stated in the Conductor's prompt; only the"
                              f" {' and '.join(EFFORT_KINDS)} methods read it")
    return base, level


def _lookup(problems: Sequence[Problem]) -> Callable[[str], tuple[str, str] | None]:
    by_question = {p.task_text.strip(): (p.domain, p.source) for p in problems}
    return by_question.get


def method_from_spec(
    spec: str,
    pool_file: str | Path,
    *,
    setting: Setting = "constrained",
    execution: ExecutionConfig | None = None,
    problems: Sequence[Problem] = (),
    train_problems: Sequence[Problem] = (),
    resolve_model: ModelResolver | None = None,
    seed: int = 0,
    conductor_usd_per_gpu_hour: float | None = None,
    conductor_prices: Prices | None = None,
    exclude: Sequence[str] = (),
) -> Method:
    """The Method a spec names, over `pool_file` less the `exclude`d workers (opted out: offered
    to no planner, never called). `problems` are the ones being evaluated (the
    oracle looks up their domain); `train_problems` train the router. A `conductor:` method's own
    generation costs `conductor_usd_per_gpu_hour` x its generation time (a self-hosted model), or
    `conductor_prices` per token (an endpoint's price); neither: 0. `?effort=LEVEL` after a
    conductor: or template: spec states that level in the Conductor's prompt (`split_effort`)."""
    base, effort = split_effort(spec)
    kind, _, arg = base.partition(":")
    config = execution_for(setting, execution)
    whole = read_pool_file(pool_file).workers
    offer = _offered(whole, exclude)
    workers = [w for w in whole if not w.is_conductor and (offer is None or w.id in offer)]
    ids = [w.id for w in workers]

    def need_worker() -> str:
        if not arg:
            raise MethodSpecError(f"{kind} needs a worker: {kind}:WORKER with WORKER one of {', '.join(ids)}")
        if arg not in ids:
            raise MethodSpecError(f"{spec}: no worker {arg!r} in {pool_file}; one of {', '.join(ids)}")
        return arg

    planner: object
    steps = config.max_steps
    if kind in ("single", "reflect", "budget"):
        planner = WorkerPlanner(kind, need_worker(), _lookup(problems))
        steps = {"single": 1, "reflect": REFLECT_ROUNDS + 1, "budget": BUDGET_SAMPLES + 1}[kind]
    elif kind == "moa":
        if arg and arg not in ids:
            raise MethodSpecError(f"{spec}: no aggregator {arg!r} in {pool_file}; one of {', '.join(ids)}")
        planner, steps = MoAPlanner(arg or None, _lookup(problems)), len(workers) + 1
    elif kind == "random":
        planner = RandomPlanner(seed=seed, max_steps=config.max_steps)
    elif kind == "oracle":
        try:
            OraclePlanner.check_pool(workers)
        except BaselineError as exc:
            raise MethodSpecError(str(exc)) from None
        planner = OraclePlanner(_lookup(problems))
    elif kind == "template":
        if arg not in SHAPES:
            raise MethodSpecError(f"{spec}: template needs a shape, one of {', '.join(SHAPES)}")
        planner = TemplatePlanner(arg)  # type: ignore[arg-type]
    elif kind == "router":
        from conductor.evaluation.router import train_router

        planner = train_router(train_problems or default_router_train(), pool_file, ids, seed=seed,
                               lookup=_lookup(problems), questions_in_flight=config.questions_in_flight)
    elif kind == "conductor":
        if conductor_usd_per_gpu_hour is not None and conductor_prices is not None:
            raise MethodSpecError("price the Conductor by $/GPU-hour or by token prices, not both")
        planner = ModelPlanner.from_directory(_model_dir(arg, resolve_model), prices=conductor_prices)
        if conductor_usd_per_gpu_hour is not None:
            planner = GpuHourPlanner(planner, conductor_usd_per_gpu_hour)
    else:
        raise MethodSpecError(f"unknown method {spec!r}; methods: {SPEC_HELP}")
    config = config.model_copy(update={"max_steps": max(config.max_steps, steps)})
    return Method(planner, Path(pool_file), config, offer=offer, effort=effort)


def _offered(workers: Sequence[WorkerSpec], exclude: Sequence[str]) -> tuple[str, ...] | None:
    """The ids offered once `exclude` is left out (None: nothing excluded, the whole file)."""
    if not exclude:
        return None
    ids = [w.id for w in workers]
    unknown = [i for i in exclude if i not in ids]
    if unknown:
        raise MethodSpecError(f"--exclude: no worker {', '.join(unknown)} in the pool (it has {', '.join(ids)})")
    kept = tuple(w.id for w in workers if w.id not in exclude)
    if not any(not w.is_conductor for w in workers if w.id in kept):
        raise MethodSpecError(f"--exclude {' '.join(exclude)} leaves no worker in the pool")
    return kept


ROUTER_TRAIN_QUESTIONS = 240


def default_router_train() -> list[Problem]:
    """The synthetic bank's train split (code left out: its grading needs the sandbox), when no
    train problems are given. Evaluate on held-out problems: these are train ones."""
    from conductor.data.synthetic import generate_bank, split_bank

    train, _ = split_bank(generate_bank(2 * ROUTER_TRAIN_QUESTIONS, seed=0))
    return [p for p in train if p.domain != "code"][:ROUTER_TRAIN_QUESTIONS]


def _model_dir(arg: str, resolve_model: ModelResolver | None) -> Path:
    if not arg:
        raise MethodSpecError("conductor needs a model: conductor:PATH or conductor:models:/conductor@ALIAS")
    if arg.startswith("models:/"):
        if resolve_model is None:
            raise MethodSpecError(f"{arg}: resolving a registered model needs registry/ (not available here);"
                                  " pass a model directory instead")
        path = Path(resolve_model(arg))
    else:
        path = Path(arg)
    if not (path / "config.json").is_file():
        raise MethodSpecError(f"conductor:{arg}: {path} is not a model directory (no config.json)")
    return path


def check_specs(specs: Sequence[str], pool_file: str | Path, *, resolve_model: ModelResolver | None = None,
                exclude: Sequence[str] = ()) -> None:
    """Raise MethodSpecError for the first spec that names nothing runnable, without loading a
    model or training a router (a command checks its arguments before it starts a flow)."""
    _offered(read_pool_file(pool_file).workers, exclude)
    for spec in specs:
        base, _ = split_effort(spec)
        if base == "router":
            continue
        if base.startswith("conductor:"):
            _model_dir(base.partition(":")[2], resolve_model)
        else:
            method_from_spec(spec, pool_file, exclude=exclude)
