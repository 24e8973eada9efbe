"""The nightly's drift check as Prefect tasks, thin over conductor/evaluation/drift.py (the
statistics) and warehouse/drift.py (the reads): compare an evaluation's worker figures with the
previous night's, publish the comparison as an artifact, and send a webhook notification
(a Prefect `Webhook` block) when a worker moved."""

from __future__ import annotations

from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from conductor.evaluation.drift import DriftConfig, Shift, WorkerSamples, drift_markdown, flagged, worker_shifts
from conductor.simulation import simulated_note
from tasks.traces import warehouse_file
from warehouse import drift as wh
from warehouse.store import TraceStore

ARTIFACT_KEY = "worker-drift"


class DriftReport(BaseModel):
    """Tonight's evaluation against the previous night's: every figure compared, the flagged workers."""

    evaluation_id: str
    previous_evaluation_id: str | None  # None: no earlier night to compare with
    simulated: bool
    shifts: list[Shift]
    flagged: list[str]
    figures: list[dict[str, Any]]  # tonight's v_worker_nights rows
    markdown: str
    notified: bool = False  # a notification was delivered (2xx)

    def payload(self) -> dict[str, Any]:
        """What the webhook receives; `text` makes it readable as a Slack message."""
        moved = [s for s in self.shifts if s.moved]
        return {"text": f"worker drift{simulated_note(self.simulated)}: {', '.join(self.flagged)} moved since the"
                        f" previous night (evaluation {self.evaluation_id} against {self.previous_evaluation_id}): "
                        + "; ".join(s.text() for s in moved),
                "evaluation_id": self.evaluation_id, "previous_evaluation_id": self.previous_evaluation_id,
                "simulated": self.simulated, "flagged": self.flagged,
                "moved": [{"worker_id": s.worker_id, "metric": s.metric, "before": s.before, "after": s.after,
                           "low": s.low, "high": s.high} for s in moved]}


@task(name="worker-drift", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5])
def drift_report(evaluation_id: str, db_path: str | None = None, config: DriftConfig | None = None) -> DriftReport:
    """Compare the evaluation's worker figures with the previous night's (docs/nightly.md)."""
    with TraceStore(warehouse_file(db_path), read_only=True) as store:
        previous = wh.previous_night(store, evaluation_id)
        simulated = wh.is_simulated(store, evaluation_id)
        figures = wh.worker_nights(store, evaluation_id)
        tonight = wh.worker_samples(store, evaluation_id)
        before = wh.worker_samples(store, previous) if previous else {}
    shifts = worker_shifts({w: WorkerSamples(**v) for w, v in before.items()},
                           {w: WorkerSamples(**v) for w, v in tonight.items()}, config) if previous else []
    return DriftReport(evaluation_id=evaluation_id, previous_evaluation_id=previous, simulated=simulated,
                       shifts=shifts, flagged=flagged(shifts), figures=figures,
                       markdown=drift_markdown(shifts, evaluation_id, previous, simulated))


@task(name="publish-worker-drift", cache_policy=NO_CACHE)
def publish_drift(report: DriftReport) -> None:
    """The comparison (markdown) and tonight's figures (table), under stable keys: the UI shows
    each night's in the key's history."""
    title = f"worker drift: {', '.join(report.flagged) or 'none'} moved{simulated_note(report.simulated)}"
    create_markdown_artifact(key=ARTIFACT_KEY, markdown=report.markdown, description=title)
    rows = [{k: (str(v) if k in ("night", "started_at") else v) for k, v in r.items()} for r in report.figures]
    create_table_artifact(key=f"{ARTIFACT_KEY}-figures", table=rows or [{"note": "no worker calls recorded"}],
                          description=title)


@task(name="notify-worker-drift", cache_policy=NO_CACHE)
def notify_drift(report: DriftReport, webhook_block: str) -> bool:
    """POST the flagged workers to the Prefect `Webhook` block named `webhook_block`. Nothing is
    sent when no worker moved. A missing block or a failed delivery is logged, never fatal: the
    night's results stand either way. True when the receiver answered 2xx."""
    from prefect.blocks.webhook import Webhook
    from prefect.utilities.asyncutils import run_coro_as_sync

    log = get_run_logger()
    if not report.flagged:
        return False
    try:
        hook = Webhook.load(webhook_block)
    except ValueError:
        log.warning("worker drift: no Webhook block %r, no notification sent (create one to be told)", webhook_block)
        return False
    try:
        response = run_coro_as_sync(hook.call(report.payload()))
    except Exception as exc:  # noqa: BLE001 - the receiver's failure must not fail the night
        log.warning("worker drift: the notification to block %r failed: %s", webhook_block, exc)
        return False
    if not response.is_success:
        log.warning("worker drift: block %r answered HTTP %s", webhook_block, response.status_code)
    return bool(response.is_success)
