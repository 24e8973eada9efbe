"""The nightly pipeline (`make run`, `conductor nightly`, the 02:00 UTC deployment) and the
champion evaluation (the 06:00 UTC deployment).

`nightly_flow` (Prefect name `conductor-nightly`), in order:
1. curation (cached, `curation_flow`);
2. training for `steps` GRPO steps (`training_flow`), resuming from the champion when one
   exists, else from the SFT warm start; registered as `conductor@challenger`;
3. evaluation of the challenger and the champion (the template baseline while there is no
   champion) and the baselines on the same held-out problems (`evaluation_flow`);
4. cost accounting (`nightly_costs_flow`);
5. the promotion gate (`promotion_flow`: registry/promotion.py's gate, recorded in MLflow and
   as a `promotions` row);
6. a summary (Prefect artifacts, a `nightly` row in the warehouse, the returned `NightlySummary`).

Every stage is a flow of its own with typed parameters. The stages that must not be done twice
in one night (training + registration, the evaluation, the gate) run inside tasks cached on the
night's `run_key` and their inputs (Prefect's INPUTS cache policy, results and keys persisted
under $CONDUCTOR_HOME/prefect), so a rerun after a failure or a `kill -9` reuses what completed
and redoes only the rest: a registered challenger is never registered again, a finished
evaluation never paid for again, a decided gate never decided again (and a gate whose decision
reached MLflow but not the cache is read back from the version's tags)."""

from __future__ import annotations

import asyncio
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from prefect import flow, get_run_logger, task
from prefect.cache_policies import INPUTS
from pydantic import BaseModel

from conductor.config import load_settings
from conductor.evaluation.config import EvalConfig
from conductor.planners import DEFAULT_SHAPE
from flows.curation import curation_flow
from flows.evaluation import evaluation_flow
from flows.training import training_flow
from registry.promotion import GateConfig
from tasks.curate import cache_dirs
from tasks.evaluation import evaluation_figures, fill_costs
from tasks.nightly import (current_champion, decide_once, heldout_problems, model_directory, nightly_run,
                           publish, question_outcomes, record_promotion, spend)
from tasks.records import FLOW_RUN_PARAM, abandon_dead_runs, record_run

NIGHTLY_FLOW = "conductor-nightly"
CHAMPION_EVAL_FLOW = "conductor-champion-eval"
BASELINE = f"template:{DEFAULT_SHAPE}"  # what the first challenger is compared with

GateMethod = Literal["bootstrap", "mcnemar"]

# The local profile's nightly training: the local profile's own SFT warm start (the part that
# teaches the tiny model the format and the task type: ~2.4 CPU-minutes) and its GRPO batches,
# for the night's few steps, with no held-out early stopping inside the night (the nightly's own
# evaluation and gate judge the model). A smaller SFT (16 problems, 1 epoch) fit the time better
# but wrote no parseable workflow at all: a nightly whose challenger cannot answer tests nothing.
# `conductor train --profile local` is the full-length run.
LOCAL_NIGHTLY_TRAINING: dict[str, Any] = {
    "eval_every": 0, "early_stopping_patience": 0, "validation_problems": 8,
}
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class NightlySummary(BaseModel):
    """What a nightly run decided and where to look."""

    run_key: str
    nightly_run_id: str
    flow_run_id: str
    profile: str
    simulated: bool
    challenger_version: str
    champion_version_before: str | None
    champion_version_after: str | None
    started_from: str  # "champion v3" or "SFT warm start"
    compared_with: str  # "v3" (the champion) or "template:..." (the baseline)
    promoted: bool
    reason: str
    promotion_id: str
    evaluation_id: str
    accuracy: dict[str, float]  # label -> held-out accuracy
    usd_per_question: dict[str, float]
    questions: int
    usd_training: float
    usd_evaluation: float
    mlflow_run_id: str
    model_uri: str
    links: dict[str, str]
    out_dir: str
    results_markdown: str


# --- the stages that run once a night: tasks cached on their inputs (run_key among them) ---

def _once(fn: Any) -> Any:
    """`fn` with its result and cache key persisted under $CONDUCTOR_HOME (read at call time:
    the home is a setting, not an import-time constant)."""
    results, keys = cache_dirs()
    return fn.with_options(cache_policy=INPUTS.configure(key_storage=keys), result_storage=results,
                           persist_result=True)


