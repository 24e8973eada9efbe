-- m001_core_tables: runs, datasets, problems, traces, steps, calls and the staged-batch ledger.
-- Frozen once released: a later change is a new migration.

CREATE TABLE runs (
  run_id VARCHAR NOT NULL,
  kind VARCHAR,
  method VARCHAR,
  status VARCHAR,
  started_at TIMESTAMPTZ,
  finished_at TIMESTAMPTZ,
  params JSON,
  mlflow_run_id VARCHAR,
  notes VARCHAR,
  PRIMARY KEY (run_id)
);
COMMENT ON TABLE runs IS 'One training, evaluation or ad-hoc run; traces name it by run_id.';
COMMENT ON COLUMN runs.run_id IS 'Run id (the MLflow run id when there is one).';
COMMENT ON COLUMN runs.kind IS 'train | eval | ask | curate | other.';
COMMENT ON COLUMN runs.method IS 'What produced the answers, e.g. conductor@3, single:gpt-5, moa.';
COMMENT ON COLUMN runs.status IS 'running | finished | failed.';
COMMENT ON COLUMN runs.started_at IS 'When the run started (UTC).';
COMMENT ON COLUMN runs.finished_at IS 'When the run ended (UTC); NULL while running.';
COMMENT ON COLUMN runs.params IS 'The run''s parameters as given.';
COMMENT ON COLUMN runs.mlflow_run_id IS 'The MLflow run holding its metrics and artifacts, if any.';
COMMENT ON COLUMN runs.notes IS 'Free text.';

CREATE TABLE datasets (
  dataset_id VARCHAR NOT NULL,
  name VARCHAR,
  source VARCHAR,
  split VARCHAR,
  revision VARCHAR,
  n_problems INTEGER,
  content_hash VARCHAR,
  path VARCHAR,
  created_at TIMESTAMPTZ,
  manifest JSON,
  PRIMARY KEY (dataset_id)
);
COMMENT ON TABLE datasets IS 'Manifest of one curated data set: where it came from and what it holds.';
COMMENT ON COLUMN datasets.dataset_id IS 'Dataset id, e.g. train-v1 or math500@rev.';
COMMENT ON COLUMN datasets.name IS 'Human name.';
COMMENT ON COLUMN datasets.source IS 'Source (MATH, MMLU, ...) or ''mixed''.';
COMMENT ON COLUMN datasets.split IS 'train | eval | test ...';
COMMENT ON COLUMN datasets.revision IS 'Pinned Hugging Face revision or file hash it was built from.';
COMMENT ON COLUMN datasets.n_problems IS 'How many problems it holds.';
COMMENT ON COLUMN datasets.content_hash IS 'Hash of its problem ids in order; equal hash, equal data set.';
COMMENT ON COLUMN datasets.path IS 'Where its file lives, if anywhere.';
COMMENT ON COLUMN datasets.created_at IS 'When it was built (UTC).';
COMMENT ON COLUMN datasets.manifest IS 'The whole manifest as written by the curation flow.';

CREATE TABLE dataset_problems (
  dataset_id VARCHAR NOT NULL,
  problem_id VARCHAR NOT NULL,
  position INTEGER,
  PRIMARY KEY (dataset_id, problem_id)
);
COMMENT ON TABLE dataset_problems IS 'Which problems a data set holds, in order.';
COMMENT ON COLUMN dataset_problems.dataset_id IS 'The data set (datasets.dataset_id).';
COMMENT ON COLUMN dataset_problems.problem_id IS 'The problem (problems.problem_id).';
COMMENT ON COLUMN dataset_problems.position IS '0-based position in the data set.';

CREATE TABLE problems (
  problem_id VARCHAR NOT NULL,
  source VARCHAR,
  domain VARCHAR,
  question VARCHAR,
  answer VARCHAR,
  choices VARCHAR[],
  tests JSON,
  meta JSON,
  added_at TIMESTAMPTZ DEFAULT now(),
  PRIMARY KEY (problem_id)
);
COMMENT ON TABLE problems IS 'Every question we have asked, in the one Problem schema.';
COMMENT ON COLUMN problems.problem_id IS 'Stable id: source + hash of the source''s native id.';
COMMENT ON COLUMN problems.source IS 'MATH, MMLU, RLPR, LiveCodeBench, ...';
COMMENT ON COLUMN problems.domain IS 'math | choice | freeform | code (picks the verifier).';
COMMENT ON COLUMN problems.question IS 'The question text.';
COMMENT ON COLUMN problems.answer IS 'Reference answer, when there is one.';
COMMENT ON COLUMN problems.choices IS 'Multiple-choice options, A first.';
COMMENT ON COLUMN problems.tests IS 'Code tests (LiveCodeBench shape).';
COMMENT ON COLUMN problems.meta IS 'Anything else the source carries.';
COMMENT ON COLUMN problems.added_at IS 'When it was first written here.';

