"""The nightly pipeline's reads: per-question outcomes of an evaluation by method spec (the
promotion gate's paired input), from the `v_question_outcomes` view (m009)."""

from __future__ import annotations

from typing import Any

from warehouse.store import TraceStore


def question_outcomes(store: TraceStore, evaluation_id: str) -> dict[str, dict[str, dict[str, Any]]]:
    """spec -> {"correct": {problem_id: bool}, "cost_usd": {problem_id: $}} for the first repeat
    of every method of the evaluation (finished runs only). A question's $ is None (unknown) when
    some call of it had no known price (`v_questions.cost_known`: its `cost_usd` then counts only
    the known ones)."""
    rows = store.query(
        "SELECT o.spec, o.problem_id, o.correct, CASE WHEN q.cost_known THEN o.cost_usd END AS cost_usd"
        " FROM v_question_outcomes o JOIN v_questions q ON q.run_id = o.run_id AND q.problem_id = o.problem_id"
        " WHERE o.evaluation_id = ? AND o.repeat = 0 ORDER BY o.spec, o.problem_id", [evaluation_id]).to_pylist()
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        side = out.setdefault(row["spec"], {"correct": {}, "cost_usd": {}})
        side["correct"][row["problem_id"]] = bool(row["correct"])
        side["cost_usd"][row["problem_id"]] = None if row["cost_usd"] is None else float(row["cost_usd"])
    return out


def spend(store: TraceStore, run_ids: list[str]) -> float | None:
    """$ of the stored calls of these runs: run ids, evaluation ids (all their runs) or MLflow run
    ids (the warehouse run that recorded that training). None (unknown) when any of those calls
    has no known price: a sum that counts it as $0 is not what was spent. No calls: $0."""
    row = store.query(
        "SELECT sum(c.cost_usd) AS usd, count_if(c.cost_usd IS NULL) AS unpriced"
        " FROM calls c LEFT JOIN runs r ON r.run_id = c.run_id"
        " WHERE list_contains(?, c.run_id) OR list_contains(?, r.mlflow_run_id)"
        " OR list_contains(?, json_extract_string(r.params, '$.evaluation_id'))",
        [run_ids, run_ids, run_ids]).to_pylist()[0]
    return None if row["unpriced"] else float(row["usd"] or 0.0)
