"""A production night on a real pool, offline: the nightly flow with the production profile (its
code path and the paper's hyperparameters, shrunk only in size: the tiny Conductor, a few
rollouts) over a pool of the official OpenAI, Anthropic and Google SDK clients talking to loopback
HTTP servers that stand in for the providers. It trains, evaluates, gates and registers; every
run it leaves says simulated = false; and its dollar budget stops training cleanly (a checkpoint,
a registered model, the rest of the night) after the first step. Curation is off: production
curation reads the pinned hub data sets, and the night's problems come from the generated bank."""

from __future__ import annotations

import uuid
from pathlib import Path

import mlflow
import pytest

from conductor.training.config import local_profile
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.warm import warm_started_tiny
from tests.loopback import (ANTHROPIC_MESSAGES, OPENAI_CHAT, LoopbackServer, Reply, anthropic_message, gemini_path,
                            gemini_response, openai_chat)
from warehouse.store import TraceStore

KEYS = {"OPENAI_API_KEY": "sk-loopback-openai", "ANTHROPIC_API_KEY": "sk-ant-loopback", "GEMINI_API_KEY": "loopback-g"}
# The production profile's own settings, but for its size: the tiny model on CPU, 2 x 2 rollouts.
SMALL = {"num_generations": 2, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 1,
         "max_completion_length": 48, "activation_checkpointing": False, "few_shot_examples": False,
         "eval_every": 0, "validation_problems": 2, "use_vllm": False}


def _pool(tmp: Path, url: str) -> Path:
    path = tmp / "loopback.yaml"
    path.write_text(f"""name: loopback
prices_checked: 2026-11-20
workers:
  - {{id: w-openai, provider: openai, model: gpt-5, prices: {{input: 1.25, output: 10.0}},
      options: {{base_url: "{url}/v1"}}}}
  - {{id: w-anthropic, provider: anthropic, model: claude-sonnet-4-5, prices: {{input: 3.0, output: 15.0}},
      options: {{base_url: "{url}"}}}}
  - {{id: w-google, provider: google, model: gemini-2.5-pro, prices: {{input: 1.25, output: 10.0}},
      options: {{base_url: "{url}"}}}}
""")
    return path


@pytest.fixture(scope="module")
def night(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    from flows.nightly import NightConfig, nightly_flow

    tmp = tmp_path_factory.mktemp("production-night")
    mp = pytest.MonkeyPatch()
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    mp.setenv("MLFLOW_TRACKING_URI", uri)
    for name, value in KEYS.items():
        mp.setenv(name, value)
    mp.delenv("GOOGLE_API_KEY", raising=False)
    # registry/ points mlflow's process-wide URIs at this store: put them back afterwards
    import mlflow.tracking._model_registry.utils as registry_uris
    import mlflow.tracking._tracking_service.utils as tracking_uris

    mp.setattr(tracking_uris, "_tracking_uri", tracking_uris._tracking_uri)
    mp.setattr(registry_uris, "_registry_uri", registry_uris._registry_uri)
    loop = LoopbackServer()
    loop.on(OPENAI_CHAT, lambda r: Reply(body=openai_chat("42", prompt_tokens=900, completion_tokens=300)))
    loop.on(ANTHROPIC_MESSAGES, lambda r: Reply(body=anthropic_message("42", input_tokens=900, output_tokens=300)))
    loop.on(gemini_path("gemini-2.5-pro"), lambda r: Reply(body=gemini_response("42", prompt_tokens=900,
                                                                                 candidates_tokens=300)))
    train = take_per_domain(bank_splits().train, 8)
    model = warm_started_tiny(local_profile(tmp / "warm", sft_problems=8, sft_epochs=1.0, sft_copies=1), train)
    try:
        with loop:
            pool = _pool(tmp, loop.url)
            config = NightConfig(profile="production", steps=3, chunk_steps=1, heldout_problems=4, baselines=[],
                                 pool_file=pool, max_usd=0.0, curate=False, concurrency=2,
                                 training_overrides={**SMALL, "model_name_or_path": str(model)},
                                 run_key=f"production-{uuid.uuid4().hex[:8]}")
            summary = nightly_flow(config)
            yield {"summary": summary, "uri": uri, "home": prefect_harness, "loop": loop, "pool": pool,
                   "requests": list(loop.requests)}
    finally:
        mp.undo()


def test_the_production_night_trains_evaluates_gates_and_registers_on_the_real_pool(night) -> None:  # noqa: ANN001
    s = night["summary"]
    assert s.night.profile == "production" and s.evaluated.simulated is False
    assert s.trained.version == "1" and s.trained.started_from == "SFT warm start"
    client = mlflow.MlflowClient(tracking_uri=night["uri"], registry_uri=night["uri"])
    version = client.get_model_version("conductor", s.trained.version)
    assert version.tags["gate.decision"] in ("promoted", "rejected") and version.tags["gate.promotion_id"] == s.decision.promotion_id
    params = client.get_run(s.trained.run_id).data.params
    # the production profile's hyperparameters, on the loopback pool
    assert float(params["learning_rate"]) == 1e-6 and params["lr_scheduler_type"].endswith("cosine")
    assert params["pool_file"] == str(night["pool"])
    # the evaluation called every provider through its SDK, with its key
    seen = " ".join(str(r.headers) for r in night["requests"])
    assert all(key in seen for key in KEYS.values())


def test_every_run_of_the_night_says_simulated_false(night) -> None:  # noqa: ANN001
    s = night["summary"]
    with TraceStore(night["home"] / "warehouse.duckdb", read_only=True) as store:
        runs = store.query(
            "SELECT kind, simulated, count(*) AS n FROM runs WHERE run_id = ? OR run_id = ?"
            " OR params->>'evaluation_id' = ? OR mlflow_run_id = ? OR (kind = 'nightly' AND run_id = ?)"
            " GROUP BY kind, simulated ORDER BY kind",
            [s.evaluated.evaluation_id, s.night.nightly_run_id, s.evaluated.evaluation_id, s.trained.run_id, s.night.nightly_run_id]).to_pylist()
        traces = store.query("SELECT count(*) AS n FROM v_question_outcomes WHERE evaluation_id = ?",
                             [s.evaluated.evaluation_id]).to_pylist()
    assert {(r["kind"], r["simulated"]) for r in runs} == {("eval", False), ("evaluation", False), ("nightly", False),
                                                         ("train", False)}, runs
    assert traces == [{"n": 2 * 4}]  # challenger and the template baseline, 4 held-out problems each


def test_the_dollar_budget_stops_training_cleanly(night) -> None:  # noqa: ANN001
    """max_usd = $0: spent once the first step's rollouts are in, so training stops after step 1
    of 3 with a checkpoint, and the night goes on to register, evaluate and gate that model."""
    s = night["summary"]
    client = mlflow.MlflowClient(tracking_uri=night["uri"], registry_uri=night["uri"])
    metrics = client.get_run(s.trained.run_id).data.metrics
    assert metrics["steps_done"] == 1 and len(client.get_metric_history(s.trained.run_id, "reward")) == 1
    training = night["home"] / "nightly" / "production" / s.night.run_key / "training"
    assert sorted(p.name for p in training.glob("checkpoint-*")) == ["checkpoint-1"]
    assert s.decision.promotion_id and s.evaluated.evaluation_id
