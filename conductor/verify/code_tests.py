"""Code answers: extract the program as LiveCodeBench does and run the problem's tests in the sandbox.

LiveCodeBench semantics: stdin/stdout tests compare output line by line after stripping, lines that
differ as text may still match as lists of decimals; call-based tests (`meta["func_name"]`) call
`Solution().<func>(*args)` with one JSON arg per input line and compare JSON values; the first failing
test stops the run. BigCodeBench: its `meta["test"]` unittest module runs against the solution.

Verdicts are cached in-process by a hash of (tests, program, limits, isolation): the simulated pool
writes few distinct programs per problem and training grades thousands of answers. A verdict in
which a test timed out, the sandbox failed or a program was SIGKILLed is not cached (it may depend
on the machine's load). The cache is conductor.verify.memo.VERDICTS, shared with `verify`'s memo.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from conductor.data.schema import Problem, TestCase
from conductor.answers import stdout_matches, strip_think
from conductor.sandbox import Isolation, Job, Limits, RunResult, isolation, run
from conductor.sandbox_launch import site_packages
from conductor.verify.harness import BCB_HARNESS, CALL_HARNESS, LCB_IMPORTS
from conductor.verify.memo import VERDICTS, stable_code_verdict
from conductor.verify.verdict import Verdict

DEFAULT_LIMITS = Limits(wall_s=6.0, memory_mb=1024)
BCB_LIMITS = Limits(wall_s=60.0, memory_mb=4096, nproc=64)


CACHE = VERDICTS  # one LRU for every verdict (conductor/verify/memo.py); code runs keyed by `cache_key`


def cache_key(problem: Problem, code: str, limits: Limits | None, iso: Isolation) -> str:
    """What decides a verdict: the tests (not the problem's id or wording), the program, the limits
    and the isolation it runs under."""
    tests = [[t.input, t.output, t.testtype] for t in problem.tests or []]
    material = json.dumps([tests, problem.meta.get("func_name"), problem.meta.get("test"), code,
                           limits.model_dump() if limits else None, iso.level], sort_keys=True, default=str)
    return hashlib.sha256(material.encode()).hexdigest()


def extract_code(text: str) -> str | None:
    """The last fenced block (LiveCodeBench's rule: between the last two lines starting with ```)."""
    lines = strip_think(text).split("\n")
    fences = [i for i, line in enumerate(lines) if line.strip().startswith("```")]
    if len(fences) < 2:
        return None
    code = "\n".join(lines[fences[-2] + 1 : fences[-1]])
    return code if code.strip() else None


def _show(value: str, limit: int = 80) -> str:
    value = value.strip()
    return value if len(value) <= limit else value[:limit] + "..."


def _failure(result: RunResult) -> str | None:
    if result.ok:
        return None
    return result.describe()


def run_stdin_test(code: str, test: TestCase, limits: Limits, iso: Isolation | None = None) -> str | None:
    """None when the test passes, else why it failed."""
    result = run(Job(code=LCB_IMPORTS + code, stdin=test.input, limits=limits), iso)
    if (why := _failure(result)) is not None:
        return why
    if not stdout_matches(result.stdout, test.output):
        return f"wrong output: got {_show(result.stdout)!r}, expected {_show(test.output)!r}"
    return None


def run_call_test(code: str, func_name: str, test: TestCase, limits: Limits,
                  iso: Isolation | None = None) -> str | None:
    harness = CALL_HARNESS.replace("FUNC_NAME", repr(func_name))
    result = run(Job(code=harness, stdin=test.input, files={"solution.py": LCB_IMPORTS + code}, limits=limits), iso)
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


def run_bcb_test(code: str, test_module: str, limits: Limits, iso: Isolation | None = None) -> str | None:
    """BigCodeBench tasks import numpy, pandas, ...: our site-packages are mounted read-only."""
    iso = iso or isolation()
    packages = site_packages(iso) if iso.level == "full" else ()
    result = run(Job(code=BCB_HARNESS, files={"solution.py": code, "bcb_test.py": test_module}, limits=limits,
                     packages=packages), iso)
    if (why := _failure(result)) is not None:
        return why
    return read_bcb_report(result.stdout)


def read_bcb_report(stdout: str) -> str | None:
    """None when the harness's lines say every test passed, else why not. The lines are each
    failure ({"bad": ...}) and each skip ({"skip": id, "declared": bool}) as they happened, then the
    summary ({"run": n, "patched": [...]}); see conductor/verify/harness.py. Each check below stops
    one trick in docs/sandbox.md's table."""
    try:
        lines = [json.loads(line) for line in stdout.strip().splitlines()]
    except json.JSONDecodeError:
        return "no test report"
    if not lines or not all(isinstance(line, dict) for line in lines):
        return "no test report"
    summary = lines[-1]
    if not isinstance(summary.get("run"), int) or not isinstance(summary.get("patched"), list):
        return "no test report"
    if summary["patched"]:
        return f"the program patched the test machinery: {', '.join(map(str, summary['patched'][:5]))}"
    if summary["run"] == 0:
        return "no tests ran"
    bad = [str(line["bad"]) for line in lines if "bad" in line]
    if bad:
        return f"{len(bad)} of {summary['run']} tests failed: {bad[0][:300]}"
    undeclared = [line["skip"] for line in lines if "skip" in line and line.get("declared") is not True]
    if undeclared:
        return f"{len(undeclared)} of {summary['run']} tests skipped at run time (not declared by the tests)"
    return None


def verify_code(problem: Problem, answer_text: str, limits: Limits | None = None) -> Verdict:
    """Run the problem's tests on the answer's program (or reuse the verdict of an identical run).
    Raises `SandboxUnavailable` under strict isolation where full isolation is impossible."""
    code = extract_code(answer_text)
    if code is None:
        return Verdict(correct=False, extracted=None, reason="no fenced code block", method="sandbox")
    iso = isolation()
    key = cache_key(problem, code, limits, iso)
    if (hit := CACHE.get(key)) is not None:
        return hit
    verdict = _run_tests(problem, code, limits, iso)
    if stable_code_verdict(verdict):
        CACHE.put(key, verdict)
    return verdict


def _run_tests(problem: Problem, code: str, limits: Limits | None, iso: Isolation) -> Verdict:
    def verdict(correct: bool, reason: str, method: str = "sandbox") -> Verdict:
        return Verdict(correct=correct, extracted=code, reason=reason, method=method, isolation=iso.level)

    if "test" in problem.meta and isinstance(problem.meta["test"], str):
        why = run_bcb_test(code, problem.meta["test"], limits or BCB_LIMITS, iso)
        return verdict(why is None, why or "all tests passed", "sandbox-unittest")
    tests = problem.tests or []
    if not tests:
        return verdict(False, "problem has no tests")
    limits = limits or DEFAULT_LIMITS
    func_name = problem.meta.get("func_name") or None
    for i, test in enumerate(tests):
        if test.testtype == "functional" or func_name:
            if not func_name:
                return verdict(False, "functional test without func_name")
            why = run_call_test(code, func_name, test, limits, iso)
        else:
            why = run_stdin_test(code, test, limits, iso)
        if why is not None:
            return verdict(False, f"test {i + 1}/{len(tests)}: {why}")
    return verdict(True, f"all {len(tests)} tests passed")
