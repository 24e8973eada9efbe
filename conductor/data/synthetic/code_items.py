"""Turn a CodeTask into a LiveCodeBench-style problem: stdin/stdout or call-based (`Solution().f`),
tests whose expected outputs come from the reference, and buggy programs each checked here to fail
at least one of those tests (by the verifier's own comparison), so a "wrong" answer is really wrong.

Only our own task bodies run here (in-process, to compute outputs); worker-written code never does.
"""

from __future__ import annotations

import copy
import json
import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from conductor.data.schema import TestCase
from conductor.data.synthetic.code_tasks import SHAPES, Args, CodeTask
from conductor.data.synthetic.phrasing import fill
from conductor.answers import stdout_matches

Mode = Literal["stdin", "functional"]
N_TESTS = 7

_RETURNS = {"int": "int", "bool": "bool", "list": "List[int]", "str": "str"}
_PRINT = {"int": "print(result)\n", "str": "print(result)\n", "bool": "print('Yes' if result else 'No')\n",
          "list": "print(*result)\n"}
_OUTPUT_WORDS: dict[str, tuple[str, ...]] = {
    "int": ("Print the answer.", "Output a single integer.", "Print one number: the result."),
    "bool": ("Print Yes if so, otherwise No.", "Output Yes or No.", "Answer Yes or No on one line."),
    "list": ("Print the values on one line, separated by spaces.", "Output the resulting numbers, space-separated.",
             "Print the elements in order, separated by single spaces."),
    "str": ("Print the resulting string.", "Output the string.", "Print the answer on one line."),
}
_RETURN_WORDS = {"int": "an integer", "bool": "a boolean", "list": "a list of integers", "str": "a string"}
_CALL_WORDS = (
    "Implement `{func}({args})` as a method of class `Solution`; it returns {ret}.",
    "Complete the method `Solution.{func}`, which takes {args} and returns {ret}.",
    "Write `class Solution` with a method `{func}(self, {args})` returning {ret}.",
)


@dataclass(frozen=True)
class CodeProblem:
    """What `generate` needs to build the Problem."""

    subject: str
    task: str
    mode: Mode
    statement: str
    func_name: str | None
    starter_code: str
    tests: list[TestCase]
    reference: str
    wrong: list[str]


def program(task: CodeTask, body: str, mode: Mode) -> str:
    shape = SHAPES[task.shape]
    if mode == "functional":
        params = ", ".join(f"{a}: {t}" for a, t in zip(shape.args, shape.annotations, strict=True))
        return (f"from typing import List\n\n\nclass Solution:\n    def {task.func_name}(self, {params}) -> "
                f"{_RETURNS[task.returns]}:\n" + textwrap.indent(body, "    "))
    args = ", ".join(shape.args)
    return f"def solve({args}):\n{body}\n\n{shape.read}result = solve({args})\n{_PRINT[task.returns]}"


def _function(task: CodeTask, body: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    exec(f"def f({', '.join(SHAPES[task.shape].args)}):\n{body}", namespace)  # our own task text only
    return namespace["f"]


def _render(task: CodeTask, value: Any, mode: Mode) -> str:
    if mode == "functional":
        return json.dumps(value)
    if task.returns == "bool":
        return "Yes\n" if value else "No\n"
    if task.returns == "list":
        return " ".join(map(str, value)) + "\n"
    return f"{value}\n"


def _outputs(task: CodeTask, body: str, inputs: list[Args], mode: Mode) -> list[str | None]:
    """What `body` gives on each input, rendered as the tests expect; None where it raises."""
    f = _function(task, body)
    out: list[str | None] = []
    for args in inputs:
        try:
            out.append(_render(task, f(*copy.deepcopy(args)), mode))
        except Exception:  # a buggy body may crash on an edge case: that is a failed test
            out.append(None)
    return out


def _same(got: str | None, expected: str, mode: Mode) -> bool:
    if got is None:
        return False
    if mode == "functional":
        return bool(json.loads(got) == json.loads(expected))
    return stdout_matches(got, expected)


def _test_input(task: CodeTask, args: Args, mode: Mode) -> str:
    if mode == "functional":
        return "\n".join(json.dumps(a) for a in args)
    return SHAPES[task.shape].stdin_text(args)


def _inputs(rng: random.Random, task: CodeTask) -> list[Args]:
    inputs: list[Args] = list(task.edges)
    for _ in range(50):  # a few random draws on top of the edge cases; skip repeats
        if len(inputs) >= N_TESTS:
            break
        args = task.draw(rng)
        if args not in inputs:
            inputs.append(args)
    rng.shuffle(inputs)
    return inputs


def build_code_problem(rng: random.Random, task: CodeTask) -> CodeProblem:
    mode: Mode = rng.choice(["stdin", "functional"])
    inputs = _inputs(rng, task)
    expected = _outputs(task, task.ref, inputs, mode)
    gold = [e for e in expected if e is not None]
    if len(gold) < len(expected):
        raise ValueError(f"code task {task.name}: the reference raised on one of its inputs")
    wrong = []
    for body in task.wrong:
        got = _outputs(task, body, inputs, mode)
        if any(not _same(g, e, mode) for g, e in zip(got, gold, strict=True)):
            wrong.append(program(task, body, mode))
    if len(wrong) < 2:
        raise ValueError(f"code task {task.name}: only {len(wrong)} buggy programs fail its tests")
    tests = [TestCase(input=_test_input(task, a, mode), output=o, testtype=mode) for a, o in zip(inputs, gold, strict=True)]
    return CodeProblem(subject=task.subject, task=task.name, mode=mode,
                       statement=_statement(rng, task, mode, tests[0]),
                       func_name=task.func_name if mode == "functional" else None,
                       starter_code=_starter(task) if mode == "functional" else "",
                       tests=tests, reference=program(task, task.ref, mode), wrong=wrong)


def _starter(task: CodeTask) -> str:
    """LeetCode's starter: the class and the method's signature, the body left empty."""
    shape = SHAPES[task.shape]
    params = ", ".join(f"{a}: {t}" for a, t in zip(shape.args, shape.annotations, strict=True))
    return f"class Solution:\n    def {task.func_name}(self, {params}) -> {_RETURNS[task.returns]}:\n        "


def _statement(rng: random.Random, task: CodeTask, mode: Mode, example: TestCase) -> str:
    shape = SHAPES[task.shape]
    parts = [rng.choice(task.statements)]
    if mode == "stdin":
        parts += [rng.choice(shape.describe), rng.choice(_OUTPUT_WORDS[task.returns])]
    else:
        args = ", ".join(f"{a}: {t}" for a, t in zip(shape.args, shape.annotations, strict=True))
        parts.append(fill(rng, _CALL_WORDS, func=task.func_name, args=args, ret=_RETURN_WORDS[task.returns]))
    if rng.random() < 0.6:
        inp = example.input.strip() if mode == "stdin" else ", ".join(example.input.splitlines())
        label = rng.choice(["Example", "Sample", "For example", "Sample case"])
        parts.append(f"{label}:\nInput: {inp}\nOutput: {example.output.strip()}")
    if rng.random() < 0.3:
        parts.insert(0, parts.pop(1))  # the format first, then the task, as some judges write it
    return "\n\n".join(parts)
