-- m008_evaluation_costs: cost per run, benchmark and worker from the stored calls; the costs
-- table gets the benchmark and the role (worker or the Conductor's own generation); the
-- per-repeat scores an evaluation's results table is built from.
-- Frozen once released: a later change is a new migration.

ALTER TABLE costs ADD COLUMN benchmark VARCHAR;
ALTER TABLE costs ADD COLUMN role VARCHAR;
ALTER TABLE costs ADD COLUMN cost_known BOOLEAN;
COMMENT ON COLUMN costs.benchmark IS 'Benchmark (traces.source) the spend is attributed to, if any.';
COMMENT ON COLUMN costs.role IS 'worker | conductor (the Conductor''s own generation).';
COMMENT ON COLUMN costs.cost_known IS 'False when some call had an unknown price (cost_usd then counts only the known ones).';

CREATE OR REPLACE VIEW v_call_costs AS
SELECT c.run_id, t.source AS benchmark, coalesce(c.worker_id, c.role) AS worker_id, c.role,
       any_value(c.provider) AS provider, any_value(c.model) AS model,
       min(t.created_at)::DATE AS day, count(*) AS calls,
       sum(c.input_tokens) AS input_tokens, sum(c.output_tokens) AS output_tokens, sum(c.tokens) AS tokens,
       sum(c.cost_usd) AS cost_usd, bool_and(c.cost_usd IS NOT NULL) AS cost_known
FROM calls c JOIN traces t ON t.trace_id = c.root_trace_id
GROUP BY c.run_id, t.source, coalesce(c.worker_id, c.role), c.role;
COMMENT ON VIEW v_call_costs IS 'Per run, benchmark, worker and role: calls, tokens and dollars, summed from the stored calls.';

CREATE OR REPLACE VIEW v_benchmark_costs AS
SELECT q.run_id, q.source AS benchmark, count(*) AS questions, count_if(q.correct) AS correct,
       sum(q.calls) AS calls, sum(q.tokens) AS tokens, sum(q.cost_usd) AS cost_usd,
       sum(q.cost_usd) / count(*) AS usd_per_question,
       sum(q.cost_usd) / nullif(count_if(q.correct), 0) AS usd_per_correct,
       bool_and(q.cost_known) AS cost_known
FROM v_questions q GROUP BY q.run_id, q.source;
COMMENT ON VIEW v_benchmark_costs IS 'Per run and benchmark: questions, correct, calls, tokens, dollars, $ per question and per correct answer (finished runs).';

CREATE OR REPLACE VIEW v_repeat_scores AS
SELECT coalesce(r.params->>'evaluation_id', r.run_id) AS evaluation_id, r.run_id, r.method, r.simulated,
       coalesce(TRY_CAST(r.params->>'repeat' AS INTEGER), 0) AS repeat, q.source AS benchmark,
       count(*) AS questions, count_if(q.correct) AS correct, sum(q.cost_usd) AS cost_usd,
       sum(q.tokens) AS tokens, sum(q.calls) AS calls
FROM v_questions q JOIN runs r ON r.run_id = q.run_id
GROUP BY ALL;
COMMENT ON VIEW v_repeat_scores IS 'Per evaluation, method, repeat and benchmark: questions, correct and dollars (an evaluation''s runs carry params.evaluation_id and params.repeat).';
