-- m014_rounds: outcomes per recursion round (depth) of each run: how many rounds ran at each
-- depth, what the later rounds did (kept the earlier answer, re-planned, or wrote nothing that
-- parses), what they spent, and how often a graded round was right. Test-time scaling is read
-- here: does a second round pay for its calls? Frozen once released: a later change is a new
-- migration.

CREATE OR REPLACE VIEW v_rounds AS
WITH round_calls AS (
  SELECT trace_id, count(*) AS calls, sum(cost_usd) AS cost_usd, bool_and(cost_usd IS NOT NULL) AS cost_known
  FROM calls WHERE role = 'worker' GROUP BY trace_id
)
SELECT t.run_id, t.depth, count(*) AS rounds,
       CAST(count_if(t.parse_status = 'ok' AND t.depth > 0 AND coalesce(t.n_steps, 0) = 0) AS BIGINT) AS kept,
       CAST(count_if(t.parse_status = 'ok' AND coalesce(t.n_steps, 0) > 0) AS BIGINT) AS planned,
       CAST(count_if(t.parse_status <> 'ok') AS BIGINT) AS unparsed,
       avg(CASE WHEN t.parse_status = 'ok' THEN t.n_steps END) AS mean_steps,
       CAST(coalesce(sum(c.calls), 0) AS BIGINT) AS worker_calls,
       CASE WHEN bool_and(coalesce(c.cost_known, true)) THEN coalesce(sum(c.cost_usd), 0) END AS cost_usd,
       CAST(count(coalesce(t.correct, CASE WHEN t.parse_status <> 'ok' THEN false END)) AS BIGINT) AS graded,
       avg(CAST(coalesce(t.correct, CASE WHEN t.parse_status <> 'ok' THEN false END) AS DOUBLE)) AS accuracy
FROM traces t
LEFT JOIN round_calls c ON c.trace_id = t.trace_id
WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = t.run_id AND r.status <> 'finished')
GROUP BY t.run_id, t.depth;
COMMENT ON VIEW v_rounds IS 'Per run and recursion depth (0: the question''s first round): rounds run, what the later ones did (kept the answer, planned steps, unparsed), their worker calls and $, and accuracy of the graded ones (unfinished runs left out).';
COMMENT ON COLUMN v_rounds.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN v_rounds.depth IS 'Recursion depth: 0 the question''s first round, 1 the round after it, ...';
COMMENT ON COLUMN v_rounds.rounds IS 'Rounds (traces) at this depth.';
COMMENT ON COLUMN v_rounds.kept IS 'Later rounds that kept the earlier answer (three empty lists); 0 at depth 0.';
COMMENT ON COLUMN v_rounds.planned IS 'Rounds that parsed and ran at least one step.';
COMMENT ON COLUMN v_rounds.unparsed IS 'Rounds whose workflow did not parse (too many steps for its limit included).';
COMMENT ON COLUMN v_rounds.mean_steps IS 'Mean steps of the rounds that parsed (a kept answer counts 0).';
COMMENT ON COLUMN v_rounds.worker_calls IS 'Worker calls the rounds at this depth made (the Conductor''s own calls left out).';
COMMENT ON COLUMN v_rounds.cost_usd IS 'Their $; NULL when any call''s cost is unknown (never counted as $0).';
COMMENT ON COLUMN v_rounds.graded IS 'Rounds with a verdict (a question''s first round always; a later round when its answer was graded); an unparsed round counts as graded wrong.';
COMMENT ON COLUMN v_rounds.accuracy IS 'Right among the graded rounds; NULL when none was graded.';
