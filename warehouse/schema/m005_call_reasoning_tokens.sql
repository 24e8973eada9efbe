-- m005_call_reasoning_tokens: calls.reasoning_tokens: the part of output tokens a reasoning model spent thinking.
-- Frozen once released: a later change is a new migration.

ALTER TABLE calls ADD COLUMN reasoning_tokens BIGINT DEFAULT 0;
COMMENT ON COLUMN calls.reasoning_tokens IS 'Output tokens spent on hidden reasoning, where the provider reports them (part of output_tokens).';
