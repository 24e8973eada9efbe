"""The Conductor's prompt, its recursion prompt and the worker step message."""

from __future__ import annotations

from conductor.prompts import (
    EXAMPLES,
    PriorStep,
    conductor_messages,
    compact_round,
    recursion_messages,
    split_step_message,
    step_message,
)
from conductor.types import WorkerSpec
from conductor.kind_reader import kind_line
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
    assert user.content.endswith(f"Task:\nWhat is 2+2?\n\n{kind_line('What is 2+2?')}")
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
    msgs = recursion_messages("What is 2+2?", SPECS, prior, full_responses=True)
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


def test_recursion_prompt_shows_the_earlier_round_compactly():
    """Each step's number, worker, role and final answer, and how far the answers agree; no
    instruction and no full response (those reach round 2's workers through "prev")."""
    long = "Let me think. " * 50
    prior = [
        PriorStep(0, "a", "Solve it.", long + "The final answer is $\\boxed{4}$.", reads=()),
        PriorStep(1, "b", "Solve it.", long + "The final answer is $\\boxed{5}$.", reads=()),
        PriorStep(2, "a", "Solve it.", "So \\boxed{4}", reads=()),
        PriorStep(3, "b", "Compare them.", "Answer: \\boxed{4}", reads=(0, 1, 2)),
    ]
    last = recursion_messages("What is 2+2?", SPECS, prior)[-1].content
    assert ("# Earlier workflow\nStep 0: Model 0, attempt: 4\nStep 1: Model 1, attempt: 5\nStep 2: Model 0, attempt: 4\n"
            "Step 3: Model 1, comparison: 4\nAgreement: 3 of 4 steps give the final answer: most agree.") in last
    assert "Let me think" not in last and "Compare them." not in last
    assert '"prev"' in last and "model_id = [], subtasks = [], access_list = []" in last


def test_agreement_words_and_programs():
    code = "```python\nprint(1)\nprint(2)\n```"
    same = [PriorStep(i, "a", "x", code, reads=()) for i in range(2)]
    assert compact_round(same, SPECS).endswith("Agreement: 2 of 2 steps give the final answer: all agree.")
    assert "attempt: a program of 2 lines" in compact_round(same, SPECS)
    split = [PriorStep(0, "a", "x", "Answer: B", reads=()), PriorStep(1, "b", "y", "Answer: C", reads=(0,))]
    assert compact_round(split, SPECS).endswith("check: C\nAgreement: 1 of 2 steps give the final answer: they disagree.")
    silent = [PriorStep(0, "a", "x", "", reads=())]
    assert compact_round(silent, SPECS).endswith("no answer\nAgreement: the final step gave no answer.")
    reader = [PriorStep(0, "zed", "x", "Answer: B", reads=(), reads_prior=True)]
    assert compact_round(reader, SPECS).startswith("Step 0: zed, check of the round before: B")


def test_prompt_task_gives_back_the_task_without_the_lines_after_it() -> None:
    """Baselines (oracle, router, single-worker wording) find the task in the Conductor's prompt:
    the effort and format lines written after it are not part of it."""
    from conductor.effort import Effort
    from conductor.prompts import prompt_task

    task = "Name the official currency of China.\n\nA) Yen\nB) Renminbi\nC) Won\nD) Baht"
    for effort in (None, *Effort):
        user = conductor_messages(task, [], effort=effort)[-1].content
        assert prompt_task(user) == task, effort
    assert prompt_task("no task line here") == "no task line here"
