"""`conductor-worker-drift`: an evaluation's worker figures against the previous night's, as an
artifact and, when a worker moved, a webhook notification (docs/nightly.md, "Worker drift").
The nightly runs it after its evaluation; it also runs alone on any evaluation id."""

from __future__ import annotations

from prefect import flow

from conductor.evaluation.drift import DriftConfig
from tasks.drift import DriftReport, drift_report, notify_drift, publish_drift

DRIFT_FLOW = "conductor-worker-drift"
WEBHOOK_BLOCK = "conductor-drift"  # the Webhook block told about a moved worker (none: no notification)


@flow(name=DRIFT_FLOW, log_prints=True)
def worker_drift_flow(evaluation_id: str, db_path: str | None = None, webhook_block: str = WEBHOOK_BLOCK,
                      config: DriftConfig | None = None) -> DriftReport:
    report = drift_report(evaluation_id, db_path, config)
    publish_drift(report)
    notified = notify_drift(report, webhook_block)
    report = report.model_copy(update={"notified": notified})
    if report.previous_evaluation_id is None:
        print(f"worker drift: evaluation {evaluation_id} has no earlier night to compare with")
    else:
        print(f"worker drift against {report.previous_evaluation_id}: "
              + (f"{', '.join(report.flagged)} moved" if report.flagged else "no worker moved")
              + (" (notified)" if notified else ""))
    return report