@task(name="training-stage")
def training_stage(run_key: str, profile: str, steps: int, chunk_steps: int, seed: int,
                   overrides: dict[str, Any], night_dir: str) -> dict[str, Any]:
    """Train from the champion (else the SFT warm start) for `steps` GRPO steps and register the
    challenger. The champion is looked up inside, so a rerun of this night (after the gate may
    have moved it) hits the cache instead of training again."""
    champion = current_champion()
    overrides = {**overrides, "max_steps": steps, "seed": seed}
    if champion is not None:
        overrides["model_name_or_path"] = model_directory(champion, str(Path(night_dir) / "models"))
    registered = training_flow(output_dir=str(Path(night_dir) / "training"), profile=profile,
                               chunk_steps=chunk_steps, overrides=overrides)
    return {**registered, "champion_before": champion,
            "started_from": f"champion v{champion}" if champion else "SFT warm start"}


@task(name="evaluation-stage")
def evaluation_stage(run_key: str, cfg: EvalConfig, db_path: str | None) -> dict[str, Any]:
    result = evaluation_flow(cfg, db_path=db_path)
    return result.model_dump(mode="json")


@task(name="gate-stage")
def gate_stage(run_key: str, challenger_version: str, evaluation_id: str, challenger_spec: str, champion_spec: str,
               champion_version: str | None, gate_config: GateConfig, db_path: str | None) -> dict[str, Any]:
    return promotion_flow(challenger_version=challenger_version, evaluation_id=evaluation_id,
                          challenger_spec=challenger_spec, champion_spec=champion_spec,
                          champion_version=champion_version, margin=gate_config.margin,
                          confidence=gate_config.confidence, cost_bound=gate_config.cost_bound,
                          method=gate_config.method, db_path=db_path)


# --- stage flows that can also run alone --------------------------------------------------------

@flow(name="conductor-costs", log_prints=True)
def nightly_costs_flow(evaluation_id: str, training_run_id: str = "", db_path: str | None = None) -> dict[str, Any]:
    """$ of an evaluation by method and benchmark (from the warehouse's cost views), and the $ the
    training run (its MLflow run id) spent on worker calls."""
    fill_costs(evaluation_id, db_path)
    figures = evaluation_figures(evaluation_id, db_path)
    rows = [{k: r[k] for k in ("method", "benchmark", "questions", "correct", "cost_usd", "usd_per_question",
                               "usd_per_correct") if k in r} for r in figures["by_benchmark"]]
    usd_eval = spend([evaluation_id], db_path)
    usd_train = spend([training_run_id], db_path) if training_run_id else 0.0
    rows.append({"method": "training (GRPO rollouts)", "benchmark": "generated bank", "questions": None,
                 "correct": None, "cost_usd": usd_train, "usd_per_question": None, "usd_per_correct": None})
    print(f"costs: evaluation ${usd_eval:.4f}, training ${usd_train:.4f}")
    return {"rows": rows, "usd_evaluation": usd_eval, "usd_training": usd_train}


@flow(name="conductor-promotion", log_prints=True)
def promotion_flow(challenger_version: str, evaluation_id: str, challenger_spec: str, champion_spec: str,
                   champion_version: str | None = None, margin: float = 0.0, confidence: float = 0.95,
                   cost_bound: float = 0.10, method: GateMethod = "bootstrap",
                   db_path: str | None = None) -> dict[str, Any]:
    """The promotion gate on one evaluation: the challenger's and the champion's (or the
    baseline's, when `champion_version` is None) per-question outcomes and $ on the same
    problems -> registry/promotion.py's gate -> the decision in MLflow and as a `promotions` row."""
    outcomes = question_outcomes(evaluation_id, db_path)
    missing = [s for s in (challenger_spec, champion_spec) if s not in outcomes]
    if missing:
        raise ValueError(f"evaluation {evaluation_id} has no finished outcomes for {', '.join(missing)};"
                         f" it has {', '.join(sorted(outcomes)) or 'none'}")
    config = GateConfig(margin=margin, confidence=confidence, cost_bound=cost_bound, method=method)
    decision = decide_once(challenger_version, outcomes[challenger_spec], outcomes[champion_spec], champion_version,
                           champion_spec, config)
    record_promotion(decision, evaluation_id, db_path)
    print(f"{'PROMOTED' if decision.promoted else 'KEPT OUT'} v{challenger_version}: {decision.reason}")
    return decision.model_dump(mode="json")


