"""Code problems of the bank, through the real sandboxed code verifier: each reference solution
passes its tests and each buggy program fails at least one. A sample of 32 problems covering every
task in both formats keeps this fast; all 600 of the default bank were checked once by hand."""

from __future__ import annotations

import dataclasses
import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from conductor.data.schema import Problem
from conductor.data.synthetic import generate_domain
from conductor.data.synthetic.code_items import build_code_problem
from conductor.data.synthetic.code_tasks import CODE_TASKS, TASKS_BY_NAME
from conductor.verify import verify

SAMPLE = 32


def fenced(code: str) -> str:
    return f"Here is my solution.\n\n```python\n{code}\n```\n"


@pytest.fixture(scope="module")
def sample() -> list[Problem]:
    problems = generate_domain("code", 600)
    # one problem per task, then the other format of as many tasks as fit: every task, both formats
    first: dict[str, Problem] = {}
    for p in problems:
        first.setdefault(p.meta["task"], p)
    other: dict[str, Problem] = {}
    for p in problems:
        if p.meta["format"] != first[p.meta["task"]].meta["format"]:
            other.setdefault(p.meta["task"], p)
    chosen = [*first.values(), *other.values()][:SAMPLE]
    assert {p.meta["task"] for p in chosen} == {t.name for t in CODE_TASKS}
    return chosen


def check(problem: Problem) -> list[str]:
    """Everything wrong with one problem, as readable lines."""
    problems = []
    verdict = verify(problem, fenced(problem.meta["reference_solution"]))
    if not verdict.correct:
        problems.append(f"{problem.meta['task']}/{problem.meta['format']}: reference fails: {verdict.reason}")
    for wrong in problem.meta["wrong_solutions"]:
        if verify(problem, fenced(wrong)).correct:
            problems.append(f"{problem.meta['task']}/{problem.meta['format']}: buggy program passes:\n{wrong}")
    return problems


def test_references_pass_and_buggy_programs_fail_in_the_sandbox(sample: list[Problem]) -> None:
    assert len(sample) >= 30
    assert {p.meta["format"] for p in sample} == {"stdin", "functional"}
    with ThreadPoolExecutor(max_workers=2) as pool:
        found = [line for lines in pool.map(check, sample) for line in lines]
    assert found == []


def test_tests_are_in_livecodebench_shape(sample: list[Problem]) -> None:
    for p in sample:
        assert p.tests and len(p.tests) >= 4
        kinds = {t.testtype for t in p.tests}
        assert kinds == {p.meta["format"]}
        if p.meta["format"] == "functional":
            assert p.meta["func_name"] in p.meta["reference_solution"]
            assert p.meta["starter_code"].startswith("class Solution:")
        else:
            assert "func_name" not in p.meta and "input()" in p.meta["reference_solution"]


def test_a_buggy_program_that_passes_every_test_is_refused() -> None:
    # a "wrong" body identical to the reference cannot be a distractor: generation must refuse it
    task = TASKS_BY_NAME["digit_sum"]
    lazy = dataclasses.replace(task, wrong=(task.ref, task.ref, task.wrong[0]))
    with pytest.raises(ValueError, match="buggy programs fail"):
        build_code_problem(random.Random(0), lazy)


def test_only_failing_buggy_programs_are_kept() -> None:
    task = TASKS_BY_NAME["count_multiples"]
    one_passes = dataclasses.replace(task, wrong=(*task.wrong, task.ref))
    built = build_code_problem(random.Random(1), one_passes)
    assert len(built.wrong) == len(task.wrong)
