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

    out: list = []
    worker = threading.Thread(target=lambda: out.append(verify(_p("3"), text)), daemon=True)
    worker.start()
    worker.join(120)  # a hang guard, not a speed bound: evaluating these takes sympy minutes to hours
    assert not worker.is_alive()
    assert not out[0].correct and out[0].reason == "expression too large to compare"
    assert verify(_p("1024"), "\\boxed{2^{10}}").correct  # ordinary powers still compare


def test_quick_compare_agrees_with_math_verify_on_the_synthetic_bank() -> None:
    """The sympy-free comparison of plain rationals (verify_math's fast path) gives math-verify's
    own verdict on every gold x gold and gold x distractor of the synthetic bank, and on the edge
    cases where math-verify's tolerance or parsing decides; where it cannot tell it says None."""
    from conductor.data.synthetic import generate_bank
    from conductor.verify.math_answers import equivalent, parse_gold, quick_compare
    from conductor.workers.simulated.answers import wrong_answers

    pairs = [("1/2", "\\frac{1}{2}"), ("\\frac{1}{3}", "0.333333"), ("-0", "0"), ("7", "007"), ("2", "2.0"),
             ("\\frac{2}{4}", "\\dfrac{1}{2}"), ("1000000", "1000001"), ("10000000000000001", "10000000000000000"),
             ("\\frac{333333}{1000000}", "\\frac{1}{3}"), ("-\\frac{3}{4}", "\\frac{3}{4}"), ("5", "\\frac{10}{0}")]
    for p in generate_bank(300, seed=3):
        if p.domain == "math" and p.answer:
            pairs += [(p.answer, p.answer)] + [(p.answer, w) for w in wrong_answers(p)]
    decided = 0
    for gold, value in pairs:
        quick = quick_compare(gold, value)
        if quick is None:
            continue
        decided += 1
        assert quick == equivalent(parse_gold(gold), parse_gold(value)), (gold, value, quick)
    assert decided > len(pairs) // 2  # the fast path covers most of the bank, not a corner of it
    assert quick_compare("\\frac{1}{3}", "0.333333") is None  # a decimal: math-verify's tolerance decides
    assert quick_compare("\\frac{333333}{1000000}", "\\frac{1}{3}") is None  # too close to call without it
    assert quick_compare("x + 1", "1 + x") is None


def test_verify_math_fast_path_gives_the_same_verdicts() -> None:
    from conductor.verify.math_answers import verify_math

    assert verify_math("-\\frac{11}{21}", "So $\\boxed{-\\dfrac{11}{21}}$.").correct
    wrong = verify_math("-\\frac{11}{21}", "So $\\boxed{-\\frac{5}{4}}$.")
    assert not wrong.correct and wrong.extracted == "-\\frac{5}{4}" and "differs from" in wrong.reason
    assert verify_math("185", "The final answer is $\\boxed{185}$.").correct
    assert not verify_math("185", "The final answer is $\\boxed{186}$.").correct


def test_a_gold_parse_that_failed_once_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference answer whose parse raised (or timed out) under load is parsed again next time:
    keeping the empty result would make the gold unparseable, and every answer wrong, for the
    process's life."""
    import conductor.verify.math_answers as ma

    ma.clear_parses()
    real = ma.parse
    calls = {"n": 0}

    def flaky(text, **kw):  # noqa: ANN001, ANN003
        calls["n"] += 1
        if calls["n"] == 1:
            raise TimeoutError("parse timed out")
        return real(text, **kw)

    monkeypatch.setattr(ma, "parse", flaky)
    gold = "\\frac{7}{13} + x"
    assert ma.parse_gold(gold) == []
    assert ma.parse_gold(gold) != []
