"""The verdict memo (conductor/verify/memo.py): a remembered verdict is the verdict an uncached call
gives, keyed by problem id and grading data, answer text and code limits; errors, timeouts and
sandbox failures are never remembered; the memo is bounded; identical answers graded together are
graded once."""

from __future__ import annotations

import asyncio
import threading

import pytest

import conductor.verify as verify_mod
from conductor.data.schema import Problem, TestCase
from conductor.sandbox import Limits, RunResult
from conductor.training.problems import bank_splits
from conductor.verify import VERDICTS, averify, verify
from conductor.verify import math_answers
from conductor.verify.memo import VerdictCache, memoizable
from conductor.verify.verdict import Verdict
from conductor.workers.simulated.answers import render_answer, wrong_answers

MATH = Problem(id="m-1", source="test", domain="math", question="q", answer="\\frac{1}{2}")
CHOICE = Problem(id="c-1", source="test", domain="choice", question="q", answer="B", choices=["w", "x", "y", "z"])
CODE = Problem(id="s-1", source="test", domain="code", question="add",
               tests=[TestCase(input="1 2\n", output="3\n"), TestCase(input="2 2\n", output="4\n")])
FAST = Limits(wall_s=5.0, memory_mb=512)
ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    VERDICTS.clear()
    math_answers.clear_parses()


