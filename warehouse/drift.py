"""The drift check's reads: each worker's figures of an evaluation (`v_worker_nights`, m013), the
night before it, and the per-question, per-attempt and per-call values its bootstrap resamples."""

from __future__ import annotations

from typing import Any

from warehouse.store import TraceStore


def worker_nights(store: TraceStore, evaluation_id: str) -> list[dict[str, Any]]:
    """The `v_worker_nights` rows of one evaluation, by worker."""
    return store.query("SELECT * FROM v_worker_nights WHERE evaluation_id = ? ORDER BY worker_id",
                       [evaluation_id]).to_pylist()


def previous_night(store: TraceStore, evaluation_id: str) -> str | None:
    """The latest finished evaluation that started before this one, on a pool of the same kind
    (simulated or real: never compared across), with worker figures; None when there is none."""
    rows = store.query(
        "SELECT p.evaluation_id FROM (SELECT DISTINCT evaluation_id, started_at, simulated FROM v_worker_nights) p,"
        " (SELECT started_at, simulated FROM runs WHERE run_id = ?) t"
        " WHERE p.started_at < t.started_at AND p.simulated IS NOT DISTINCT FROM t.simulated"
        " ORDER BY p.started_at DESC LIMIT 1", [evaluation_id]).to_pylist()
    return rows[0]["evaluation_id"] if rows else None


def is_simulated(store: TraceStore, evaluation_id: str) -> bool:
    rows = store.query("SELECT simulated FROM runs WHERE run_id = ?", [evaluation_id]).to_pylist()
    return bool(rows and rows[0]["simulated"])


def worker_samples(store: TraceStore, evaluation_id: str) -> dict[str, dict[str, list[Any]]]:
    """worker -> {"correct": [per question of its single:<worker> method, all repeats],
    "failed": [per call attempt: a retry or a call that failed is a failed attempt],
    "latency_s": [per call]} for the evaluation's finished runs (the values v_worker_nights sums)."""
    out: dict[str, dict[str, list[Any]]] = {}
    calls = store.query(
        "SELECT c.worker_id, coalesce(c.retries, 0) AS retries, c.status = 'error' AS failed, c.latency_s"
        " FROM calls c JOIN runs r ON r.run_id = c.run_id"
        " WHERE r.kind = 'eval' AND r.status = 'finished' AND r.params->>'evaluation_id' = ? AND c.role = 'worker'"
        " ORDER BY c.call_id", [evaluation_id]).to_pylist()
    for c in calls:
        w = out.setdefault(c["worker_id"], {"correct": [], "failed": [], "latency_s": []})
        w["failed"] += [True] * c["retries"] + [bool(c["failed"])]
        if c["latency_s"] is not None:
            w["latency_s"].append(float(c["latency_s"]))
    alone = store.query(
        "SELECT substr(spec, length('single:') + 1) AS worker_id, correct FROM v_question_outcomes"
        " WHERE evaluation_id = ? AND spec LIKE 'single:%' ORDER BY run_id, problem_id", [evaluation_id]).to_pylist()
    for row in alone:
        out.setdefault(row["worker_id"], {"correct": [], "failed": [], "latency_s": []})["correct"].append(
            bool(row["correct"]))
    return out
