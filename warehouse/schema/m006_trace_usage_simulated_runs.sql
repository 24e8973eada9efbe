-- m006_trace_usage_simulated_runs: a trace stores its whole Usage total; a run records whether
-- its pool was simulated, and the leaderboard never mixes simulated and real runs in one row.
-- Frozen once released: a later change is a new migration.

ALTER TABLE traces ADD COLUMN reasoning_tokens BIGINT DEFAULT 0;
ALTER TABLE traces ADD COLUMN cached_input_tokens BIGINT DEFAULT 0;
ALTER TABLE traces ADD COLUMN latency_s DOUBLE;
ALTER TABLE traces ADD COLUMN retries INTEGER DEFAULT 0;
COMMENT ON COLUMN traces.reasoning_tokens IS 'Reasoning tokens in the totals (part of output_tokens).';
COMMENT ON COLUMN traces.cached_input_tokens IS 'Cached input tokens in the totals (part of input_tokens).';
COMMENT ON COLUMN traces.latency_s IS 'Sum of the calls'' latencies (the wait is wall_s).';
COMMENT ON COLUMN traces.retries IS 'Retries over all its calls.';
COMMENT ON COLUMN traces.cost_usd IS 'Dollars in the totals; NULL when some call had an unknown price.';
COMMENT ON COLUMN traces.reward IS 'GRPO reward: 0 unparsed, 0.5 parsed but wrong, 1 right.';
COMMENT ON COLUMN traces.source IS 'Benchmark or data source of the problem, as the trace carried it.';
COMMENT ON COLUMN traces.domain IS 'math | choice | freeform | code, as the trace carried it.';

ALTER TABLE runs ADD COLUMN simulated BOOLEAN;
COMMENT ON COLUMN runs.simulated IS 'Whether the pool had a simulated worker: its numbers describe the simulation, never a model.';
COMMENT ON COLUMN runs.method IS 'Method name: planner@pool, e.g. template-fanout@local-simulated.';

CREATE OR REPLACE VIEW v_leaderboard AS
SELECT coalesce(r.method, 'run:' || q.run_id, 'unknown') AS method, r.simulated, q.source AS benchmark,
       count(*) AS questions, avg(q.correct::DOUBLE) AS accuracy,
       sqrt(avg(q.correct::DOUBLE) * (1 - avg(q.correct::DOUBLE)) / count(q.correct)) AS stderr,
       avg(q.cost_usd) AS cost_per_question_usd, avg(q.tokens) AS tokens_per_question,
       sum(q.cost_usd) AS cost_usd, bool_and(q.cost_known) AS cost_known
FROM v_questions q LEFT JOIN runs r ON r.run_id = q.run_id
GROUP BY ALL;
COMMENT ON VIEW v_leaderboard IS 'Method x benchmark: accuracy, standard error and cost, from the stored calls; simulated and real runs are never one row.';

CREATE OR REPLACE VIEW v_run_summary AS
SELECT q.run_id, r.method, r.simulated, q.source AS benchmark, count(*) AS questions,
       avg(q.correct::DOUBLE) AS accuracy, avg(q.reward) AS mean_reward,
       avg((q.parse_status = 'ok')::DOUBLE) AS parsed, avg(q.calls) AS calls_per_question,
       avg(q.tokens) AS tokens_per_question, avg(q.cost_usd) AS usd_per_question,
       bool_and(q.cost_known) AS cost_known, avg(q.wall_s) AS wall_s_per_question
FROM v_questions q LEFT JOIN runs r ON r.run_id = q.run_id
GROUP BY ALL;
COMMENT ON VIEW v_run_summary IS 'Per run and benchmark: accuracy, reward, parse rate, calls, tokens, dollars and seconds per question, from the stored calls.';
