"""The warehouse side of evaluation: the SQL behind `conductor eval`, `conductor costs` and
`conductor plot`. Each function takes an open TraceStore and returns plain rows (dicts); the
figures come from the stored calls (views in m008_evaluation_costs), computed once, here.

A run id may name one run or an evaluation: an evaluation's runs (one per method and repeat)
carry `params.evaluation_id`, so every function here takes either."""

from __future__ import annotations

from typing import Any

from warehouse.store import TraceStore


def _rows(store: TraceStore, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    return store.query(sql, params).to_pylist()


def runs_of(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """The run itself, or every run of the evaluation `run_id` (method, simulated, params)."""
    return _rows(store, "SELECT run_id, method, simulated, status, params FROM runs"
                        " WHERE run_id = ? OR params->>'evaluation_id' = ? ORDER BY started_at, run_id",
                 [run_id, run_id])


def _ids(store: TraceStore, run_id: str) -> list[str]:
    ids = [r["run_id"] for r in runs_of(store, run_id)]
    if not ids:
        raise LookupError(f"no run or evaluation {run_id!r} in {store.path}")
    return ids


def fill_costs(store: TraceStore, run_id: str) -> int:
    """(Re)compute the `costs` rows of a run or evaluation from its calls; returns the row count.
    Idempotent: the run's computed rows are replaced, never added to."""
    ids = _ids(store, run_id)
    with store.writing() as con:
        con.execute("DELETE FROM costs WHERE basis = 'computed' AND list_contains(?, run_id)", [ids])
        con.execute(
            """INSERT INTO costs BY NAME
               SELECT concat_ws('/', day::VARCHAR, run_id, benchmark, worker_id, role, 'computed') AS cost_id,
                      day, run_id, worker_id, provider, model, calls, input_tokens, output_tokens,
                      coalesce(cost_usd, 0) AS cost_usd, 'computed' AS basis, benchmark, role, cost_known
               FROM v_call_costs WHERE list_contains(?, run_id)""", [ids])
        return con.execute("SELECT count(*) FROM costs WHERE basis = 'computed' AND list_contains(?, run_id)",
                           [ids]).fetchone()[0]


def costs_by_worker(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """From the `costs` table (fill it first): per method, benchmark and worker."""
    return _rows(store, """
        SELECT r.method, c.benchmark, c.worker_id, c.role, sum(c.calls)::BIGINT AS calls,
               sum(c.input_tokens + c.output_tokens)::BIGINT AS tokens, sum(c.cost_usd) AS cost_usd,
               bool_and(c.cost_known) AS cost_known
        FROM costs c JOIN runs r ON r.run_id = c.run_id
        WHERE c.basis = 'computed' AND list_contains(?, c.run_id)
        GROUP BY ALL ORDER BY r.method, c.benchmark, cost_usd DESC""", [_ids(store, run_id)])


def outages(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Each outage of a run or evaluation (view v_outages, m012): per method, the worker asked,
    who answered for it, the steps that went to a fallback and how many of them it was not called
    on (its breaker open)."""
    return _rows(store, """
        SELECT r.method, o.worker_id, o.answered_by, sum(o.steps)::BIGINT AS steps,
               sum(o.not_called)::BIGINT AS not_called, sum(o.answered)::BIGINT AS answered
        FROM v_outages o JOIN runs r ON r.run_id = o.run_id
        WHERE list_contains(?, o.run_id)
        GROUP BY ALL ORDER BY r.method, o.worker_id, steps DESC, o.answered_by NULLS LAST""", [_ids(store, run_id)])


def costs_by_benchmark(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Per method and benchmark: questions, correct, calls, tokens, $, $ per question and per correct."""
    return _rows(store, """
        SELECT r.method, b.benchmark, sum(b.questions)::BIGINT AS questions, sum(b.correct)::BIGINT AS correct,
               sum(b.calls)::BIGINT AS calls, sum(b.tokens)::BIGINT AS tokens, sum(b.cost_usd) AS cost_usd,
               sum(b.cost_usd) / sum(b.questions) AS usd_per_question,
               sum(b.cost_usd) / nullif(sum(b.correct), 0) AS usd_per_correct, bool_and(b.cost_known) AS cost_known
        FROM v_benchmark_costs b JOIN runs r ON r.run_id = b.run_id
        WHERE list_contains(?, b.run_id) GROUP BY ALL ORDER BY r.method, b.benchmark""", [_ids(store, run_id)])


def calls_cost_total(store: TraceStore, run_id: str) -> float:
    """The plain sum of the stored calls' costs (what every breakdown must add up to)."""
    value = store.query("SELECT sum(cost_usd) FROM calls WHERE list_contains(?, run_id)",
                        [_ids(store, run_id)]).column(0)[0].as_py()
    return float(value or 0.0)


def repeat_scores(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Per method, repeat and benchmark: questions, correct, $ (the results table's input)."""
    return _rows(store, """
        SELECT method, repeat, benchmark, questions::BIGINT AS questions, correct::BIGINT AS correct, cost_usd,
               cost_known, simulated FROM v_repeat_scores
        WHERE list_contains(?, run_id) ORDER BY method, repeat, benchmark""", [_ids(store, run_id)])


def worker_usage(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Worker calls per domain (the heatmap)."""
    return _rows(store, """
        SELECT c.worker_id, t.domain, count(*) AS calls FROM calls c JOIN traces t ON t.trace_id = c.root_trace_id
        WHERE c.role = 'worker' AND list_contains(?, c.run_id) GROUP BY ALL""", [_ids(store, run_id)])


def workflow_mix(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Questions per (steps, shape) over the run's finished questions."""
    return _rows(store, """
        SELECT n_steps, shape, count(*) AS questions FROM v_questions
        WHERE list_contains(?, run_id) GROUP BY ALL""", [_ids(store, run_id)])


def training_curve(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Reward, parse (format) rate and accuracy per step of a training run (v_training_curves)."""
    return _rows(store, "SELECT step, reward, parse_rate, accuracy FROM v_training_curves WHERE run_id = ?"
                        " ORDER BY step", [run_id])


def training_shapes(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Per step, domain and workflow shape of a training run: the share of the domain's
    first-round rollouts at that step, and the domain's mean steps (v_training_shapes)."""
    return _rows(store, "SELECT step, domain, shape, share, rollouts, mean_steps FROM v_training_shapes"
                        " WHERE run_id = ? ORDER BY step, domain, shape", [run_id])


def question_outcomes(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    """Per method and problem: the share of repeats answered right (the paired comparison's input)."""
    return _rows(store, """
        SELECT r.method, q.problem_id, avg(coalesce(q.correct, false)::DOUBLE) AS correct
        FROM v_questions q JOIN runs r ON r.run_id = q.run_id
        WHERE list_contains(?, q.run_id) GROUP BY ALL ORDER BY r.method, q.problem_id""", [_ids(store, run_id)])
