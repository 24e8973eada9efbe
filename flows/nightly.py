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
   as a `promotions` row), then each worker's figures against the previous night's
   (`worker_drift_flow`: an artifact, and a webhook notification when a worker moved);
6. a summary (Prefect artifacts, a `nightly` row in the warehouse, the returned `NightlySummary`).

Every stage is a flow of its own with typed parameters. The stages that must not be done twice
in one night (training + registration, the evaluation, the gate) run inside tasks cached on the
night's `run_key` and their inputs (Prefect's INPUTS cache policy, results and keys persisted
under $CONDUCTOR_HOME/prefect), so a rerun after a failure or a `kill -9` reuses what completed
and redoes only the rest: a registered challenger is never registered again, a finished
evaluation never paid for again, a decided gate never decided again (and a gate whose decision
reached MLflow but not the cache is read back from the version's tags)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import INPUTS
from prefect.states import Cancelled, State

from conductor.config import load_settings
from conductor.data.curate import CurationConfig
from conductor.evaluation.config import EvalConfig
from conductor.planners import DEFAULT_SHAPE
from conductor.simulation import simulated_note
from flows.curation import curation_flow
from flows.drift import worker_drift_flow
from flows.evaluation import EvalResult, evaluation_flow
from flows.night_results import (ChampionEval, Costs, NightlySummary, NightRef, Report, Scores, Stages,
                                 Trained, cost_row, dollars)
from flows.nightly_config import Night, NightConfig
from flows.training import TrainingRequest, training_flow
from registry.promotion import Decision, Outcomes, challenger_margin
from tasks.curate import cache_dirs
from tasks.evaluation import evaluation_figures, fill_costs
from tasks.nightly import (Artifacts, GateInputs, Tables, current_champion, decide_once, heldout_problems,
                           model_directory, nightly_run, publish, question_outcomes, record_promotion, spend)
from tasks.records import FLOW_RUN_PARAM, abandon_dead_runs, run_writer
from tasks.solve import Cancellation
from tasks.stops import ctrl_c_in
from warehouse.lifecycle import RunLifecycle

NIGHTLY_FLOW = "conductor-nightly"
CHAMPION_EVAL_FLOW = "conductor-champion-eval"
BASELINE = f"template:{DEFAULT_SHAPE}"  # what the first challenger is compared with


# --- the stages that run once a night: tasks cached on their inputs (run_key among them) ---

def _once(fn: Any, cancellation: Cancellation) -> Any:
    """`fn`, its result and cache key persisted under $CONDUCTOR_HOME (read at call time), the Ctrl-C
    `cancellation` no input; none starts once stopped (Prefect drops a Ctrl-C as a subflow ends)."""
    cancellation.raise_if_stopped()
    results, keys = cache_dirs()
    return fn.with_options(cache_policy=(INPUTS - "cancellation").configure(key_storage=keys),
                           result_storage=results, persist_result=True)


@task(name="training-stage")
def training_stage(run_key: str, night: Night) -> Trained:
    """Train from the champion (else the SFT warm start) for the night's steps and register the
    challenger. The champion is looked up inside, so a rerun of this night (after the gate may
    have moved it) hits the cache instead of training again."""
    champion = current_champion()
    c = night.config
    overrides = night.training_run_overrides()
    if champion is not None:
        overrides["model_name_or_path"] = model_directory(champion, str(night.night_dir / "models"))
    registered = training_flow(TrainingRequest(
        output_dir=str(night.training_dir), profile=c.profile, chunk_steps=c.chunk_steps,
        overrides=overrides, accelerate_config=str(night.accelerate_config) if night.accelerate_config else None))
    return Trained(**registered.model_dump(), champion_before=champion,
                   started_from=f"champion v{champion}" if champion else "SFT warm start")


@task(name="evaluation-stage")
def evaluation_stage(run_key: str, cfg: EvalConfig, db_path: str | None, cancellation: Cancellation) -> EvalResult | State:
    state = evaluation_flow(cfg, db_path=db_path, cancellation=cancellation, return_state=True)
    return state if state.is_cancelled() else state.result()  # Ctrl-C: Cancelled (so not cached)


@task(name="gate-stage")
def gate_stage(run_key: str, inputs: GateInputs, db_path: str | None) -> Decision:
    return promotion_flow(inputs, db_path=db_path)


# --- stage flows that can also run alone --------------------------------------------------------

@flow(name="conductor-costs", log_prints=True)
def nightly_costs_flow(evaluation_id: str, training_run_id: str = "", db_path: str | None = None) -> Costs:
    """$ of an evaluation by method and benchmark (from the warehouse's cost views), and the $ the
    training run (its MLflow run id) spent on worker calls."""
    fill_costs(evaluation_id, db_path)
    figures = evaluation_figures(evaluation_id, db_path)
    rows = [cost_row(r) for r in figures["by_benchmark"]]
    usd_eval = spend([evaluation_id], db_path)
    usd_train = spend([training_run_id], db_path) if training_run_id else 0.0
    rows.append({"method": "training (GRPO rollouts)", "benchmark": "generated bank", "questions": None,
                 "correct": None, "cost_usd": usd_train, "usd_per_question": None, "usd_per_correct": None})
    print(f"costs: evaluation {dollars(usd_eval)}, training {dollars(usd_train)}")
    return Costs(rows=rows, usd_evaluation=usd_eval, usd_training=usd_train)


@flow(name="conductor-promotion", log_prints=True)
def promotion_flow(inputs: GateInputs, db_path: str | None = None) -> Decision:
    """The promotion gate on one evaluation: the challenger's and the champion's (or the
    baseline's) per-question outcomes and $ on the same problems -> registry/promotion.py's gate
    -> the decision in MLflow and as a `promotions` row."""
    outcomes = question_outcomes(inputs.evaluation_id, db_path)
    missing = [s for s in (inputs.challenger_spec, inputs.champion_spec) if s not in outcomes]
    if missing:
        raise ValueError(f"evaluation {inputs.evaluation_id} has no finished outcomes for {', '.join(missing)};"
                         f" it has {', '.join(sorted(outcomes)) or 'none'}")
    decision = decide_once(inputs, outcomes[inputs.challenger_spec], outcomes[inputs.champion_spec])
    record_promotion(decision, inputs.evaluation_id, db_path)
    print(f"{'PROMOTED' if decision.promoted else 'KEPT OUT'} v{inputs.challenger_version}: {decision.reason}")
    return decision


def _eval_config(night: Night, heldout_file: str, specs: list[str], out_dir: Path) -> EvalConfig:
    return EvalConfig(**night.evaluation_settings(), methods=specs, problems_file=Path(heldout_file), out_dir=out_dir)


@flow(name=NIGHTLY_FLOW, log_prints=True)
def nightly_flow(config: NightConfig | None = None, cancellation: Cancellation | None = None) -> NightlySummary | State:
    """Curate -> train `steps` GRPO steps -> evaluate challenger vs champion (or the template
    baseline) and the baselines on held-out problems -> costs -> gate -> summary. The night's
    `run_key` (default: today's UTC date) names it: a rerun with the same key reuses the stages
    that completed. `cancellation`: the command's; a Ctrl-C ends the night Cancelled (docs/nightly.md)."""
    from prefect.runtime import flow_run as prefect_flow_run

    config = config or NightConfig()
    settings = load_settings(profile=config.profile)
    night = config.resolve(settings)  # refuses a night simulated by accident, before anything runs
    settings.ensure_home()
    flow_run_id = str(prefect_flow_run.id or "")
    params: dict[str, Any] = {**config.model_dump(mode="json"), "run_key": night.run_key,
                              "pool_file": str(night.pool_file), "overrides": night.training_overrides,
                              FLOW_RUN_PARAM: flow_run_id or None}
    run_id = f"nightly-{night.run_key}-{uuid.uuid4().hex[:8]}"
    db_path = config.db_path
    abandon_dead_runs(db_path)  # an earlier night killed mid-way: its runs are marked abandoned
    # `running` now; failed (the error in its notes) or cancelled (a stop) when the night raises.
    with RunLifecycle(nightly_run(run_id, params), run_writer(db_path)) as life:
        try:
            summary = _night(night, NightRef(run_key=night.run_key, nightly_run_id=run_id, flow_run_id=flow_run_id,
                                             profile=config.profile), cancellation or Cancellation())
        except BaseException as exc:  # Ctrl-C ends the night Cancelled; an error or a SIGTERM goes on
            stop = ctrl_c_in(exc)
            life.end("cancelled", f"{type(stop).__name__}: {str(stop) or 'interrupted'}")
            return Cancelled(message=str(stop) or "interrupted")
        life.update(simulated=summary.evaluated.simulated, params=params | {
            "challenger_version": summary.trained.version, "evaluation_id": summary.evaluated.evaluation_id,
            "promotion_id": summary.decision.promotion_id,
            "usd_spent": summary.costs.usd_spent,  # null (unknown) in v_nightly when a price was unknown
            "promoted": summary.decision.promoted})
    return summary


def _night(night: Night, ref: NightRef, cancellation: Cancellation) -> NightlySummary:
    log = get_run_logger()
    c, db_path = night.config, night.config.db_path
    # 1. curation (cached on its inputs and code)
    if c.curate:
        curation_flow(out=str(night.home / "curated" / c.profile), config=CurationConfig(profile=c.profile),
                      db_path=db_path)
    # 2. training -> challenger (once a night)
    trained: Trained = _once(training_stage, cancellation)(night.run_key, night)
    log.info("challenger v%s (trained from %s)", trained.version, trained.started_from)
    # 3. evaluation: challenger, champion (or the baseline), baselines, on the same problems
    heldout = heldout_problems(c.heldout_problems, c.seed, str(night.home / "nightly" / "heldout"))
    models = str(night.night_dir / "models")
    champion = trained.champion_before
    gate = GateInputs(challenger_version=trained.version,
                      challenger_spec=f"conductor:{model_directory(trained.version, models)}",
                      champion_spec=f"conductor:{model_directory(champion, models)}" if champion else BASELINE,
                      champion_version=champion, gate=c.gate)
    cfg = _eval_config(night, heldout, _specs(night, gate), night.night_dir / "evaluation")
    evaluated: EvalResult = _once(evaluation_stage, cancellation)(  # stopped by Ctrl-C: raises CancelledRun
        night.run_key, cfg, db_path, cancellation, return_state=True).result()
    gate = gate.model_copy(update={"evaluation_id": evaluated.evaluation_id})
    # 4. costs
    costs = nightly_costs_flow(evaluated.evaluation_id, trained.run_id, db_path)
    # 5. the gate (once a night)
    decision: Decision = _once(gate_stage, cancellation)(night.run_key, gate, db_path)
    # 5b. each worker's figures against the previous night's: an artifact, and a notification
    # (the `conductor-drift` Webhook block) when one moved (docs/nightly.md, "Worker drift")
    worker_drift_flow(evaluated.evaluation_id, db_path=db_path)
    # 6. the summary
    stages = Stages(trained=trained, evaluated=evaluated, costs=costs, decision=decision)
    return _summarize(night, gate, stages, ref)


def _specs(night: Night, gate: GateInputs) -> list[str]:
    """What the night evaluates: the challenger, the champion (or the baseline), the challenger at
    each effort level asked for (`challenger_efforts`), the baselines."""
    firsts = [gate.challenger_spec, gate.champion_spec]
    efforts = [f"{gate.challenger_spec}?effort={level}" for level in night.challenger_efforts]
    return [*firsts, *efforts, *[b for b in night.baselines if b not in firsts]]


def _label(spec: str, gate: GateInputs) -> str:
    if spec == gate.challenger_spec:
        return f"challenger v{gate.challenger_version}"
    if spec.startswith(f"{gate.challenger_spec}?effort="):
        return f"challenger v{gate.challenger_version}, effort {spec.rpartition('=')[2]}"
    if spec == gate.champion_spec:
        return f"champion v{gate.champion_version}" if gate.champion_version else f"{spec} (baseline: no champion yet)"
    return spec


def _scores(night: Night, gate: GateInputs, evaluation_id: str) -> tuple[Scores, list[dict[str, Any]]]:
    """Accuracy and $ per question of each evaluated method, by label, and the summary table's rows."""
    outcomes = question_outcomes(evaluation_id, night.config.db_path)
    sides = {spec: Outcomes.model_validate(outcomes.get(spec, {"correct": {}, "cost_usd": {}}))
             for spec in _specs(night, gate)}
    challenger = sides[gate.challenger_spec]
    accuracy, usd_q, margins, rows = {}, {}, {}, []
    for spec, side in sides.items():
        label = _label(spec, gate)
        accuracy[label], usd_q[label] = side.accuracy, side.usd_per_question
        usd = usd_q[label]
        margin = None if spec == gate.challenger_spec else challenger_margin(challenger, side, gate.gate)
        if margin is not None:
            margins[label] = margin
        rows.append({"method": label, "questions": len(side.correct), "accuracy": round(accuracy[label], 4),
                     "usd_per_question": None if usd is None else round(usd, 6),
                     "margin": margin.text() if margin else None, "note": None})
    questions = max((r["questions"] for r in rows), default=0)
    return Scores(accuracy=accuracy, usd_per_question=usd_q, questions=questions, challenger_margin=margins), rows


def _summarize(night: Night, gate: GateInputs, stages: Stages, ref: NightRef) -> NightlySummary:
    from registry import nightly as reg

    trained, evaluated, decision = stages.trained, stages.evaluated, stages.decision
    challenger, champion = trained.version, trained.champion_before
    scores, rows = _scores(night, gate, evaluated.evaluation_id)
    after = reg.champion()
    sim = simulated_note(evaluated.simulated)
    links = reg.ui_links(challenger, trained.run_id)
    # The challenger's strategies over training (a training run that logged shape shares), as an
    # image the Prefect UI shows while the MLflow UI serves it (a night cached before had none).
    images = {}
    if trained.strategies_plot and trained.run_id:
        images["strategies"] = links["strategies_plot"] = reg.artifact_url(trained.run_id, trained.strategies_plot)
    for png in sorted(Path(evaluated.out_dir).glob("*.png")):
        links[f"plot_{png.stem}"] = png.resolve().as_uri()
    verdict = "PROMOTED to champion" if decision.promoted else "kept out (champion unchanged)"
    compared = f"v{champion}" if champion else gate.champion_spec
    results = (f"# Nightly {ref.run_key}{sim}\n\nChallenger v{challenger} ({trained.started_from}) vs {compared}: "
               f"**{verdict}**.\n\n{decision.reason}\n\n{evaluated.table_markdown}\n")
    # A worker down during the evaluation (issue 35): the summary names it and who answered for it.
    results += "".join(f"\n- {line}" for line in evaluated.outages)
    title = f"nightly {ref.run_key} ({ref.profile}){sim}: v{challenger} {verdict}"
    # Every row has the same columns: the Prefect UI takes a table's columns from its first row, so
    # a "note" only the decision row had was never shown (the row read "decision" and nothing else).
    rows.append({"method": "decision", "questions": None, "accuracy": None, "usd_per_question": None,
                 "margin": None, "note": f"{verdict}; champion before: {champion or 'none'}, after: {after or 'none'}"})
    rows += [{"method": "outage", "questions": None, "accuracy": None, "usd_per_question": None, "margin": None,
              "note": line} for line in evaluated.outages]
    shown = {k: v for k, v in links.items() if k not in ("store", "strategies_plot")}
    publish(Artifacts(title=title, tables=Tables(summary=rows, costs=stages.costs.rows), results_markdown=results,
                      links=shown, images=images))
    print(title)
    report = Report(scores=scores, compared_with=compared, champion_version_after=after, links=links,
                    results_markdown=results)
    return NightlySummary(**dict(stages), night=ref, report=report)


@flow(name=CHAMPION_EVAL_FLOW, log_prints=True)
def champion_eval_flow(config: NightConfig | None = None) -> ChampionEval:
    """Evaluate the current champion (the template baseline when there is none) and the night's
    baselines on its held-out problems, on the night's pool; returns the evaluation id and
    accuracy per method."""
    config = config or NightConfig()
    settings = load_settings(profile=config.profile)
    night = config.resolve(settings)
    home = settings.ensure_home()
    champion = current_champion()
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M%S")
    spec = (f"conductor:{model_directory(champion, str(home / 'nightly' / config.profile / 'champion-models'))}"
            if champion else BASELINE)
    specs = [spec, *[b for b in night.baselines if b != spec]]
    heldout = heldout_problems(config.heldout_problems, config.seed, str(home / "nightly" / "heldout"))
    cfg = _eval_config(night, heldout, specs, home / "nightly" / config.profile / "champion-eval" / stamp)
    result = evaluation_flow(cfg, db_path=config.db_path)
    outcomes = question_outcomes(result.evaluation_id, config.db_path)
    accuracy = {s: (sum(o["correct"].values()) / len(o["correct"]) if o["correct"] else float("nan"))
                for s, o in outcomes.items()}
    label = f"champion v{champion}" if champion else f"{BASELINE} (no champion yet)"
    print(f"{label}: held-out accuracy {accuracy.get(spec, float('nan')):.3f} on {config.heldout_problems} problems"
          + simulated_note(result.simulated))
    return ChampionEval(evaluated=result, champion_version=champion, spec=spec, accuracy=accuracy)
