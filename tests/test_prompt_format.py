"""A trained Conductor is prompted as it was trained: its directory's prompt format wins over a
caller's default (the nightly evaluated the tiny model with the few-shot examples it never saw,
and it wrote no parseable workflow)."""

from __future__ import annotations

import asyncio
import json

import pytest

from conductor.executor import RunOptions, plan_and_run
from conductor.models.prompt_format import PromptFormat, read_prompt_format, write_prompt_format
from conductor.planners import ModelPlanner, ScriptedPlanner
from conductor.data.schema import Problem
from conductor.types import Task
from tests.scripted import ScriptedWorker, pool_of, spec

TASK = Task.of(Problem(id="p1", source="test", domain="freeform", question="What is 6 times 7?", answer="42"))

ONE_STEP = 'model_id = [0]\nsubtasks = ["Solve it."]\naccess_list = [[]]'


def _system_prompt(planner: ScriptedPlanner, examples: bool) -> str:
    asyncio.run(plan_and_run(TASK, pool_of(ScriptedWorker(spec("w"))), planner, RunOptions(examples=examples)))
    return planner.prompts[-1][0].content


def test_a_planner_trained_without_examples_never_gets_them() -> None:
    plain = ScriptedPlanner([ONE_STEP])
    assert "Example 1" in _system_prompt(plain, examples=True)  # the caller's default, undeclared
    assert "Example 1" not in _system_prompt(ScriptedPlanner([ONE_STEP]), examples=False)  # the caller's choice

    declared = ScriptedPlanner([ONE_STEP])
    declared.few_shot_examples = False  # type: ignore[attr-defined]
    assert "Example 1" not in _system_prompt(declared, examples=True)

    wants = ScriptedPlanner([ONE_STEP])
    wants.few_shot_examples = True  # type: ignore[attr-defined]
    assert "Example 1" in _system_prompt(wants, examples=False)


def test_model_directory_round_trip(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{}")  # enough for a lazily loaded local worker
    assert read_prompt_format(tmp_path) is None
    assert ModelPlanner.from_directory(tmp_path).few_shot_examples is None
    write_prompt_format(tmp_path, PromptFormat(few_shot_examples=False))
    assert read_prompt_format(tmp_path) == PromptFormat(few_shot_examples=False)
    assert ModelPlanner.from_directory(tmp_path).few_shot_examples is False
    # the torch device the directory's model is loaded onto (benchmarks/real_conductor.py --device cuda)
    assert ModelPlanner.from_directory(tmp_path).worker.options.device == "cpu"
    assert ModelPlanner.from_directory(tmp_path, device="cuda").worker.options.device == "cuda"
    (tmp_path / "conductor_prompt.json").write_text(json.dumps({"other": 1}))
    with pytest.raises(ValueError, match="not a prompt format"):
        read_prompt_format(tmp_path)
