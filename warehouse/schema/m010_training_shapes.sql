-- m010_training_shapes: which training step each rollout belongs to, and the workflow shapes
-- the policy wrote at every step, per domain (the paper's Figure 3: strategies over training).
-- Frozen once released: a later change is a new migration.

CREATE TABLE training_rollouts (
  trace_id VARCHAR NOT NULL,
  run_id VARCHAR NOT NULL,
  step INTEGER NOT NULL,
  PRIMARY KEY (trace_id)
);
COMMENT ON TABLE training_rollouts IS 'One GRPO rollout (a round in traces) and the training step whose batch generated it.';
COMMENT ON COLUMN training_rollouts.trace_id IS 'The rollout''s round (traces.trace_id).';
COMMENT ON COLUMN training_rollouts.run_id IS 'The training run (runs.run_id).';
COMMENT ON COLUMN training_rollouts.step IS 'The trainer''s step when the rollout was generated (0 = before the first update).';

CREATE OR REPLACE VIEW v_training_shapes AS
WITH firsts AS (
  SELECT r.run_id, r.step, t.domain, t.shape, t.n_steps
  FROM training_rollouts r JOIN traces t ON t.trace_id = r.trace_id
  WHERE t.depth = 0
)
SELECT run_id, step, domain, shape, count(*) AS rollouts,
       count(*) / sum(count(*)) OVER w AS share,
       avg(n_steps) AS shape_mean_steps,
       sum(sum(n_steps)) OVER w / sum(count(*)) OVER w AS mean_steps,
       sum(count(*)) OVER w AS domain_rollouts
FROM firsts GROUP BY run_id, step, domain, shape
WINDOW w AS (PARTITION BY run_id, step, domain);
COMMENT ON VIEW v_training_shapes IS 'Per training run, step, domain and workflow shape (conductor.shapes): first-round rollouts of that shape, their share of the domain''s rollouts at that step, their mean steps, and the domain''s mean steps (0 for unparsed) and rollouts at that step. Shapes no rollout took have no row.';
