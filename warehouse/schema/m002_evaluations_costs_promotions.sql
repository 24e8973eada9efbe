-- m002_evaluations_costs_promotions: evaluations, costs, promotions and training_metrics.
-- Frozen once released: a later change is a new migration.

CREATE TABLE evaluations (
  eval_id VARCHAR NOT NULL,
  run_id VARCHAR,
  method VARCHAR,
  benchmark VARCHAR,
  model_version VARCHAR,
  n INTEGER,
  correct INTEGER,
  accuracy DOUBLE,
  stderr DOUBLE,
  cost_usd DOUBLE,
  tokens BIGINT,
  created_at TIMESTAMPTZ DEFAULT now(),
  details JSON,
  PRIMARY KEY (eval_id)
);
COMMENT ON TABLE evaluations IS 'One method evaluated on one benchmark: the summary the evaluation flow writes.';
COMMENT ON COLUMN evaluations.eval_id IS 'Evaluation id.';
COMMENT ON COLUMN evaluations.run_id IS 'The run whose traces it summarises (runs.run_id).';
COMMENT ON COLUMN evaluations.method IS 'conductor@<version>, single:<worker>, moa, ...';
COMMENT ON COLUMN evaluations.benchmark IS 'MATH500, GPQA-Diamond, ...';
COMMENT ON COLUMN evaluations.model_version IS 'Registered model version evaluated, if any.';
COMMENT ON COLUMN evaluations.n IS 'Answers graded (questions x repeats).';
COMMENT ON COLUMN evaluations.correct IS 'Answers right.';
COMMENT ON COLUMN evaluations.accuracy IS 'correct / n.';
COMMENT ON COLUMN evaluations.stderr IS 'Standard error of accuracy over repeats.';
COMMENT ON COLUMN evaluations.cost_usd IS 'Dollars spent.';
COMMENT ON COLUMN evaluations.tokens IS 'Tokens spent.';
COMMENT ON COLUMN evaluations.created_at IS 'When it finished.';
COMMENT ON COLUMN evaluations.details IS 'Anything else (per-repeat figures, settings).';

CREATE TABLE costs (
  cost_id VARCHAR NOT NULL,
  day DATE,
  run_id VARCHAR,
  worker_id VARCHAR,
  provider VARCHAR,
  model VARCHAR,
  calls BIGINT,
  input_tokens BIGINT,
  output_tokens BIGINT,
  cost_usd DOUBLE,
  basis VARCHAR,
  recorded_at TIMESTAMPTZ DEFAULT now(),
  PRIMARY KEY (cost_id)
);
COMMENT ON TABLE costs IS 'Spend per day, run and worker: computed from calls, or from a provider invoice.';
COMMENT ON COLUMN costs.cost_id IS 'Row id (e.g. day/run/worker/basis).';
COMMENT ON COLUMN costs.day IS 'UTC day.';
COMMENT ON COLUMN costs.run_id IS 'The run, if the spend is attributed to one.';
COMMENT ON COLUMN costs.worker_id IS 'Pool id.';
COMMENT ON COLUMN costs.provider IS 'Provider.';
COMMENT ON COLUMN costs.model IS 'Provider''s model name.';
COMMENT ON COLUMN costs.calls IS 'Calls.';
COMMENT ON COLUMN costs.input_tokens IS 'Input tokens.';
COMMENT ON COLUMN costs.output_tokens IS 'Output tokens.';
COMMENT ON COLUMN costs.cost_usd IS 'Dollars.';
COMMENT ON COLUMN costs.basis IS 'computed | invoice.';
COMMENT ON COLUMN costs.recorded_at IS 'When written.';

CREATE TABLE promotions (
  promotion_id VARCHAR NOT NULL,
  model_name VARCHAR,
  challenger_version VARCHAR,
  champion_version VARCHAR,
  promoted BOOLEAN,
  reason VARCHAR,
  challenger_eval_id VARCHAR,
  champion_eval_id VARCHAR,
  decided_at TIMESTAMPTZ DEFAULT now(),
  metrics JSON,
  PRIMARY KEY (promotion_id)
);
COMMENT ON TABLE promotions IS 'Each champion/challenger decision of the promotion flow.';
COMMENT ON COLUMN promotions.promotion_id IS 'Decision id.';
COMMENT ON COLUMN promotions.model_name IS 'Registered model name (conductor).';
COMMENT ON COLUMN promotions.challenger_version IS 'Version that asked for promotion.';
COMMENT ON COLUMN promotions.champion_version IS 'Champion at the time (NULL if none).';
COMMENT ON COLUMN promotions.promoted IS 'Whether the champion alias moved.';
COMMENT ON COLUMN promotions.reason IS 'Why, in one line.';
COMMENT ON COLUMN promotions.challenger_eval_id IS 'Its evaluation (evaluations.eval_id).';
COMMENT ON COLUMN promotions.champion_eval_id IS 'The champion''s evaluation.';
COMMENT ON COLUMN promotions.decided_at IS 'When decided.';
COMMENT ON COLUMN promotions.metrics IS 'Figures compared.';

CREATE TABLE training_metrics (
  run_id VARCHAR NOT NULL,
  step INTEGER NOT NULL,
  metric VARCHAR NOT NULL,
  value DOUBLE,
  logged_at TIMESTAMPTZ DEFAULT now(),
  PRIMARY KEY (run_id, step, metric)
);
COMMENT ON TABLE training_metrics IS 'Per-step training metrics (long form: one row per run, step, metric).';
COMMENT ON COLUMN training_metrics.run_id IS 'Training run (runs.run_id).';
COMMENT ON COLUMN training_metrics.step IS 'Optimizer step.';
COMMENT ON COLUMN training_metrics.metric IS 'reward, accuracy, parse_rate, loss, cost_usd, ...';
COMMENT ON COLUMN training_metrics.value IS 'Value.';
COMMENT ON COLUMN training_metrics.logged_at IS 'When written.';