def _eval_config(profile: str, heldout_file: str, specs: list[str], pool_file: str | None, seed: int,
                 concurrency: int, out_dir: Path) -> EvalConfig:
    return EvalConfig(methods=specs, problems_file=Path(heldout_file), pool_file=Path(pool_file) if pool_file else None,
                      profile=profile, seed=seed, concurrency=concurrency, out_dir=out_dir)


def check_parameters(steps: int, chunk_steps: int, heldout: int, run_key: str, margin: float, confidence: float,
           cost_bound: float) -> None:
    problems = []
    if steps < 1:
        problems.append(f"steps must be at least 1 (got {steps})")
    if chunk_steps < 1:
        problems.append(f"chunk_steps must be at least 1 (got {chunk_steps})")
    if heldout < 1:
        problems.append(f"heldout_problems must be at least 1 (got {heldout})")
    if not _KEY.match(run_key):
        problems.append(f"run_key {run_key!r}: letters, digits, '.', '_' and '-' only (at most 64)")
    if not 0.5 <= confidence < 1:
        problems.append(f"confidence must be in [0.5, 1) (got {confidence})")
    if cost_bound < 0 or not -1 < margin < 1:
        problems.append(f"cost_bound must be >= 0 and margin in (-1, 1) (got {cost_bound}, {margin})")
    if problems:
        raise ValueError("; ".join(problems))


@flow(name=NIGHTLY_FLOW, log_prints=True)
def nightly_flow(
    profile: str = "local",
    steps: int = 20,
    chunk_steps: int = 10,
    seed: int = 0,
    pool_file: str | None = None,
    heldout_problems: int = 24,
    baselines: list[str] | None = None,
    margin: float = 0.0,
    confidence: float = 0.95,
    cost_bound: float = 0.10,
    gate_method: GateMethod = "bootstrap",
    training_overrides: dict[str, Any] | None = None,
    concurrency: int = 4,
    run_key: str | None = None,
    db_path: str | None = None,
) -> NightlySummary:
    """Curate -> train `steps` GRPO steps -> evaluate challenger vs champion (or the template
    baseline) and `baselines` on `heldout_problems` held-out problems -> costs -> gate -> summary.
    `run_key` names the night (default: today's UTC date): a rerun with the same key reuses the
    stages that completed."""
    from prefect.runtime import flow_run as prefect_flow_run

    run_key = run_key or datetime.now(UTC).strftime("%Y-%m-%d")
    check_parameters(steps, chunk_steps, heldout_problems, run_key, margin, confidence, cost_bound)
    baselines = list(baselines if baselines is not None else ["random"])
    settings = load_settings(profile=profile)
    home = settings.ensure_home()
    night_dir = home / "nightly" / profile / run_key
    overrides = {**(LOCAL_NIGHTLY_TRAINING if profile == "local" else {}), **(training_overrides or {})}
    if pool_file:
        overrides.setdefault("pool_file", pool_file)
    params: dict[str, Any] = {
        "run_key": run_key, "profile": profile, "steps": steps, "chunk_steps": chunk_steps, "seed": seed,
        "pool_file": pool_file, "heldout_problems": heldout_problems, "baselines": baselines, "margin": margin,
        "confidence": confidence, "cost_bound": cost_bound, "gate_method": gate_method, "overrides": overrides,
        FLOW_RUN_PARAM: str(prefect_flow_run.id) if prefect_flow_run.id else None,
    }
    run_id = f"nightly-{run_key}-{uuid.uuid4().hex[:8]}"
    started = datetime.now(UTC)
    abandon_dead_runs(db_path)  # an earlier night killed mid-way: its runs are marked abandoned
    record_run(nightly_run(run_id, "running", params, None, started), db_path)
    try:
        summary = _night(run_key, run_id, str(prefect_flow_run.id or ""), profile, steps, chunk_steps, seed, pool_file, heldout_problems, baselines,
                         GateConfig(margin=margin, confidence=confidence, cost_bound=cost_bound, method=gate_method),
                         overrides, concurrency, night_dir, home, db_path)
    except BaseException as exc:
        status = "cancelled" if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)) else "failed"
        record_run.fn(nightly_run(run_id, status, params | {"error": f"{type(exc).__name__}: {exc}"[:2000]}, None,
                                  started), db_path)
        raise
    record_run(nightly_run(run_id, "finished", params | {
        "challenger_version": summary.challenger_version, "evaluation_id": summary.evaluation_id,
        "promotion_id": summary.promotion_id, "usd_spent": summary.usd_training + summary.usd_evaluation,
        "promoted": summary.promoted}, summary.simulated, started), db_path)
    return summary


