"""The Conductor's prompt, its recursion prompt and the worker step message."""

from __future__ import annotations

from conductor.prompts import (
    EXAMPLES,
    PriorStep,
    conductor_messages,
    recursion_messages,
    split_step_message,
    step_message,
)
from conductor.types import WorkerSpec
from conductor.workflow import Workflow, parse, render

SPECS = [
    WorkerSpec(id="a", provider="simulated", description="Great at algebra."),
    WorkerSpec(id="b", provider="simulated", description="Writes code."),
    WorkerSpec(id="conductor", provider="conductor"),
]


def test_conductor_prompt_states_format_pool_examples_and_question():
    system, user = conductor_messages("What is 2+2?", SPECS, max_steps=4)
    assert system.role == "system" and user.role == "user"
    for label in ("model_id", "subtasks", "access_list", "At most 4 steps"):
        assert label in system.content
    assert "Model 0: Great at algebra.\nModel 1: Writes code.\nModel 2: the Conductor itself" in user.content
    assert user.content.endswith("Task:\nWhat is 2+2?")
    assert len(EXAMPLES) == 4
    for _, _, wf in EXAMPLES:
        assert render(wf) in system.content


def test_examples_are_valid_workflows_and_out_of_domain():
    for question, _, wf in EXAMPLES:
        assert parse(render(wf), 3) == wf
    topics = " ".join(q for q, _, _ in EXAMPLES).lower()
    for word in ("diagnosis", "prove", "countdown", "csv"):
        assert word in topics


def test_examples_can_be_left_out():
    system, _ = conductor_messages("q", SPECS, examples=False)
    assert "Example 1" not in system.content


def test_recursion_prompt_shows_previous_work_and_how_to_keep_it():
    prior = [PriorStep(0, "a", "Solve it.", "It is 4.")]
    msgs = recursion_messages("What is 2+2?", SPECS, prior)
    last = msgs[-1].content
    assert "## Step 0 (a)\nInstruction: Solve it.\nResponse:\nIt is 4." in last
    assert "model_id = [], subtasks = [], access_list = []" in last
    empty = parse("model_id = []\nsubtasks = []\naccess_list = []", 3, allow_empty=True)
    assert isinstance(empty, Workflow) and empty.is_empty


def test_step_message_order_and_inverse():
    ctx = [PriorStep(0, "a", "Draft.", "draft text"), PriorStep(2, "b", "Test.", "tests pass")]
    [msg] = step_message("The task.", ctx, "Merge them.")
    c = msg.content
    assert c.index("The task.") < c.index("draft text") < c.index("tests pass") < c.index("Merge them.")
    parts = split_step_message(c)
    assert parts.task == "The task." and parts.instruction == "Merge them." and "## Step 2: response" in parts.context
    [alone] = step_message("T", [], "Do.")
    assert alone.content == "# Task\nT\n\n# Your instruction\nDo."
