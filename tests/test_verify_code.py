"""Code answers with LiveCodeBench semantics (stdin and call-based) and BigCodeBench unittest modules."""

from __future__ import annotations

import pytest

from conductor.data.schema import Problem, TestCase
from conductor.sandbox import Limits
from conductor.verify import verify
from conductor.answers import stdout_matches
from conductor.verify.code_tests import extract_code

FAST = Limits(wall_s=2.0, memory_mb=512)

STDIN = Problem(id="s", source="lcb", domain="code", question="add", tests=[
    TestCase(input="1 2\n", output="3\n"), TestCase(input="2.5 0.25\n", output="2.75"),
])
CALL = Problem(id="c", source="lcb", domain="code", question="halve", meta={"func_name": "halve"}, tests=[
    TestCase(input="[4, 6]\n1", output="[2, 3]", testtype="functional"),
    TestCase(input="[10]\n2", output="[2.5]", testtype="functional"),
])


def fence(code: str) -> str:
    return f"Here you go.\n```python\n{code}\n```\nDone."


@pytest.mark.parametrize(
    ("code", "ok", "why"),
    [
        ("a, b = map(float, input().split())\nr = a + b\nprint(int(r) if r == int(r) else r)", True, "passed"),
        ("print(3)", False, "test 2/2: wrong output"),
        ("import time\ntime.sleep(30)", False, "timed out"),
        ("raise ValueError('nope')", False, "ValueError"),
        ("print('3.000')\n", False, "test 2/2"),  # decimal-equal on test 1, wrong on test 2
    ],
)
def test_stdin_program(code: str, ok: bool, why: str) -> None:
    verdict = verify(STDIN, fence(code), code_limits=FAST)
    assert verdict.correct is ok, verdict
    assert why in verdict.reason


@pytest.mark.parametrize(
    ("code", "ok", "why"),
    [
        ("class Solution:\n    def halve(self, xs: List[int], k: int) -> List[float]:\n"
         "        print('debug noise')\n        return [x / (2 * k) for x in xs]", True, "passed"),
        ("class Solution:\n    def halve(self, xs, k):\n        return [x // (2 * k) for x in xs]", False, "test 2/2"),
        ("class Solution:\n    def halve(self, xs, k):\n        return [str(x // 2) for x in xs]", False,
         "wrong result"),  # wrong type
        # a set is not JSON: reported as unserializable, so wrong
        ("class Solution:\n    def halve(self, xs, k):\n        return {1, 2}", False, "wrong result"),
        ("class Solution:\n    def halve(self, xs, k):\n        while True: pass", False, "timed out"),
        ("class Solution:\n    def halve(self, xs, k):\n        return xs[99]", False, "IndexError"),
        ("class Wrong:\n    pass", False, "KeyError"),
    ],
)
def test_call_based(code: str, ok: bool, why: str) -> None:
    verdict = verify(CALL, fence(code), code_limits=FAST)
    assert verdict.correct is ok, verdict
    assert why in verdict.reason


BCB = Problem(id="b", source="bigcodebench", domain="code", question="double", meta={"test": (
    "import unittest\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_small(self):\n        self.assertEqual(task_func(2), 4)\n"
    "    def test_type(self):\n        self.assertIsInstance(task_func(3), int)\n")})


@pytest.mark.parametrize(
    ("code", "ok"),
    [
        ("def task_func(x):\n    return 2 * x", True),
        ("def task_func(x):\n    return 2.0 * x", False),
        ("def task_func(x):\n    raise RuntimeError", False),
        ("import time\ndef task_func(x):\n    time.sleep(30)", False),
    ],
)
def test_bigcodebench(code: str, ok: bool) -> None:
    assert verify(BCB, fence(code), code_limits=FAST).correct is ok


def test_extract_code_is_lcb_rule() -> None:
    text = "```python\nfirst\n```\nthen\n```py\nsecond\n```"
    assert extract_code(text) == "second"
    assert extract_code("no fences") is None
    assert not verify(STDIN, "print(3)").correct


def test_stdout_matching() -> None:
    assert stdout_matches("1 2\n3\n\n", "1 2\n3")
    assert stdout_matches(" 0.50 \n", "0.5")
    assert not stdout_matches("1\n2", "1")
    assert not stdout_matches("abc", "abd")


def test_stdin_wrong_type_output() -> None:
    # a list printed where a number is expected; "3.0" for "3" is fine (decimals compare equal)
    assert not verify(STDIN, fence("print([3])"), code_limits=FAST).correct
    one = Problem(id="o", source="lcb", domain="code", question="q", tests=[TestCase(input="", output="3")])
    assert verify(one, fence("print('3.0')"), code_limits=FAST).correct