def _night(run_key: str, run_id: str, flow_run_id: str, profile: str, steps: int, chunk_steps: int, seed: int, pool_file: str | None,
           n_heldout: int, baselines: list[str], gate_config: GateConfig, overrides: dict[str, Any], concurrency: int,
           night_dir: Path, home: Path, db_path: str | None) -> NightlySummary:
    log = get_run_logger()
    # 1. curation (cached on its inputs and code)
    curation_flow(out=str(home / "curated" / profile), profile=profile, db_path=db_path)
    # 2. training -> challenger (once a night)
    trained = _once(training_stage)(run_key, profile, steps, chunk_steps, seed, overrides, str(night_dir))
    challenger, champion = str(trained["version"]), trained["champion_before"]
    log.info("challenger v%s (trained from %s)", challenger, trained["started_from"])
    # 3. evaluation: challenger, champion (or the baseline), baselines, on the same problems
    heldout = heldout_problems(n_heldout, seed, str(home / "nightly" / "heldout"))
    models = str(night_dir / "models")
    challenger_spec = f"conductor:{model_directory(challenger, models)}"
    champion_spec = f"conductor:{model_directory(champion, models)}" if champion else BASELINE
    specs = [challenger_spec, champion_spec, *[b for b in baselines if b not in (champion_spec, challenger_spec)]]
    cfg = _eval_config(profile, heldout, specs, pool_file, seed, concurrency, night_dir / "evaluation")
    evaluated = _once(evaluation_stage)(run_key, cfg, db_path)
    evaluation_id = evaluated["evaluation_id"]
    # 4. costs
    costs = nightly_costs_flow(evaluation_id, trained["run_id"], db_path)
    # 5. the gate (once a night)
    decision = _once(gate_stage)(run_key, challenger, evaluation_id, challenger_spec, champion_spec, champion,
                                 gate_config, db_path)
    # 6. the summary
    return _summarize(run_key, run_id, flow_run_id, profile, trained, evaluated, costs, decision, specs, challenger_spec,
                      champion_spec, db_path)


def _label(spec: str, challenger: str, champion: str | None, challenger_spec: str, champion_spec: str) -> str:
    if spec == challenger_spec:
        return f"challenger v{challenger}"
    if spec == champion_spec:
        return f"champion v{champion}" if champion else f"{spec} (baseline: no champion yet)"
    return spec


