"""The SFT warm start (TRL SFTTrainer) and real GRPO steps of the tiny model (TRL GRPOTrainer,
the simulated pool, generated-bank problems): the warm-started model writes parseable workflows;
under GRPO the weights change, the run logs to a real MLflow SQLite store and registers
`conductor@challenger`, its rollouts reach a real DuckDB warehouse (`v_training_curves`), the
registered model answers through `conductor ask --conductor models:/conductor@challenger`, a run
resumes from its checkpoint, and the dollar budget stops it cleanly at a checkpoint."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import mlflow
import pytest
import torch

from conductor.models.tiny import load_tokenizer
from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool
from conductor.training.evaluate import generate_workflows, score_texts
from conductor.training.grpo import last_checkpoint, train_grpo
from conductor.training.pipeline import run_training
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.sft_data import TASK_LINES
from conductor.training.strategies import all_phrases, stated_plan
from conductor.training.warm import warm_started_tiny
from registry.runs import TrainingRun
from tasks.training_sink import WarehouseSink
from conductor.workflow import ParseError, parse
from warehouse.store import TraceStore

# temperature 0.5: the briefly trained fixture model samples parseable workflows at 0.5 but rarely
# at the profile's 1.0 (all-zero rewards give zero advantages: no update to see).
SMALL = {"per_device_train_batch_size": 8, "num_generations": 4, "max_completion_length": 64, "eval_every": 0,
         "early_stopping_patience": 0, "save_steps": 1, "temperature": 0.5}


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> tuple[Path, list, list]:
    """A briefly warm-started small tiny model (a real SFTTrainer run): its outputs parse often
    but not always at temperature 0.5, so rewards vary within a group (all-equal rewards would
    give zero advantages and no update)."""
    out = tmp_path_factory.mktemp("warm")
    splits = bank_splits()
    train, held_out = take_per_domain(splits.train, 48), take_per_domain(splits.validation, 8)
    # Small: 48 problems x 16 fresh draws x 4 epochs (192 SFT steps) on a 2-layer width-64 model:
    # 15 of 16 held-out workflows parse greedily (with 4 draws x 8 epochs, 2 of 16: eight plans
    # and their wordings need more draws than the old one- or two-step data did).
    config = local_profile(out, sft_epochs=4.0, sft_problems=48, sft_copies=16)
    model_dir = warm_started_tiny(config, train, hidden_size=64, num_hidden_layers=2, vocab_size=2048)
    return model_dir, train, held_out


def test_a_finished_warm_start_is_reused_not_its_untrained_base(warm) -> None:
    """A second run into the same output dir (base/ and sft/ both there) starts GRPO from sft/."""
    from conductor.training.pipeline import ensure_model

    model_dir, train, _ = warm
    config = local_profile(model_dir.parent)
    assert config.model_name_or_path == str(model_dir.parent / "base")
    assert ensure_model(config, train) == model_dir
    assert config.model_name_or_path == str(model_dir)


def test_sft_warm_start_writes_parseable_workflows(warm) -> None:
    from transformers import AutoModelForCausalLM

    model_dir, train, _ = warm
    held_out = take_per_domain(bank_splits().test, 16)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tokenizer = load_tokenizer(model_dir)
    pool = training_pool(local_profile("/tmp/unused").pool_file, [*train, *held_out])
    rows = build_rows(held_out, pool, PoolSampling())
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    texts = generate_workflows(model, tokenizer, prompts, max_new_tokens=64)
    parsed = [parse(t, len(r.pool_ids)) for t, r in zip(texts, rows)]
    ok = [p for p in parsed if not isinstance(p, ParseError)]
    assert len(ok) >= 0.7 * len(rows), texts
    # Every parsed one opens with a plan from the library and a kind-of-task sentence, and its
    # subtasks are wordings from the phrasing library.
    for t, p, r in zip(texts, parsed, rows):
        if isinstance(p, ParseError):
            continue
        plan = stated_plan(t)
        assert plan is not None and t.split("\n", 1)[0].endswith(tuple(TASK_LINES.values())), t
        assert all(s in all_phrases() for s in p.subtasks), t
    # And the parsed workflows run: every parsed one is scored 0.5 or 1 by the real path.
    result = asyncio.run(score_texts(texts, rows, pool, examples=False))
    assert result.format_rate == len(ok) / len(rows)
    # Held-out accuracy counts the verdicts of the traces it ran: some parsed workflows reach a
    # right answer over the simulated pool (seeded: the same ones every run).
    right = sum(t.verdict is not None and t.verdict.correct for t in result.traces)
    assert right > 0 and result.accuracy == right / len(rows)


def _weights(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def test_grpo_steps_change_weights_and_log_to_mlflow(tmp_path, warm, monkeypatch) -> None:
    model_dir, train, held_out = warm
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    sunk = []
    warehouse = WarehouseSink(tmp_path / "wh.duckdb", tmp_path / "staging", simulated=True)

    def sink(trace, step) -> None:  # noqa: ANN001
        sunk.append(step)
        warehouse(trace, step)

    config = local_profile(tmp_path / "run", model_name_or_path=str(model_dir), max_steps=2, **SMALL)
    outcome = run_training(config, [*train, *held_out], sink=sink, tracker=TrainingRun)
    warehouse.close()
    result = outcome.result
    assert result.steps == 2 and result.stop_reason == "max_steps"
    before, after = _weights(model_dir), _weights(tmp_path / "run" / "model")
    assert any(not torch.equal(before[k], after[k]) for k in before)
    # The model directory carries the prompt it was trained on (no few-shot examples in the local
    # profile), so a planner built from it prompts it the same way.
    from conductor.planners import ModelPlanner

    assert config.few_shot_examples is False
    assert ModelPlanner.from_directory(tmp_path / "run" / "model").few_shot_examples is False
    assert len(sunk) == 2 * 8 and set(sunk) == {0, 1}
    assert [r["step"] for r in result.history] == [1.0, 2.0]
    # The step time split (benchmarks/training_speed.py prints it) covers both steps.
    split = result.time_split
    assert split["steps"] == 2 and split["cpu_generation_s"] > 0 and split["cpu_backward_s"] > 0
    assert split["wall_step_s"] >= split["wall_generation_s"] + split["wall_reward_s"]
    assert all(0.0 <= r["format_rate"] <= 1.0 for r in result.history)
    client = mlflow.MlflowClient(uri)
    run = client.get_run(outcome.tracking_run_id)
    assert run.data.params["learning_rate"] == str(config.learning_rate)
    assert len(client.get_metric_history(run.info.run_id, "reward")) == 2
    assert "eval_accuracy" in run.data.metrics
    version = client.get_model_version_by_alias("conductor", "challenger")
    assert version.run_id == outcome.tracking_run_id
    # Every rollout is in the warehouse, under the sink's `train` run carrying the MLflow run id,
    # and the run's curve (one row per step) is in v_training_curves.
    with TraceStore(tmp_path / "wh.duckdb", read_only=True) as store:
        run_row = store.query("SELECT run_id, kind, status, mlflow_run_id, simulated FROM runs").to_pylist()
        assert run_row == [{"run_id": warehouse.run_id, "kind": "train", "status": "finished",
                            "mlflow_run_id": outcome.tracking_run_id, "simulated": True}]
        n = store.query("SELECT count(*) AS n FROM traces WHERE run_id = ?", [warehouse.run_id]).to_pylist()
        assert n == [{"n": 16}]
        curve = store.query("SELECT step, reward, parse_rate FROM v_training_curves WHERE run_id = ? ORDER BY step",
                            [warehouse.run_id]).to_pylist()
        assert [r["step"] for r in curve] == [0, 1] and all(0 <= r["parse_rate"] <= 1 for r in curve)
        # Its strategies: each step's 8 first-round rollouts, by domain and shape (v_training_shapes).
        shapes = store.query("SELECT step, domain, sum(rollouts) AS n, sum(share) AS total FROM v_training_shapes"
                             " WHERE run_id = ? GROUP BY step, domain", [warehouse.run_id]).to_pylist()
        assert {r["step"]: 0 for r in shapes} == {0: 0, 1: 0} and all(r["total"] == pytest.approx(1) for r in shapes)
        assert [sum(r["n"] for r in shapes if r["step"] == s) for s in (0, 1)] == [8, 8]
    # The reward's shape shares reached MLflow through TRL's log_metric, and drew the strategies plot.
    shares = [k for k in run.data.metrics if k.startswith("shape_share/")]
    assert shares and all(len(client.get_metric_history(run.info.run_id, k)) >= 1 for k in shares)
    assert "plots/strategies.png" in {a.path for a in client.list_artifacts(run.info.run_id, "plots")}
    # The registered model answers through the library CLI, resolved by registry/'s entry point.
    from typer.testing import CliRunner

    from conductor.cli import app

    question = held_out[0].question
    res = CliRunner().invoke(app, ["ask", "--conductor", "models:/conductor@challenger", "--json", question])
    assert res.exit_code == 0, res.output
    assert '"conductor_output"' in res.output and '"parse_status"' in res.output


def _hopeless_pool(tmp_path: Path) -> Path:
    """The local simulated pool with every worker's skill 0: no answer is ever right, so held-out
    accuracy is 0.0 at every evaluation (parsed workflows still earn the format reward, so GRPO
    still moves the weights)."""
    import yaml

    from conductor.training.config import local_profile as profile

    pool = yaml.safe_load(Path(profile("/tmp/unused").pool_file).read_text())
    for worker in pool["workers"]:
        worker["options"]["skills"] = {domain: 0.0 for domain in worker["options"]["skills"]}
    path = tmp_path / "hopeless.yaml"
    path.write_text(yaml.safe_dump(pool))
    return path


def test_early_stopping_keeps_the_best_model(tmp_path, warm) -> None:
    """eval_every=1, patience=2, accuracy 0.0 at every evaluation: step 1's evaluation stays the
    best (a tie is no improvement), two more without improvement stop the run at step 3, and the
    model the run hands on is step 1's (best/), not the last step's."""
    model_dir, train, held_out = warm
    out = tmp_path / "run"
    # Every workflow parses (the decision automaton) and every answer is wrong, so every rollout
    # earns 0.5: a cost term in the reward keeps the rollouts apart, so the weights still move.
    cfg = local_profile(out, model_name_or_path=str(model_dir), max_steps=6, pool_file=str(_hopeless_pool(tmp_path)),
                        **{**SMALL, "eval_every": 1, "early_stopping_patience": 2, "cost_weight": 1.0})
    result = train_grpo(cfg, train, held_out[:8])
    assert (result.stop_reason, result.steps) == ("early_stopping", 3)
    assert [(h["step"], h["eval_accuracy"]) for h in result.eval_history] == [(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]
    assert (result.best_step, result.best_eval_accuracy) == (1, 0.0)
    assert result.model_dir == out / "best"
    best, step1, last = _weights(out / "best"), _weights(out / "checkpoint-1"), _weights(out / "model")
    assert all(torch.equal(best[k], step1[k]) for k in step1)
    assert any(not torch.equal(best[k], last[k]) for k in step1)


def test_resume_continues_from_the_last_checkpoint(tmp_path, warm) -> None:
    model_dir, train, _ = warm
    out = tmp_path / "run"
    first = train_grpo(local_profile(out, model_name_or_path=str(model_dir), max_steps=2, **SMALL), train)
    assert first.steps == 2 and last_checkpoint(out).name == "checkpoint-2"
    spent = first.usd
    assert spent > 0
    resumed = train_grpo(local_profile(out, model_name_or_path=str(model_dir), max_steps=3, **SMALL), train, resume=True)
    # Only step 3 ran: the history starts after the checkpoint and the spend carried over.
    assert resumed.steps == 3 and [r["step"] for r in resumed.history] == [3.0]
    # The dollars and rollouts so far were restored from the checkpoint, not restarted at 0.
    assert resumed.usd >= spent and resumed.rollouts == first.rollouts + 8
    shutil.rmtree(out / "checkpoint-3")


def test_max_usd_stops_at_a_checkpoint(tmp_path, warm) -> None:
    model_dir, train, _ = warm
    out = tmp_path / "run"
    cfg = local_profile(out, model_name_or_path=str(model_dir), max_steps=5, max_usd=1e-9, **{**SMALL, "save_steps": 100})
    result = train_grpo(cfg, train)
    # It stops after the first step that spent anything (a step whose rollouts all fail to
    # parse makes no worker call), well before max_steps, with a checkpoint of that step.
    assert result.stop_reason == "budget" and result.usd > 1e-9 and result.steps < 5
    assert last_checkpoint(out) is not None and last_checkpoint(out).name == f"checkpoint-{result.steps}"


def test_recursion_rows_get_a_second_round_from_the_policy(tmp_path, warm) -> None:
    model_dir, train, _ = warm
    sunk = []
    cfg = local_profile(tmp_path / "run", model_name_or_path=str(model_dir), max_steps=1, recursion_fraction=1.0, **SMALL)
    train_grpo(cfg, train, sink=lambda t, step: sunk.append(t))
    firsts = [t for t in sunk if t.depth == 0]
    seconds = [t for t in sunk if t.parent_trace_id is not None]
    assert len(firsts) == 8
    # Every first round that parsed and ran got a second round, written by the trainer's model.
    ran = {t.trace_id for t in firsts if t.workflow is not None and t.steps}
    assert ran  # (seeded sampling: the same rollouts every run)
    assert {t.parent_trace_id for t in seconds if t.depth == 1} == ran
    assert all(t.conductor_prompt and "# Earlier workflow\nStep 0: " in t.conductor_prompt[-1].content
               for t in seconds if t.depth == 1)
    assert all("conductor" in t.pool for t in firsts)


def test_second_round_rows_put_the_second_rounds_text_in_the_loss(tmp_path, warm) -> None:
    """With every row a second round: its prompt shows a first round the policy wrote and ran, its
    completions are the trainer's samples, and each is run after that first round (depth
    1, no forced further round). (Whether a step moves the weights depends on the groups' rewards
    differing: the fixture's groups of 4 at temperature 0.5 often do not.)"""
    model_dir, train, _ = warm
    sunk = []
    cfg = local_profile(tmp_path / "run", model_name_or_path=str(model_dir), max_steps=1, second_round_fraction=1.0,
                        **SMALL)
    result = train_grpo(cfg, train, sink=lambda t, step: sunk.append(t))
    assert len(sunk) == 8 and all(t.depth == 1 and t.parent_trace_id is None for t in sunk)
    assert all("# Earlier workflow\nStep 0: Model " in t.conductor_prompt[-1].content for t in sunk)
    assert result.steps == 1 and result.rollouts == 8


def test_second_round_rows_show_first_rounds_the_current_policy_wrote(tmp_path, warm) -> None:
    """A second-round row's first round is rewritten by the policy being trained each time the row
    is drawn: its age (optimizer steps between the policy that wrote it and the step that trains on
    it) is at most 1 (accelerate fetches one batch ahead). Two problems, both drawn every step: a
    first round written once, before training or at a row's first draw, is 2 steps old at step 2."""
    model_dir, train, _ = warm
    sunk = []
    cfg = local_profile(tmp_path / "run", model_name_or_path=str(model_dir), max_steps=3, second_round_fraction=1.0,
                        **SMALL)
    result = train_grpo(cfg, train[:2], sink=lambda t, step: sunk.append(t))
    ages = [row["second_round_age"] for row in result.history]
    assert len(ages) == 3 and max(ages) <= 1, ages
    assert len(sunk) == 24 and all(t.depth == 1 for t in sunk)


def test_a_kl_reference_model_builds_for_the_conductor_model(tmp_path, warm) -> None:
    """`beta` > 0 (a KL term to the warm start, GRPOConfig's own field) makes TRL build a reference
    model from the config: the Conductor's own model type must load there too."""
    model_dir, train, _ = warm
    result = train_grpo(local_profile(tmp_path / "run", model_name_or_path=str(model_dir), max_steps=1, beta=0.04,
                                      **SMALL), train)
    assert result.steps == 1 and "kl" in result.history[0]
