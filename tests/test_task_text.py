"""A multiple-choice problem is asked with its options: the Conductor and every worker see them
(found missing: both saw the bare question, so a letter could not be chosen from it, and a
question like "Name the official currency of China." read as a short-answer one)."""

from conductor.data.schema import Problem
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool
from conductor.config import DEFAULT_POOL_FILE
from conductor.types import Task
from conductor.workers.simulated.worker import ProblemBank

CHOICE = Problem(id="c-1", source="test", domain="choice", question="Name the official currency of China.",
                 answer="B", choices=["Yen", "Renminbi", "Won", "Baht"])
MATH = Problem(id="m-1", source="test", domain="math", question="What is 2 + 3?", answer="5")


def test_choice_task_text_lists_lettered_options():
    assert CHOICE.task_text == "Name the official currency of China.\n\nA) Yen\nB) Renminbi\nC) Won\nD) Baht"
    assert MATH.task_text == MATH.question


def test_workers_and_conductor_see_the_options():
    assert "B) Renminbi" in Task.of(CHOICE).question
    pool = training_pool(DEFAULT_POOL_FILE, [CHOICE])
    row = build_rows([CHOICE], pool, PoolSampling())[0]
    user = row_messages(row, pool, examples=False)[-1].content
    # the task with its options, then the format cue the options give (conductor/task_cues.py),
    # then the kind its characters read as (conductor/kind_reader.py)
    assert user.endswith("Task:\nName the official currency of China.\n\nA) Yen\nB) Renminbi\nC) Won\nD) Baht"
                         "\n\nFormat: lettered options; the answer is one letter.\n\nReads as: multiple choice.")


def test_simulated_bank_finds_a_problem_by_what_a_worker_sees():
    bank = ProblemBank([CHOICE, MATH])
    assert bank.find(Task.of(CHOICE).question) is CHOICE
    assert bank.find("Name the official currency of China.") is CHOICE  # typed bare at the CLI
    assert len(bank) == 2
