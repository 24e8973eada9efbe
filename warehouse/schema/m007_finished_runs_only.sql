-- m007_finished_runs_only: the views count only finished runs (a running, failed, cancelled or
-- abandoned run's traces are left out; a trace with no run row still counts); runs record the
-- host and pid that ran them, so the next run can mark one whose process is gone `abandoned`.
-- Frozen once released: a later change is a new migration.

ALTER TABLE runs ADD COLUMN host VARCHAR;
ALTER TABLE runs ADD COLUMN pid INTEGER;
COMMENT ON COLUMN runs.host IS 'Host name of the process running it.';
COMMENT ON COLUMN runs.pid IS 'Process id running it (with host: how a run whose process is gone is found).';
COMMENT ON COLUMN runs.status IS 'running | finished | failed | cancelled | abandoned (its process died).';

CREATE OR REPLACE VIEW v_questions AS SELECT t.trace_id, t.run_id, t.problem_id, t.source, t.domain, t.shape, t.n_steps,
       coalesce(r.rounds, 1) AS rounds, t.parse_status, coalesce(t.correct, CASE WHEN t.parse_status <> 'ok' THEN false END) AS correct, t.reward,
       coalesce(c.calls, 0) AS calls, coalesce(c.tokens, 0) AS tokens,
       coalesce(c.cost_usd, 0) AS cost_usd, coalesce(c.cost_known, true) AS cost_known,
       t.wall_s, t.created_at
FROM traces t
LEFT JOIN (SELECT root_trace_id, count(*) AS calls, sum(tokens) AS tokens,
                  sum(cost_usd) AS cost_usd, bool_and(cost_usd IS NOT NULL) AS cost_known
           FROM calls GROUP BY root_trace_id) c ON c.root_trace_id = t.trace_id
LEFT JOIN (SELECT root_trace_id, count(*) AS rounds FROM traces GROUP BY root_trace_id) r
       ON r.root_trace_id = t.trace_id
WHERE t.trace_id = t.root_trace_id
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = t.run_id AND r.status <> 'finished');
COMMENT ON VIEW v_questions IS 'One row per question (depth-0 trace) with calls, tokens and cost over all its rounds; an unparsed workflow counts as not correct; a run that did not finish is left out.';

CREATE OR REPLACE VIEW v_accuracy_by_worker_domain AS WITH per_worker AS (
  SELECT worker_id, root_trace_id, count(*) AS calls, sum(tokens) AS tokens,
         sum(cost_usd) AS cost_usd, avg(latency_s) AS latency_s, count_if(status = 'error') AS errors
  FROM calls WHERE role = 'worker' GROUP BY worker_id, root_trace_id
), final_step AS (
  SELECT s.root_trace_id, s.worker_id FROM steps s JOIN traces t ON t.trace_id = s.trace_id
  WHERE t.trace_id = t.root_trace_id AND s.step_index = t.n_steps - 1
)
SELECT w.worker_id, q.domain,
       count(*) AS questions,
       count((coalesce(q.correct, CASE WHEN q.parse_status <> 'ok' THEN false END))) AS graded,
       avg((coalesce(q.correct, CASE WHEN q.parse_status <> 'ok' THEN false END))::DOUBLE) AS accuracy,
       count(f.worker_id) AS final_answers,
       avg(CASE WHEN f.worker_id IS NOT NULL THEN (coalesce(q.correct, CASE WHEN q.parse_status <> 'ok' THEN false END))::DOUBLE END) AS final_answer_accuracy,
       sum(w.calls) AS calls, sum(w.errors) AS errors, sum(w.tokens) AS tokens,
       sum(w.cost_usd) AS cost_usd, avg(w.latency_s) AS mean_latency_s
FROM per_worker w
JOIN traces q ON q.trace_id = w.root_trace_id
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = q.run_id AND r.status <> 'finished')
LEFT JOIN final_step f ON f.root_trace_id = w.root_trace_id AND f.worker_id = w.worker_id
GROUP BY w.worker_id, q.domain;
COMMENT ON VIEW v_accuracy_by_worker_domain IS 'Per worker and domain: questions it took part in, their accuracy, and accuracy when it wrote the final step (unparsed counts as not correct; unfinished runs left out).';
