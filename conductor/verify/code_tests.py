"""Code answers: extract the program as LiveCodeBench does and run the problem's tests in the sandbox.

LiveCodeBench semantics: stdin/stdout tests compare output line by line after stripping, lines that
differ as text may still match as lists of decimals; call-based tests (`meta["func_name"]`) call
`Solution().<func>(*args)` with one JSON arg per input line and compare JSON values; the first failing
test stops the run. BigCodeBench: its `meta["test"]` unittest module runs against the solution.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from conductor.data.schema import Problem, TestCase
from conductor.sandbox import Job, Limits, RunResult, run
from conductor.answers import strip_think
from conductor.verify.harness import BCB_HARNESS, CALL_HARNESS, LCB_IMPORTS
from conductor.verify.verdict import Verdict

DEFAULT_LIMITS = Limits(wall_s=6.0, memory_mb=1024)
BCB_LIMITS = Limits(wall_s=60.0, memory_mb=4096, nproc=64)


def extract_code(text: str) -> str | None:
    """The last fenced block (LiveCodeBench's rule: between the last two lines starting with ```)."""
    lines = strip_think(text).split("\n")
    fences = [i for i, line in enumerate(lines) if line.strip().startswith("```")]
    if len(fences) < 2:
        return None
    code = "\n".join(lines[fences[-2] + 1 : fences[-1]])
    return code if code.strip() else None


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except InvalidOperation:
        return None


def stdout_matches(got: str, expected: str) -> bool:
    got_lines, exp_lines = got.strip().split("\n"), expected.strip().split("\n")
    if len(got_lines) != len(exp_lines):
        return False
    for g, e in zip(got_lines, exp_lines, strict=True):
        g, e = g.strip(), e.strip()
        if g == e:
            continue
        gd, ed = _decimals(g), _decimals(e)
        if gd is None or ed is None or gd != ed:
            return False
    return True


def _show(value: str, limit: int = 80) -> str:
    value = value.strip()
    return value if len(value) <= limit else value[:limit] + "..."


def _failure(result: RunResult) -> str | None:
    if result.ok:
        return None
    return result.describe()


def run_stdin_test(code: str, test: TestCase, limits: Limits) -> str | None:
    """None when the test passes, else why it failed."""
    result = run(Job(code=LCB_IMPORTS + code, stdin=test.input, limits=limits))
    if (why := _failure(result)) is not None:
        return why
    if not stdout_matches(result.stdout, test.output):
        return f"wrong output: got {_show(result.stdout)!r}, expected {_show(test.output)!r}"
    return None


def run_call_test(code: str, func_name: str, test: TestCase, limits: Limits) -> str | None:
    harness = CALL_HARNESS.replace("FUNC_NAME", repr(func_name))
    result = run(Job(code=harness, stdin=test.input, files={"solution.py": LCB_IMPORTS + code}, limits=limits))
    if (why := _failure(result)) is not None:
        return why
    try:
        got: Any = json.loads(result.stdout.strip().splitlines()[-1])
        expected: Any = json.loads(test.output)
    except (json.JSONDecodeError, IndexError) as exc:
        return f"unreadable result ({exc})"
    if got != expected or type(got) is not type(expected) and not _both_numbers(got, expected):
        return f"wrong result: got {_show(json.dumps(got))}, expected {_show(test.output)}"
    return None


def _both_numbers(a: Any, b: Any) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))


def run_bcb_test(code: str, test_module: str, limits: Limits) -> str | None:
    result = run(Job(code=BCB_HARNESS, files={"solution.py": code, "bcb_test.py": test_module}, limits=limits))
    if (why := _failure(result)) is not None:
        return why
    try:
        report = json.loads(result.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return "no test report"
    if not isinstance(report, dict) or not isinstance(report.get("run"), int):
        return "no test report"
    if report["run"] == 0:
        return "no tests ran"
    if report.get("failed") != 0:
        return f"{report.get('failed')} of {report['run']} tests failed: {str(report.get('first', ''))[:300]}"
    return None


def verify_code(problem: Problem, answer_text: str, limits: Limits | None = None) -> Verdict:
    code = extract_code(answer_text)
    if code is None:
        return Verdict(correct=False, extracted=None, reason="no fenced code block", method="sandbox")
    if "test" in problem.meta and isinstance(problem.meta["test"], str):
        why = run_bcb_test(code, problem.meta["test"], limits or BCB_LIMITS)
        return Verdict(correct=why is None, extracted=code, reason=why or "all tests passed",
                       method="sandbox-unittest")
    tests = problem.tests or []
    if not tests:
        return Verdict(correct=False, extracted=code, reason="problem has no tests", method="sandbox")
    limits = limits or DEFAULT_LIMITS
    func_name = problem.meta.get("func_name") or None
    for i, test in enumerate(tests):
        if test.testtype == "functional" or func_name:
            if not func_name:
                return Verdict(correct=False, extracted=code, reason="functional test without func_name",
                               method="sandbox")
            why = run_call_test(code, func_name, test, limits)
        else:
            why = run_stdin_test(code, test, limits)
        if why is not None:
            return Verdict(correct=False, extracted=code, reason=f"test {i + 1}/{len(tests)}: {why}",
                           method="sandbox")
    return Verdict(correct=True, extracted=code, reason=f"all {len(tests)} tests passed", method="sandbox")