async def test_averify_runs_code_off_the_event_loop() -> None:
    import asyncio

    from conductor.verify import averify

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    tick = asyncio.create_task(ticker())
    slow = fence("import time\ntime.sleep(0.5)\na, b = map(float, input().split())\nr = a + b\n"
                 "print(int(r) if r == int(r) else r)")
    verdicts = await asyncio.gather(*(averify(STDIN, slow, code_limits=FAST) for _ in range(2)))
    tick.cancel()
    assert all(v.correct for v in verdicts)
    # The loop kept running while the programs ran (each sleeps 0.5 s): a blocking averify never
    # yields between the ticker's creation and its cancel, so it gives 0 ticks. No elapsed-time
    # floor: that only said the programs slept.
    assert ticks > 1, ticks


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from conductor.verify import code_tests

    calls: list[int] = []
    real = code_tests.run

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(code_tests, "run", counted)
    code_tests.CACHE.clear()
    return calls


def test_verdict_cache_hit_skips_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    right = fence("a, b = map(float, input().split())\nr = a + b\nprint(int(r) if r == int(r) else r)")
    first = verify(STDIN, right, code_limits=FAST)
    assert first.correct and first.isolation == "full" and len(calls) == 2  # one sandboxed run per test
    again = verify(STDIN, right, code_limits=FAST)
    assert again == first and len(calls) == 2  # served from the cache
    renamed = STDIN.model_copy(update={"id": "other", "question": "same tests, other words"})
    assert verify(renamed, right, code_limits=FAST) == first and len(calls) == 2


def test_verdict_cache_misses_on_another_program_or_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    code = "a, b = map(float, input().split())\nr = a + b\nprint(int(r) if r == int(r) else r)"
    right = fence(code)
    assert verify(STDIN, right, code_limits=FAST).correct and len(calls) == 2
    assert verify(STDIN, fence(code + "\n# edited"), code_limits=FAST).correct
    assert len(calls) == 4  # the edited program ran again
    harder = STDIN.model_copy(update={"tests": [TestCase(input="1 2\n", output="4\n")]})
    assert not verify(harder, right, code_limits=FAST).correct and len(calls) == 5
    assert verify(STDIN, right, code_limits=Limits(wall_s=3.0, memory_mb=512)).correct and len(calls) == 7


def test_timeouts_are_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    slow = fence("import time\ntime.sleep(30)")
    quick = Limits(wall_s=0.5, memory_mb=256)
    assert "timed out" in verify(STDIN, slow, code_limits=quick).reason
    assert "timed out" in verify(STDIN, slow, code_limits=quick).reason
    assert len(calls) == 2  # both ran: a timeout may be the machine's load, not the program


NUMPY_BCB = Problem(id="bn", source="bigcodebench", domain="code", question="sum", meta={"test": (
    "import unittest\nimport numpy as np\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_sum(self):\n        self.assertEqual(task_func(np.arange(5)), 10)\n")})


@pytest.mark.parametrize("launcher", ["pooled", "per-run"])
def test_bigcodebench_tasks_get_their_packages_and_still_no_project_file(
        launcher: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from conductor.config import REPO_ROOT
    from conductor.verify import code_tests

    monkeypatch.setenv("CONDUCTOR_SANDBOX_LAUNCHER", launcher)
    code_tests.CACHE.clear()
    ok = verify(NUMPY_BCB, fence("import numpy as np\ndef task_func(a):\n    return int(np.sum(a))"),
                code_limits=Limits(wall_s=20.0, memory_mb=2048))
    assert ok.correct and ok.isolation == "full", ok
    sample = REPO_ROOT / "conductor" / "data" / "samples" / "lcb_v6.jsonl"
    # our own packages are hidden in the mounted site-packages: not importable (a program that
    # would pass but imports conductor fails), and the project's files are not there to read
    for peek, error in (("import conductor\ndef task_func(a):\n    return 10\n", "ModuleNotFoundError"),
                        (f"def task_func(a):\n    return open({str(sample)!r}).read()[:5]\n", "FileNotFoundError")):
        hidden = verify(NUMPY_BCB, fence(peek), code_limits=Limits(wall_s=20.0, memory_mb=2048))
        assert not hidden.correct and error in hidden.reason, hidden
    # an LCB program gets the standard library only
    lcb = Problem(id="n", source="lcb", domain="code", question="q", tests=[TestCase(input="", output="1")])
    assert "ModuleNotFoundError" in verify(lcb, fence("import numpy\nprint(1)"), code_limits=FAST).reason
