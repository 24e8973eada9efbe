-- m012_step_fallbacks: who answered a step when the worker asked was down (issue 35, outages).
-- Frozen once released: a later change is a new migration.
--
-- `steps.worker_id` stays the worker the workflow asked. When it was down (its circuit breaker
-- open: not called) or failed past its retries, a fallback worker answered: `fallback_call_id`
-- is that call (a `calls` row with the same step_index; both calls' costs are in the trace's
-- usage), `fallback_reason` why. `answered_by` is the worker whose call gave the output.
ALTER TABLE steps ADD COLUMN answered_by VARCHAR;
ALTER TABLE steps ADD COLUMN fallback_call_id VARCHAR;
ALTER TABLE steps ADD COLUMN fallback_reason VARCHAR;
COMMENT ON COLUMN steps.worker_id IS 'Worker the workflow asked (the Conductor itself for a recursion step); answered_by says who answered.';
COMMENT ON COLUMN steps.call_id IS 'The call to the worker asked (calls.call_id); null when it was not called (its circuit breaker was open) or for a recursion step.';
COMMENT ON COLUMN steps.answered_by IS 'Worker whose call gave the output: worker_id, or its fallback when worker_id was down; null when no worker call answered (failed, skipped, a recursion step, or written before m012).';
COMMENT ON COLUMN steps.fallback_call_id IS 'The call to the fallback worker that answered instead of worker_id (calls.call_id), or null.';
COMMENT ON COLUMN steps.fallback_reason IS 'Why the step went to a fallback: worker_id down (circuit breaker open, not called) or its call''s failure after retries.';

-- Each outage of a run: the worker asked, who answered for it, on how many steps, and on how many
-- of them the worker was not called at all (down). The nightly summary names these.
CREATE OR REPLACE VIEW v_outages AS
SELECT s.run_id, s.worker_id, s.answered_by, count(*) AS steps,
       count_if(s.call_id IS NULL) AS not_called, count_if(s.status = 'ok') AS answered
FROM steps s
WHERE s.fallback_reason IS NOT NULL
GROUP BY ALL;
COMMENT ON VIEW v_outages IS 'Per run, worker asked and fallback: steps that went to a fallback because the worker was down or failed past its retries (answered_by null: the fallback failed too); not_called: the worker''s breaker was open.';
