"""`TrainResult` is one typed value from `train_grpo` to the flow: a chunk launched under
accelerate writes it (`conductor train --result`) and tasks/launch.py reads it back as the same
type, so no consumer reads a dict by key."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from conductor.cli.train import write_result
from conductor.training.result import TrainResult


def _result(**changes) -> TrainResult:  # noqa: ANN003
    base = TrainResult(model_dir=Path("run/best"), steps=3, stop_reason="chunk_end", usd=0.25, calls=12, rollouts=8,
                       wall_s=4.5, history=[{"step": 3.0, "reward": 0.5}], eval_history=[{"step": 3.0, "eval_accuracy": 0.5}],
                       best_eval_accuracy=0.5, best_step=3, samples=[{"question": "q", "correct": "True"}],
                       time_split={"steps": 3.0, "wall_step_s": 1.5}, simulated=True)
    return base.model_copy(update=changes)


def test_a_launched_chunks_result_file_reads_back_as_the_same_value(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    path = tmp_path / "chunks" / "to-step-3.result.json"
    write_result(_result(), path)
    back = TrainResult.from_json(path.read_text(encoding="utf-8"))
    assert back == _result(world_size=2)
    assert isinstance(back.model_dir, Path)


def test_only_rank_zero_writes_the_result(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    write_result(_result(), tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_a_stale_or_misspelt_result_is_refused() -> None:
    with pytest.raises(ValidationError):
        TrainResult.from_json(_result().to_json().replace('{"model_dir"', '{"usd_total": 1.0, "model_dir"'))
    with pytest.raises(ValidationError):
        TrainResult.from_json(_result().to_json().replace('"chunk_end"', '"done"'))


def test_the_next_chunk_runs_only_after_a_chunk_end_or_the_last_step() -> None:
    assert [_result(stop_reason=r).goes_on for r in ("chunk_end", "max_steps", "budget", "early_stopping")] == [
        True, True, False, False]
