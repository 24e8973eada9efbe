"""Math answers: extraction and math-verify equivalence."""

from __future__ import annotations

import pytest

from conductor.data.schema import Problem
from conductor.verify import verify
from conductor.answers import final_answer, last_boxed


def _p(answer: str) -> Problem:
    return Problem(id="m", source="math", domain="math", question="q", answer=answer)


@pytest.mark.parametrize(
    ("gold", "text", "ok"),
    [
        ("\\frac{1}{2}", "So x = 0.5.\nAnswer: 0.5", True),  # fraction vs decimal
        ("0.75", "The result is $\\boxed{\\frac{3}{4}}$.", True),  # decimal vs fraction
        ("\\frac{1}{3}", "\\boxed{0.33}", False),  # rounded is not equal
        ("12", "We get \\boxed{12 \\text{ cm}}", True),  # units
        ("90^\\circ", "The angle is \\boxed{90}", True),  # degrees
        ("[1,3)", "The solution set is \\boxed{[1, 3)}", True),  # interval
        ("[1,3)", "\\boxed{(1,3)}", False),  # wrong endpoint
        ("\\{1, 2\\}", "\\boxed{\\{2, 1\\}}", True),  # set, any order
        ("\\{1, 2\\}", "\\boxed{\\{1, 3\\}}", False),
        ("3\\sqrt{2}", "\\boxed{\\sqrt{18}}", True),
        ("x^2+1", "\\boxed{1 + x^2}", True),
        ("7", "Adding them gives 8.\nAnswer: 8", False),  # plain wrong
        ("7", "first \\boxed{3}, on reflection \\boxed{7}", True),  # the last box counts
        ("42", "<think>maybe \\boxed{41}</think>The answer is 42", True),
    ],
)
def test_math_equivalence(gold: str, text: str, ok: bool) -> None:
    verdict = verify(_p(gold), text)
    assert verdict.correct is ok, verdict
    assert verdict.method == "math-verify"


def test_nested_boxed_and_answer_line() -> None:
    assert last_boxed("x \\boxed{\\frac{a}{b}} y") == "\\frac{a}{b}"
    assert final_answer("work...\nFinal answer: 17.")[0] == "17"
    assert final_answer("1\n2\n  3  \n")[0] == "3"


def test_no_answer_and_empty() -> None:
    assert not verify(_p("3"), "").correct
    assert verify(_p("3"), "   ").reason == "empty answer"
    assert not verify(Problem(id="m", source="s", domain="math", question="q"), "3").correct


@pytest.mark.parametrize("text", ["\\boxed{9^{9^{9^{9}}}}", "\\boxed{10^{10^{10}}}", "Answer: 2^{99999}",
                                  "\\boxed{99999!}", "Answer: 9**9**9"])
def test_explosive_expressions_refused_fast_off_the_main_thread(text: str) -> None:
    # off the main thread math-verify has no timeout: sympy would evaluate these for minutes
    import threading
    import time

    out: list = []
    worker = threading.Thread(target=lambda: out.append(verify(_p("3"), text)))
    start = time.monotonic()
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - start < 10
    assert not out[0].correct and out[0].reason == "expression too large to compare"
    assert verify(_p("1024"), "\\boxed{2^{10}}").correct  # ordinary powers still compare