def _summarize(run_key: str, run_id: str, flow_run_id: str, profile: str, trained: dict[str, Any], evaluated: dict[str, Any],
               costs: dict[str, Any], decision: dict[str, Any], specs: list[str], challenger_spec: str,
               champion_spec: str, db_path: str | None) -> NightlySummary:
    from registry import nightly as reg

    challenger, champion = str(trained["version"]), trained["champion_before"]
    outcomes = question_outcomes(evaluated["evaluation_id"], db_path)
    accuracy, usd_q, rows = {}, {}, []
    for spec in specs:
        side = outcomes.get(spec, {"correct": {}, "cost_usd": {}})
        n = len(side["correct"])
        label = _label(spec, challenger, champion, challenger_spec, champion_spec)
        accuracy[label] = sum(side["correct"].values()) / n if n else float("nan")
        usd_q[label] = sum(side["cost_usd"].values()) / n if n else float("nan")
        rows.append({"method": label, "questions": n, "accuracy": round(accuracy[label], 4),
                     "usd_per_question": round(usd_q[label], 6)})
    after = reg.champion()
    simulated = bool(evaluated["simulated"])
    sim = " (simulated pool: an environment, not a benchmark)" if simulated else ""
    links = reg.ui_links(challenger, trained["run_id"])
    # The challenger's strategies over training (a training run that logged shape shares), as an
    # image the Prefect UI shows while the MLflow UI serves it (a night cached before had none).
    images = {}
    if trained.get("strategies_plot") and trained["run_id"]:
        images["strategies"] = links["strategies_plot"] = reg.artifact_url(trained["run_id"], trained["strategies_plot"])
    out_dir = Path(evaluated["out_dir"])
    for png in sorted(out_dir.glob("*.png")):
        links[f"plot_{png.stem}"] = png.resolve().as_uri()
    verdict = "PROMOTED to champion" if decision["promoted"] else "kept out (champion unchanged)"
    compared = f"v{champion}" if champion else champion_spec
    results = (f"# Nightly {run_key}{sim}\n\nChallenger v{challenger} ({trained['started_from']}) vs {compared}: "
               f"**{verdict}**.\n\n{decision['reason']}\n\n{evaluated['table_markdown']}\n")
    title = f"nightly {run_key} ({profile}){sim}: v{challenger} {verdict}"
    rows.append({"method": "decision", "questions": None, "accuracy": None, "usd_per_question": None,
                 "note": f"{verdict}; champion before: {champion or 'none'}, after: {after or 'none'}"})
    publish(rows, results, costs["rows"], {k: v for k, v in links.items() if k not in ("store", "strategies_plot")},
            title, images)
    print(title)
    return NightlySummary(
        run_key=run_key, nightly_run_id=run_id, flow_run_id=flow_run_id, profile=profile, simulated=simulated, challenger_version=challenger,
        champion_version_before=champion, champion_version_after=after, started_from=trained["started_from"],
        compared_with=compared,
        promoted=bool(decision["promoted"]), reason=decision["reason"], promotion_id=decision["promotion_id"],
        evaluation_id=evaluated["evaluation_id"], accuracy=accuracy, usd_per_question=usd_q,
        questions=max((r["questions"] or 0) for r in rows), usd_training=costs["usd_training"],
        usd_evaluation=costs["usd_evaluation"], mlflow_run_id=trained["run_id"], model_uri=trained["model_uri"],
        links=links, out_dir=str(out_dir), results_markdown=results)


@flow(name=CHAMPION_EVAL_FLOW, log_prints=True)
def champion_eval_flow(
    profile: str = "local",
    seed: int = 0,
    pool_file: str | None = None,
    heldout_problems: int = 24,
    baselines: list[str] | None = None,
    concurrency: int = 4,
    db_path: str | None = None,
) -> dict[str, Any]:
    """Evaluate the current champion (the template baseline when there is none) and `baselines`
    on the held-out problems; returns the evaluation id and accuracy per method."""
    if heldout_problems < 1:
        raise ValueError(f"heldout_problems must be at least 1 (got {heldout_problems})")
    home = load_settings(profile=profile).ensure_home()
    champion = current_champion()
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M%S")
    spec = (f"conductor:{model_directory(champion, str(home / 'nightly' / profile / 'champion-models'))}"
            if champion else BASELINE)
    specs = [spec, *[b for b in (baselines if baselines is not None else ["random"]) if b != spec]]
    heldout = heldout_problems_task(heldout_problems, seed, str(home / "nightly" / "heldout"))
    cfg = _eval_config(profile, heldout, specs, pool_file, seed, concurrency,
                       home / "nightly" / profile / "champion-eval" / stamp)
    result = evaluation_flow(cfg, db_path=db_path)
    outcomes = question_outcomes(result.evaluation_id, db_path)
    accuracy = {s: (sum(o["correct"].values()) / len(o["correct"]) if o["correct"] else float("nan"))
                for s, o in outcomes.items()}
    label = f"champion v{champion}" if champion else f"{BASELINE} (no champion yet)"
    print(f"{label}: held-out accuracy {accuracy.get(spec, float('nan')):.3f} on {heldout_problems} problems"
          + (" (simulated pool)" if result.simulated else ""))
    return {"evaluation_id": result.evaluation_id, "champion_version": champion, "spec": spec,
            "accuracy": accuracy, "simulated": result.simulated, "out_dir": result.out_dir}


heldout_problems_task = heldout_problems  # the flows' parameter of the same name shadows the task