@pytest.fixture
def grades(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Counts real gradings (the uncached path) by (problem id, answer)."""
    seen: list[tuple[str, str]] = []
    real = verify_mod._grade

    def counted(problem: Problem, text: str, limits: Limits | None) -> Verdict:
        seen.append((problem.id, text))
        return real(problem, text, limits)

    monkeypatch.setattr(verify_mod, "_grade", counted)
    return seen


def _uncached(problem: Problem, text: str, limits: Limits | None = None) -> Verdict:
    VERDICTS.clear()
    math_answers.clear_parses()
    return verify_mod._grade(problem, text, limits)


def test_remembered_verdicts_equal_uncached_ones_on_the_bank() -> None:
    # right and plausible wrong answers, as the simulated pool writes them, over every domain but code
    problems = [p for p in bank_splits().test if p.domain != "code"]
    picked = [p for d in ("math", "choice", "freeform") for p in [q for q in problems if q.domain == d][:8]]
    cases = []
    for p in picked:
        cases.append((p, render_answer(p, p.answer or "")))
        cases += [(p, render_answer(p, w)) for w in wrong_answers(p)[:2]]
    expected = [_uncached(p, t) for p, t in cases]
    assert any(v.correct for v in expected) and any(not v.correct for v in expected)
    VERDICTS.clear()
    math_answers.clear_parses()
    first = [verify(p, t) for p, t in cases]  # fills the memo (and the parse cache)
    assert len(VERDICTS) > 0
    again = [verify(p, t) for p, t in cases]  # from the memo
    assert first == expected and again == expected


def test_a_hit_does_not_grade_again(grades: list) -> None:
    assert verify(MATH, "so $\\boxed{0.5}$").correct
    assert verify(MATH, "so $\\boxed{0.5}$").correct
    assert not verify(CHOICE, "Answer: C").correct
    assert not verify(CHOICE, "Answer: C").correct
    assert grades == [("m-1", "so $\\boxed{0.5}$"), ("c-1", "Answer: C")]
    assert VERDICTS.hits == 2


def test_keyed_by_id_reference_and_answer_text(grades: list) -> None:
    assert verify(MATH, "\\boxed{1/2}").correct
    # same id, another reference answer: graded again, and now wrong
    changed = MATH.model_copy(update={"answer": "\\frac{1}{3}"})
    assert not verify(changed, "\\boxed{1/2}").correct
    # same grading data under another id: graded again (ids are part of the key)
    assert verify(MATH.model_copy(update={"id": "m-2"}), "\\boxed{1/2}").correct
    # another answer text, same value: graded again
    assert verify(MATH, "\\boxed{0.5}").correct
    # same id and letter, another gold letter
    assert verify(CHOICE, "Answer: B").correct
    assert not verify(CHOICE.model_copy(update={"answer": "C"}), "Answer: B").correct
    assert len(grades) == 6


def test_code_is_keyed_by_limits(grades: list) -> None:
    assert verify(CODE, ADD, code_limits=FAST).correct
    assert verify(CODE, ADD, code_limits=FAST).correct
    assert verify(CODE, ADD, code_limits=Limits(wall_s=4.0, memory_mb=512)).correct
    assert len(grades) == 2


def test_exceptions_are_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def broken(problem: Problem, text: str, limits: Limits | None) -> Verdict:
        calls.append(1)
        raise RuntimeError("infrastructure down")

    monkeypatch.setattr(verify_mod, "_grade", broken)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            verify(MATH, "\\boxed{1/2}")
    assert len(calls) == 2 and len(VERDICTS) == 0


def test_sandbox_failures_are_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    # the sandbox cannot start a program (an infrastructure fault, injected at the run seam)
    from conductor.verify import code_tests

    runs: list[int] = []

    def failing(job: object, iso: object = None) -> RunResult:
        runs.append(1)
        return RunResult(returncode=None, stdout="", stderr="", error="could not start bwrap")

    monkeypatch.setattr(code_tests, "run", failing)
    for _ in range(2):
        verdict = verify(CODE, ADD, code_limits=FAST)
        assert not verdict.correct and "sandbox error" in verdict.reason
    assert len(runs) == 2 and len(VERDICTS) == 0
    # the same program once the sandbox works again: right, and remembered from then on
    monkeypatch.undo()
    assert verify(CODE, ADD, code_limits=FAST).correct and len(VERDICTS) > 0


async def test_timeouts_are_not_remembered_through_averify() -> None:
    slow = "```python\nimport time\ntime.sleep(30)\n```"
    quick = Limits(wall_s=0.5, memory_mb=256)
    first = await averify(CODE, slow, code_limits=quick)
    assert "timed out" in first.reason
    assert VERDICTS.get(verify_mod._key(CODE, slow, quick)) is None


def test_math_under_a_main_thread_timeout_that_could_have_fired_is_not_remembered(
        monkeypatch: pytest.MonkeyPatch, grades: list) -> None:
    monkeypatch.setattr(verify_mod, "TIMEOUT_S", 0)  # every computation "ran as long as the timeout"
    verify(MATH, "\\boxed{1/2}")
    verify(MATH, "\\boxed{1/2}")
    assert len(grades) == 2
    # off the main thread math-verify runs without its SIGALRM timeout: pure, so remembered
    for _ in range(2):
        t = threading.Thread(target=verify, args=(MATH, "\\boxed{2/4}"))
        t.start()
        t.join()
    assert len(grades) == 3


def test_memoizable_rules() -> None:
    ok = Verdict(correct=False, reason="test 1/2: wrong output", method="sandbox")
    assert memoizable(CODE, ok, elapsed_s=1.0, timeout_s=None)
    for why in ("timed out after 0.5s", "sandbox error: spawn failed", "killed by signal SIGKILL"):
        assert not memoizable(CODE, ok.model_copy(update={"reason": f"test 1/2: {why}"}), elapsed_s=0, timeout_s=None)
    assert not memoizable(MATH, Verdict(correct=False, method="math-verify"), elapsed_s=5.0, timeout_s=5)
    assert memoizable(MATH, Verdict(correct=False, method="math-verify"), elapsed_s=4.9, timeout_s=5)
    assert not memoizable(MATH, Verdict(correct=False, method="error"), elapsed_s=0, timeout_s=None)


def test_the_cache_is_a_bounded_lru() -> None:
    cache = VerdictCache(maxsize=3)
    v = [Verdict(correct=bool(i % 2), reason=str(i)) for i in range(5)]
    for i in range(3):
        cache.put(f"k{i}", v[i])
    assert cache.get("k0") == v[0]  # k0 is now the most recent
    cache.put("k3", v[3])
    cache.put("k4", v[4])
    assert len(cache) == 3
    assert cache.get("k1") is None and cache.get("k2") is None  # the least recently used went first
    assert [cache.get(k) for k in ("k0", "k3", "k4")] == [v[0], v[3], v[4]]
    with pytest.raises(ValueError, match="at least one"):
        VerdictCache(maxsize=0)


def test_the_process_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(VERDICTS, "maxsize", 4)
    for n in range(10):
        verify(CHOICE, f"Answer: {'ABCD'[n % 4]} ({n})")
    assert len(VERDICTS) == 4


def test_parse_cache_hands_out_copies() -> None:
    first = math_answers.parse_gold("\\frac{1}{2}")
    first.append("junk")
    assert math_answers.parse_gold("\\frac{1}{2}") == first[:-1]


async def test_identical_answers_graded_together_are_graded_once(
        grades: list, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []  # answers handed to the thread pool
    real = verify_mod.verify

    def counted(problem: Problem, text: str, **kw: object) -> Verdict:
        sent.append(text)
        return real(problem, text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(verify_mod, "verify", counted)
    texts = ["\\boxed{1/2}"] * 8 + ["\\boxed{1/3}"] * 8
    verdicts = await asyncio.gather(*(averify(MATH, t) for t in texts))
    assert [v.correct for v in verdicts] == [True] * 8 + [False] * 8
    assert sorted(grades) == [("m-1", "\\boxed{1/2}"), ("m-1", "\\boxed{1/3}")]
    assert sorted(sent) == ["\\boxed{1/2}", "\\boxed{1/3}"]  # one trip to the pool per distinct answer
    # remembered now: answered on the event loop, no trip at all
    assert (await averify(MATH, "\\boxed{1/2}")).correct and len(sent) == 2


async def test_an_error_reaches_every_waiter_and_is_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def broken(problem: Problem, text: str, limits: Limits | None) -> Verdict:
        calls.append(1)
        raise RuntimeError("infrastructure down")

    monkeypatch.setattr(verify_mod, "_grade", broken)
    out = await asyncio.gather(*(averify(MATH, "\\boxed{1/2}") for _ in range(4)), return_exceptions=True)
    assert all(isinstance(o, RuntimeError) for o in out) and len(calls) == 1
    with pytest.raises(RuntimeError):
        await averify(MATH, "\\boxed{1/2}")
    assert len(calls) == 2 and len(VERDICTS) == 0
