-- m011_drop_evaluations_repeat_cost_known: the `evaluations` table goes (`datasets` stays and is
-- now written); v_repeat_scores says whether its dollars are known.
-- Frozen once released: a later change is a new migration.
--
-- Nothing in the pipeline ever wrote `evaluations` (its writer had no caller outside tests), and
-- what it would hold, a method x benchmark summary, is computed from the stored traces by
-- v_leaderboard, v_repeat_scores and v_benchmark_costs: a second, stored copy could only drift
-- from them. An evaluation's id is its `runs` row (kind 'evaluation'), as before.
DROP TABLE evaluations;

COMMENT ON COLUMN promotions.challenger_eval_id IS 'The evaluation that judged the challenger (runs.run_id of its kind ''evaluation'' run; v_question_outcomes.evaluation_id).';
COMMENT ON COLUMN promotions.champion_eval_id IS 'The evaluation that judged the champion or baseline (the same evaluation, on the same problems).';
COMMENT ON TABLE datasets IS 'Manifest of one data set: the curation flow''s training and evaluation sets, and the problems each evaluation ran on (runs.params.dataset_id).';
COMMENT ON COLUMN datasets.manifest IS 'What built it: the curation config and per-source counts, or the evaluation''s problems file.';

-- A repeat's dollars count only the calls whose price is known (as everywhere in the views);
-- `cost_known` says whether that is all of them, so a report shows "unknown", never a partial $.
CREATE OR REPLACE VIEW v_repeat_scores AS
SELECT coalesce(r.params->>'evaluation_id', r.run_id) AS evaluation_id, r.run_id, r.method, r.simulated,
       coalesce(TRY_CAST(r.params->>'repeat' AS INTEGER), 0) AS repeat, q.source AS benchmark,
       count(*) AS questions, count_if(q.correct) AS correct, sum(q.cost_usd) AS cost_usd,
       sum(q.tokens) AS tokens, sum(q.calls) AS calls, bool_and(q.cost_known) AS cost_known
FROM v_questions q JOIN runs r ON r.run_id = q.run_id
GROUP BY ALL;
COMMENT ON VIEW v_repeat_scores IS 'Per evaluation, method, repeat and benchmark: questions, correct and dollars (cost_known false: some call''s price is unknown and cost_usd counts only the known ones).';