CREATE TABLE traces (
  trace_id VARCHAR NOT NULL,
  root_trace_id VARCHAR NOT NULL,
  parent_trace_id VARCHAR,
  parent_step_index INTEGER,
  depth INTEGER,
  run_id VARCHAR,
  problem_id VARCHAR,
  source VARCHAR,
  domain VARCHAR,
  pool VARCHAR[],
  conductor_prompt JSON,
  conductor_output VARCHAR,
  conductor_call_id VARCHAR,
  parse_status VARCHAR,
  parse_error VARCHAR,
  workflow JSON,
  n_steps INTEGER,
  shape VARCHAR,
  answer VARCHAR,
  stop_reason VARCHAR,
  correct BOOLEAN,
  verdict JSON,
  reward DOUBLE,
  calls INTEGER,
  input_tokens BIGINT,
  output_tokens BIGINT,
  tokens BIGINT,
  cost_usd DOUBLE,
  cost_known BOOLEAN,
  wall_s DOUBLE,
  created_at TIMESTAMPTZ,
  ingested_at TIMESTAMPTZ DEFAULT now(),
  PRIMARY KEY (trace_id)
);
COMMENT ON TABLE traces IS 'One solved problem (depth 0) or one recursion round of it (depth > 0).';
COMMENT ON COLUMN traces.trace_id IS 'Trace id.';
COMMENT ON COLUMN traces.root_trace_id IS 'The depth-0 trace this round belongs to (itself at depth 0).';
COMMENT ON COLUMN traces.parent_trace_id IS 'The round that asked for this one (recursion); NULL at depth 0.';
COMMENT ON COLUMN traces.parent_step_index IS 'Step of the parent round whose worker was the Conductor.';
COMMENT ON COLUMN traces.depth IS 'Recursion depth: 0 for the question, 1 for the first re-plan, ...';
COMMENT ON COLUMN traces.run_id IS 'The run (runs.run_id) that produced it.';
COMMENT ON COLUMN traces.problem_id IS 'The problem (problems.problem_id).';
COMMENT ON COLUMN traces.source IS 'Benchmark or data source of the problem.';
COMMENT ON COLUMN traces.domain IS 'math | choice | freeform | code; NULL if the problem is unknown.';
COMMENT ON COLUMN traces.pool IS 'Worker ids offered to the Conductor, in order (Model 0, Model 1, ...).';
COMMENT ON COLUMN traces.conductor_prompt IS 'The planner''s messages.';
COMMENT ON COLUMN traces.conductor_output IS 'The planner''s raw text.';
COMMENT ON COLUMN traces.conductor_call_id IS 'The planner''s call (calls.call_id).';
COMMENT ON COLUMN traces.parse_status IS 'ok, or why the output is not a workflow (missing_list, ...).';
COMMENT ON COLUMN traces.parse_error IS 'Parse error detail.';
COMMENT ON COLUMN traces.workflow IS 'The parsed workflow: model_id, subtasks, access_list.';
COMMENT ON COLUMN traces.n_steps IS 'Steps in the workflow (0 when unparsed).';
COMMENT ON COLUMN traces.shape IS 'single | chain | fan_out_aggregate | parallel | verify_refine | recursive | empty | unparsed | other.';
COMMENT ON COLUMN traces.answer IS 'The final answer.';
COMMENT ON COLUMN traces.stop_reason IS 'Why execution ended early (budget, failed step, ...).';
COMMENT ON COLUMN traces.correct IS 'The verifier''s verdict; NULL when not verified.';
COMMENT ON COLUMN traces.verdict IS 'The whole verdict (extracted answer, reason, method).';
COMMENT ON COLUMN traces.reward IS 'GRPO reward: 0 unparsed, 0.5 parsed but wrong, 1 right (blended over rounds).';
COMMENT ON COLUMN traces.calls IS 'Model calls counted in the trace''s totals.';
COMMENT ON COLUMN traces.input_tokens IS 'Input tokens in the totals.';
COMMENT ON COLUMN traces.output_tokens IS 'Output tokens in the totals.';
COMMENT ON COLUMN traces.tokens IS 'input_tokens + output_tokens.';
COMMENT ON COLUMN traces.cost_usd IS 'Dollars in the totals (a lower bound when cost_known is false).';
COMMENT ON COLUMN traces.cost_known IS 'False when some call had an unknown price.';
COMMENT ON COLUMN traces.wall_s IS 'Wall-clock seconds of the round.';
COMMENT ON COLUMN traces.created_at IS 'When the trace was made (UTC).';
COMMENT ON COLUMN traces.ingested_at IS 'When it was written here.';

