-- m003_views: The day-one views (accuracy, cost per correct, shapes, curves, leaderboard).
-- Frozen once released: a later change is a new migration.

CREATE OR REPLACE VIEW v_questions AS SELECT t.trace_id, t.run_id, t.problem_id, t.source, t.domain, t.shape, t.n_steps,
       coalesce(r.rounds, 1) AS rounds, t.parse_status, t.correct, t.reward,
       coalesce(c.calls, 0) AS calls, coalesce(c.tokens, 0) AS tokens,
       coalesce(c.cost_usd, 0) AS cost_usd, coalesce(c.cost_known, true) AS cost_known,
       t.wall_s, t.created_at
FROM traces t
LEFT JOIN (SELECT root_trace_id, count(*) AS calls, sum(tokens) AS tokens,
                  sum(cost_usd) AS cost_usd, bool_and(cost_usd IS NOT NULL) AS cost_known
           FROM calls GROUP BY root_trace_id) c ON c.root_trace_id = t.trace_id
LEFT JOIN (SELECT root_trace_id, count(*) AS rounds FROM traces GROUP BY root_trace_id) r
       ON r.root_trace_id = t.trace_id
WHERE t.trace_id = t.root_trace_id;
COMMENT ON VIEW v_questions IS 'One row per question (depth-0 trace) with calls, tokens and cost over all its rounds.';

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
       count(q.correct) AS graded,
       avg(q.correct::DOUBLE) AS accuracy,
       count(f.worker_id) AS final_answers,
       avg(CASE WHEN f.worker_id IS NOT NULL THEN q.correct::DOUBLE END) AS final_answer_accuracy,
       sum(w.calls) AS calls, sum(w.errors) AS errors, sum(w.tokens) AS tokens,
       sum(w.cost_usd) AS cost_usd, avg(w.latency_s) AS mean_latency_s
FROM per_worker w
JOIN traces q ON q.trace_id = w.root_trace_id
LEFT JOIN final_step f ON f.root_trace_id = w.root_trace_id AND f.worker_id = w.worker_id
GROUP BY w.worker_id, q.domain;
COMMENT ON VIEW v_accuracy_by_worker_domain IS 'Per worker and domain: questions it took part in, their accuracy, and accuracy when it wrote the final step.';

CREATE OR REPLACE VIEW v_cost_per_correct AS SELECT run_id, source, count(*) AS questions, count_if(correct) AS correct,
       sum(cost_usd) AS cost_usd,
       sum(cost_usd) / nullif(count_if(correct), 0) AS cost_per_correct_usd,
       bool_and(cost_known) AS cost_known
FROM v_questions GROUP BY run_id, source;
COMMENT ON VIEW v_cost_per_correct IS 'Per run and source: dollars spent per correct answer.';

CREATE OR REPLACE VIEW v_calls_per_question AS SELECT run_id, source, count(*) AS questions,
       avg(calls) AS mean_calls, avg(tokens) AS mean_tokens,
       quantile_cont(tokens, 0.5) AS median_tokens, quantile_cont(tokens, 0.95) AS p95_tokens,
       avg(rounds) AS mean_rounds, avg(n_steps) AS mean_steps
FROM v_questions GROUP BY run_id, source;
COMMENT ON VIEW v_calls_per_question IS 'Per run and source: calls, tokens, rounds and steps per question.';

CREATE OR REPLACE VIEW v_workflow_shapes AS SELECT run_id, shape, count(*) AS questions,
       count(*) / sum(count(*)) OVER (PARTITION BY run_id) AS share,
       avg(correct::DOUBLE) AS accuracy, avg(n_steps) AS mean_steps,
       avg(calls) AS mean_calls, avg(cost_usd) AS mean_cost_usd
FROM v_questions GROUP BY run_id, shape;
COMMENT ON VIEW v_workflow_shapes IS 'Per run: how often each workflow shape occurs, and how well it does.';

CREATE OR REPLACE VIEW v_training_curves AS SELECT run_id, step,
       max(value) FILTER (WHERE metric = 'reward') AS reward,
       max(value) FILTER (WHERE metric = 'accuracy') AS accuracy,
       max(value) FILTER (WHERE metric = 'parse_rate') AS parse_rate,
       max(value) FILTER (WHERE metric = 'loss') AS loss,
       max(value) FILTER (WHERE metric = 'mean_steps') AS mean_steps,
       max(value) FILTER (WHERE metric = 'cost_usd') AS cost_usd,
       count(*) AS metrics
FROM training_metrics GROUP BY run_id, step;
COMMENT ON VIEW v_training_curves IS 'Per training run and step: reward, accuracy, parse rate, loss (from training_metrics).';

CREATE OR REPLACE VIEW v_leaderboard AS SELECT coalesce(r.method, 'run:' || q.run_id, 'unknown') AS method, q.source AS benchmark,
       count(*) AS questions, avg(q.correct::DOUBLE) AS accuracy,
       sqrt(avg(q.correct::DOUBLE) * (1 - avg(q.correct::DOUBLE)) / count(q.correct)) AS stderr,
       avg(q.cost_usd) AS cost_per_question_usd, avg(q.tokens) AS tokens_per_question,
       sum(q.cost_usd) AS cost_usd, bool_and(q.cost_known) AS cost_known
FROM v_questions q LEFT JOIN runs r ON r.run_id = q.run_id
GROUP BY ALL;
COMMENT ON VIEW v_leaderboard IS 'Method x benchmark: accuracy, standard error and cost (method from runs.method).';
