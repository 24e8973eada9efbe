"""`conductor run`'s flow (`make run` runs the nightly, flows/nightly.py): curate the profile's
data (cached), solve every evaluation set with a Method, and record the run (through its
RunLifecycle), its problems and traces (in batches, as questions finish) in the warehouse. A run
that fails is marked `failed` with its error, one stopped by Ctrl-C `cancelled`; a run whose
process died is marked `abandoned` by the next run. The summary comes from the warehouse's
`v_run_summary` view (accuracy and cost are computed there, once) and is published as a Prefect
table artifact.

The Method is the caller's (`conductor run` gives a template planner of `--shape`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_table_artifact
from prefect.runtime import flow_run as prefect_flow_run

from conductor.config import load_settings
from conductor.data.bank import load_problems
from conductor.data.curate import CurationConfig
from conductor.data.schema import Problem
from conductor.methods import Method
from conductor.simulation import simulated_note
from conductor.trace import new_id
from flows.curation import curation_flow
from tasks.records import FLOW_RUN_PARAM, abandon_dead_runs, record_problems, run_summary, run_writer
from tasks.solve import Cancellation, SolveRun, solve_problems
from warehouse.lifecycle import RunLifecycle, run_here


def _eval_problems(curated_dir: Path, files: dict[str, str], limit_per_source: int) -> list[Problem]:
    problems: list[Problem] = []
    for name in sorted(files):
        if name.startswith("eval/"):
            rows = load_problems(curated_dir / name)
            problems.extend(rows[:limit_per_source] if limit_per_source else rows)
    return problems


@flow(name="conductor-run", log_prints=True)
def run_flow(method: Method, profile: str = "local", limit_per_source: int = 0, db_path: str | None = None,
             seed: int = 0, cancellation: Cancellation | None = None) -> list[dict[str, Any]]:
    settings = load_settings(profile=profile)
    home = settings.ensure_home()
    curated_dir = home / "curated" / profile
    manifest = curation_flow(out=str(curated_dir), config=CurationConfig(profile=profile), db_path=db_path)
    problems = _eval_problems(curated_dir, manifest.files, limit_per_source)
    run_id = new_id()
    abandon_dead_runs(db_path)
    run = run_here(run_id, "eval", method=method.name, simulated=method.simulated,
                   params={"profile": profile, "pool_file": str(method.pool_file), "limit_per_source": limit_per_source,
                           "seed": seed, "problems": len(problems), "execution": method.execution.model_dump(),
                           FLOW_RUN_PARAM: str(prefect_flow_run.id) if prefect_flow_run.id else None})
    # Ctrl-C arrives as KeyboardInterrupt in the flow, CancelledError in its event loop: `cancelled`.
    with RunLifecycle(run, run_writer(db_path)):
        record_problems(problems, db_path)
        solve_problems(problems, method, SolveRun(run_id=run_id, seed=seed, db_path=db_path), cancellation=cancellation)
    summary = run_summary(run_id, db_path)
    create_table_artifact(key="run-summary", table=summary,
                          description=f"{method.name} ({profile} profile), run {run_id}{simulated_note(method.simulated)}")
    get_run_logger().info("run %s: %d problems solved and recorded", run_id, len(problems))
    return summary
