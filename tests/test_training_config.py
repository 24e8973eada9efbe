"""The typed config's profiles and the pre-spend estimate."""

from __future__ import annotations

from dataclasses import fields

import pytest

from typer.testing import CliRunner

from conductor.cli.main import app
from conductor.training.config import ConductorTrainingConfig, local_profile, production_profile, small_real_profile
from conductor.training.estimate import (
    REAL_GRPO_STEP_S,
    REAL_GRPO_STEP_S_GPU,
    REAL_SFT_STEP_S,
    REAL_SFT_STEP_S_GPU,
    estimate,
)
from trl import GRPOConfig


def test_every_conductor_field_is_described() -> None:
    ours = {f.name for f in fields(ConductorTrainingConfig)} - {f.name for f in fields(GRPOConfig)}
    assert {"pool_file", "randomized_pools", "recursion_fraction", "recursion_discount", "cost_weight", "max_usd"} <= ours
    assert all(f.metadata.get("help") for f in fields(ConductorTrainingConfig) if f.name in ours)


def test_production_is_the_papers_settings(tmp_path) -> None:
    c = production_profile(tmp_path)
    assert (c.learning_rate, c.lr_scheduler_type.value if hasattr(c.lr_scheduler_type, "value") else c.lr_scheduler_type) == (1e-6, "cosine")
    assert (c.epsilon, c.beta, c.temperature, c.max_completion_length) == (0.2, 0.0, 1.0, 1024)
    assert c.num_generations == 64 and c.per_device_train_batch_size * c.gradient_accumulation_steps == 256
    assert c.model_name_or_path == "Qwen/Qwen2.5-7B-Instruct" and c.recursion_discount == 0.25 and c.cost_weight == 0.0


def test_paper_scale_estimate_is_about_154k_calls(tmp_path) -> None:
    e = estimate(production_profile(tmp_path))
    assert e.rollouts == 200 * 256
    assert e.calls == 153_600
    assert e.usd > 0 and e.wall_s > 0
    local = estimate(local_profile(tmp_path, max_steps=10))
    assert local.rollouts == 10 * 32 and local.calls < e.calls
    # the local profile's simulated workers answer at once, so their wait is not projected
    waiting = estimate(local_profile(tmp_path, max_steps=10, simulated_latency_scale=1.0))
    assert waiting.wall_s == pytest.approx(local.wall_s + 10 * 2.0)


def test_small_real_estimate_uses_its_own_measured_step_times(tmp_path) -> None:
    """The real 135M model's steps are not the tiny model's (1.9 s) though its run dir holds an `sft`."""
    c = small_real_profile(tmp_path, warm_start_from=str(tmp_path / "smollm2"), max_steps=10, sft_problems=64)
    assert c.model_name_or_path == str(tmp_path / "sft") and c.lora_r > 0 and c.max_completion_length == 160
    e = estimate(c)
    assert e.rollouts == 10 * 4
    assert e.wall_s == pytest.approx(10 * REAL_GRPO_STEP_S + 16 * REAL_SFT_STEP_S)  # 64 examples, 4 a step
    # on a GPU (use_cpu false) the H200's measured step times: 200 steps in ~14 min, not ~9.5 h
    gpu = estimate(small_real_profile(tmp_path, warm_start_from=str(tmp_path / "smollm2"), max_steps=200,
                                      sft_problems=64, use_cpu=False))
    assert gpu.wall_s == pytest.approx(200 * REAL_GRPO_STEP_S_GPU + 16 * REAL_SFT_STEP_S_GPU)


def test_cli_estimate_prints_and_trains_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CONDUCTOR_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["train", "--profile", "production", "--estimate"])
    assert result.exit_code == 0, result.output
    assert "153,600" in result.output and "$" in result.output
    assert not (tmp_path / "training").exists()
