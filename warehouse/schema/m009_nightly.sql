-- m009_nightly: what the nightly pipeline reads and what its users query.
-- Frozen once released: a later change is a new migration.

CREATE OR REPLACE VIEW v_question_outcomes AS
SELECT json_extract_string(r.params, '$.evaluation_id') AS evaluation_id,
       json_extract_string(r.params, '$.spec') AS spec, r.method, r.run_id,
       coalesce(TRY_CAST(json_extract_string(r.params, '$.repeat') AS INTEGER), 0) AS repeat,
       q.problem_id, q.source AS benchmark, coalesce(q.correct, false) AS correct, q.cost_usd, q.calls
FROM v_questions q JOIN runs r ON r.run_id = q.run_id
WHERE r.kind = 'eval';
COMMENT ON VIEW v_question_outcomes IS 'Per evaluation, method spec, repeat and question: right or not (unparsed = wrong) and its $ (finished runs only): the paired comparison the promotion gate reads.';

CREATE OR REPLACE VIEW v_nightly AS
SELECT r.run_id, r.status, r.started_at, r.finished_at, r.simulated,
       json_extract_string(r.params, '$.run_key') AS run_key,
       json_extract_string(r.params, '$.challenger_version') AS challenger_version,
       json_extract_string(r.params, '$.evaluation_id') AS evaluation_id,
       p.promotion_id, p.champion_version, p.promoted, p.reason,
       TRY_CAST(json_extract_string(r.params, '$.usd_spent') AS DOUBLE) AS usd_spent
FROM runs r
LEFT JOIN promotions p ON p.promotion_id = json_extract_string(r.params, '$.promotion_id')
WHERE r.kind = 'nightly';
COMMENT ON VIEW v_nightly IS 'One row per nightly pipeline run: the challenger it trained, its evaluation, the gate decision and the $ it spent.';