CREATE TABLE steps (
  trace_id VARCHAR NOT NULL,
  step_index INTEGER NOT NULL,
  root_trace_id VARCHAR NOT NULL,
  run_id VARCHAR,
  worker_id VARCHAR,
  subtask VARCHAR,
  reads INTEGER[],
  status VARCHAR,
  output VARCHAR,
  error VARCHAR,
  started_at_s DOUBLE,
  finished_at_s DOUBLE,
  latency_s DOUBLE,
  call_id VARCHAR,
  child_trace_id VARCHAR,
  PRIMARY KEY (trace_id, step_index)
);
COMMENT ON TABLE steps IS 'One workflow step of one round.';
COMMENT ON COLUMN steps.trace_id IS 'The round (traces.trace_id).';
COMMENT ON COLUMN steps.step_index IS '0-based position in the workflow.';
COMMENT ON COLUMN steps.root_trace_id IS 'The depth-0 trace.';
COMMENT ON COLUMN steps.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN steps.worker_id IS 'Worker that ran it (the Conductor itself for a recursion step).';
COMMENT ON COLUMN steps.subtask IS 'The instruction the Conductor wrote for it.';
COMMENT ON COLUMN steps.reads IS 'Earlier steps whose responses it saw (resolved access list).';
COMMENT ON COLUMN steps.status IS 'ok | error | skipped | budget_exhausted.';
COMMENT ON COLUMN steps.output IS 'Its response.';
COMMENT ON COLUMN steps.error IS 'Why it failed.';
COMMENT ON COLUMN steps.started_at_s IS 'Start, seconds from the round''s start.';
COMMENT ON COLUMN steps.finished_at_s IS 'End, seconds from the round''s start.';
COMMENT ON COLUMN steps.latency_s IS 'finished_at_s - started_at_s.';
COMMENT ON COLUMN steps.call_id IS 'Its model call (calls.call_id).';
COMMENT ON COLUMN steps.child_trace_id IS 'The recursion round it started (traces.trace_id).';

CREATE TABLE calls (
  call_id VARCHAR NOT NULL,
  trace_id VARCHAR NOT NULL,
  root_trace_id VARCHAR NOT NULL,
  run_id VARCHAR,
  step_index INTEGER,
  role VARCHAR,
  worker_id VARCHAR,
  provider VARCHAR,
  model VARCHAR,
  messages JSON,
  output VARCHAR,
  status VARCHAR,
  input_tokens BIGINT,
  output_tokens BIGINT,
  cached_input_tokens BIGINT,
  tokens BIGINT,
  latency_s DOUBLE,
  cost_usd DOUBLE,
  retries INTEGER,
  error VARCHAR,
  started_at_s DOUBLE,
  PRIMARY KEY (call_id)
);
COMMENT ON TABLE calls IS 'One model call after retries: a worker step or the Conductor planning.';
COMMENT ON COLUMN calls.call_id IS 'Call id.';
COMMENT ON COLUMN calls.trace_id IS 'The round it belongs to (traces.trace_id).';
COMMENT ON COLUMN calls.root_trace_id IS 'The depth-0 trace.';
COMMENT ON COLUMN calls.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN calls.step_index IS 'The step it served; NULL for the planner''s call.';
COMMENT ON COLUMN calls.role IS 'worker | conductor.';
COMMENT ON COLUMN calls.worker_id IS 'Pool id of the model called.';
COMMENT ON COLUMN calls.provider IS 'openai, anthropic, google, openai_compatible, local, simulated, ...';
COMMENT ON COLUMN calls.model IS 'Provider''s model name.';
COMMENT ON COLUMN calls.messages IS 'Messages sent.';
COMMENT ON COLUMN calls.output IS 'Text returned.';
COMMENT ON COLUMN calls.status IS 'ok | error.';
COMMENT ON COLUMN calls.input_tokens IS 'Input tokens.';
COMMENT ON COLUMN calls.output_tokens IS 'Output tokens.';
COMMENT ON COLUMN calls.cached_input_tokens IS 'Input tokens served from the provider''s cache.';
COMMENT ON COLUMN calls.tokens IS 'input_tokens + output_tokens.';
COMMENT ON COLUMN calls.latency_s IS 'Seconds, retries included.';
COMMENT ON COLUMN calls.cost_usd IS 'Dollars; NULL when the price is unknown (never 0 by default).';
COMMENT ON COLUMN calls.retries IS 'Retries before the final outcome.';
COMMENT ON COLUMN calls.error IS 'Final error, if it failed.';
COMMENT ON COLUMN calls.started_at_s IS 'Start, seconds from the round''s start.';

CREATE TABLE ingested_batches (
  batch_id VARCHAR NOT NULL,
  traces INTEGER,
  steps INTEGER,
  calls INTEGER,
  ingested_at TIMESTAMPTZ DEFAULT now(),
  PRIMARY KEY (batch_id)
);
COMMENT ON TABLE ingested_batches IS 'Staged batch files already ingested (see warehouse.staging).';
COMMENT ON COLUMN ingested_batches.batch_id IS 'Name of the staged batch.';
COMMENT ON COLUMN ingested_batches.traces IS 'Trace rows it held (rounds included).';
COMMENT ON COLUMN ingested_batches.steps IS 'Step rows it held.';
COMMENT ON COLUMN ingested_batches.calls IS 'Call rows it held.';
COMMENT ON COLUMN ingested_batches.ingested_at IS 'When it was ingested.';
