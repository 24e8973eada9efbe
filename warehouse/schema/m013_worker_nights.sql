-- m013_worker_nights: each worker's accuracy, failure rate and latency per evaluation (a night's
-- evaluation, or any other), which the nightly's drift check compares night against night.
-- Frozen once released: a later change is a new migration.

CREATE OR REPLACE VIEW v_worker_nights AS
WITH evaluations AS (
  SELECT run_id AS evaluation_id, started_at, simulated
  FROM runs WHERE kind = 'evaluation' AND status = 'finished'
), members AS (
  SELECT json_extract_string(params, '$.evaluation_id') AS evaluation_id, run_id
  FROM runs WHERE kind = 'eval' AND status = 'finished'
), worker_calls AS (
  SELECT m.evaluation_id, c.worker_id, count(*) AS calls, CAST(count_if(c.status = 'error') AS BIGINT) AS failed_calls,
         CAST(sum(coalesce(c.retries, 0)) AS BIGINT) AS retries, avg(c.latency_s) AS mean_latency_s,
         median(c.latency_s) AS median_latency_s
  FROM calls c JOIN members m ON m.run_id = c.run_id
  WHERE c.role = 'worker'
  GROUP BY ALL
), alone AS (
  SELECT evaluation_id, substr(spec, length('single:') + 1) AS worker_id, count(*) AS questions,
         CAST(count_if(correct) AS BIGINT) AS correct
  FROM v_question_outcomes WHERE spec LIKE 'single:%'
  GROUP BY ALL
)
SELECT e.evaluation_id, CAST(e.started_at AS DATE) AS night, e.started_at, e.simulated, w.worker_id,
       a.questions, a.correct, CAST(a.correct AS DOUBLE) / a.questions AS accuracy,
       w.calls, w.failed_calls, w.retries,
       CAST(w.retries + w.failed_calls AS DOUBLE) / (w.retries + w.calls) AS failure_rate,
       w.mean_latency_s, w.median_latency_s
FROM worker_calls w JOIN evaluations e USING (evaluation_id)
LEFT JOIN alone a USING (evaluation_id, worker_id);
COMMENT ON VIEW v_worker_nights IS 'Per evaluation (a night) and worker: its accuracy alone (its single: method), the share of its call attempts that failed, and its latency (finished runs only).';
COMMENT ON COLUMN v_worker_nights.evaluation_id IS 'The evaluation (runs.run_id of its kind ''evaluation'' run).';
COMMENT ON COLUMN v_worker_nights.night IS 'The UTC date the evaluation started.';
COMMENT ON COLUMN v_worker_nights.started_at IS 'When the evaluation started (UTC): orders the nights.';
COMMENT ON COLUMN v_worker_nights.simulated IS 'Whether the pool was simulated: its figures describe the simulation, never a model.';
COMMENT ON COLUMN v_worker_nights.worker_id IS 'Pool id of the worker.';
COMMENT ON COLUMN v_worker_nights.questions IS 'Questions its single:<worker> method answered (all repeats); NULL when the evaluation had no such method.';
COMMENT ON COLUMN v_worker_nights.correct IS 'Of those, answered right (unparsed counts as wrong).';
COMMENT ON COLUMN v_worker_nights.accuracy IS 'correct / questions: the worker alone; NULL without a single:<worker> method.';
COMMENT ON COLUMN v_worker_nights.calls IS 'Its calls in every method of the evaluation (after retries).';
COMMENT ON COLUMN v_worker_nights.failed_calls IS 'Calls that still failed after their retries.';
COMMENT ON COLUMN v_worker_nights.retries IS 'Retried attempts (each one a failed attempt: 429, 5xx, timeout).';
COMMENT ON COLUMN v_worker_nights.failure_rate IS 'Failed attempts / attempts = (retries + failed_calls) / (retries + calls): what the provider failed, whether or not a retry saved the call.';
COMMENT ON COLUMN v_worker_nights.mean_latency_s IS 'Mean seconds per call, retries included.';
COMMENT ON COLUMN v_worker_nights.median_latency_s IS 'Median seconds per call, retries included.';
