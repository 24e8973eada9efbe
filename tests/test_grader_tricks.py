"""Grader tricks: programs that make BigCodeBench's unittest tests look passed instead of passing them.

Each row is a WRONG program (its `task_func` returns 41 where the tests want 42) that uses one
trick, run in the real sandbox; each must be graded wrong, for the specific reason that names the
guard that stopped it (docs/sandbox.md, "Grader tricks", says which line of
conductor/verify/harness.py or conductor/verify/code_tests.py that is). The controls at the end
show that right programs, declared skips and tests that patch their own mocks still pass, so the
guards are not just "everything fails".
"""

from __future__ import annotations

import pytest

from conductor.data.schema import Problem
from conductor.sandbox import Limits
from conductor.verify import verify

LIMITS = Limits(wall_s=20.0, memory_mb=1024)
TESTS = ("import unittest\n\nclass TestCases(unittest.TestCase):\n"
         "    def test_it(self):\n        self.assertEqual(task_func(), 42)\n"
         "    def test_again(self):\n        self.assertEqual(task_func() + 0, 42)\n")
BCB = Problem(id="trick", source="bigcodebench", domain="code", question="return 42", meta={"test": TESTS})
WRONG = "def task_func():\n    return 41\n"

# name -> (the wrong program, what the verdict's reason must say)
TRICKS: dict[str, tuple[str, str]] = {
    # the loader: rebinding unittest's module-level TestLoader to one that loads nothing (the audit's
    # trick), or patching the real loader's method
    "loader_rebound": ("import unittest\nclass Empty(unittest.TestLoader):\n"
                       "    def loadTestsFromTestCase(self, cls):\n        return unittest.TestSuite()\n"
                       "unittest.TestLoader = Empty\n" + WRONG,
                       "the program patched the test machinery: unittest.TestLoader"),
    "loader_method_patched": ("import unittest\nunittest.TestLoader.loadTestsFromTestCase = "
                              "lambda *a: unittest.TestSuite()\n" + WRONG,
                              "patched the test machinery: unittest.loader.TestLoader.loadTestsFromTestCase"),
    # the result: a result class that swallows failures, or emptying the real result's lists from a
    # thread while the tests run
    "result_rebound": ("import unittest\nclass Deaf(unittest.TestResult):\n"
                       "    def addFailure(self, *a): pass\n    def addError(self, *a): pass\n"
                       "unittest.TestResult = Deaf\n" + WRONG,
                       "the program patched the test machinery: unittest.TestResult"),
    "result_cleared": ("import gc, threading, unittest\ndef _wipe():\n    while True:\n"
                       "        for o in gc.get_objects():\n"
                       "            if isinstance(o, unittest.TestResult):\n"
                       "                o.failures.clear()\n                o.errors.clear()\n"
                       "threading.Thread(target=_wipe, daemon=True).start()\n" + WRONG,
                       "2 of 2 tests failed"),
    # the assertions: neutered on TestCase, a lenient TestCase swapped in before the tests' class
    # statement, a module that is not unittest at all, or a patch made while the tests run that
    # undoes itself when called (so nothing looks patched afterwards)
    "assert_patched": ("import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + WRONG,
                       "patched the test machinery: unittest.case.TestCase.assertEqual"),
    "assert_base_swapped": ("import unittest\nclass Lenient(unittest.TestCase):\n"
                            "    def assertEqual(self, *a, **k): pass\nunittest.TestCase = Lenient\n" + WRONG,
                            "the program patched the test machinery: unittest.TestCase"),
    "assert_fake_module": ("import sys, types, unittest\nfake = types.ModuleType('unittest')\n"
                           "class Lenient(unittest.TestCase):\n    def assertEqual(self, *a, **k): pass\n"
                           "fake.TestCase = Lenient\nsys.modules['unittest'] = fake\n" + WRONG,
                           "the program patched the test machinery: sys.modules['unittest']"),
    "assert_self_healing": ("import unittest\n_real = unittest.TestCase._baseAssertEqual\n"
                            "def _quiet(self, first, second, msg=None):\n"
                            "    unittest.TestCase._baseAssertEqual = _real\n"
                            "def task_func():\n    unittest.TestCase._baseAssertEqual = _quiet\n    return 41\n",
                            "patched the test machinery: unittest.case.TestCase._baseAssertEqual"),
    # an early exit: before the tests run, or inside one
    "exit_at_import": ("import sys\nsys.exit(0)\n" + WRONG, "exit code 1"),
    "os_exit_in_test": ("import os\ndef task_func():\n    os._exit(0)\n", "exit code 1"),
    # a faked report: the harness's summary line printed to stdout, then a clean exit
    "report_printed": ("import json, os\nos.write(1, json.dumps({'run': 2, 'patched': []}).encode() + b'\\n')\n"
                       "os._exit(0)\n", 'exit code 1: {"run": 2'),
    # skipping: SkipTest raised by the program, or a skip decorator slipped onto the test class
    "skip_raised": ("import unittest\ndef task_func():\n    raise unittest.SkipTest('later')\n",
                    "2 of 2 tests skipped at run time"),
    "skip_injected": ("import builtins, unittest\n_build = builtins.__build_class__\n"
                      "def _skipping(f, name, *bases, **kw):\n    cls = _build(f, name, *bases, **kw)\n"
                      "    return unittest.skip('later')(cls) if name == 'TestCases' else cls\n"
                      "builtins.__build_class__ = _skipping\n" + WRONG,
                      "the program patched the test machinery: builtins.__build_class__"),
}


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


@pytest.mark.parametrize("name", list(TRICKS))
def test_a_wrong_program_using_a_trick_is_graded_wrong(name: str) -> None:
    code, reason = TRICKS[name]
    verdict = verify(BCB, fence(code), code_limits=LIMITS)
    assert not verdict.correct, verdict
    assert reason in verdict.reason, verdict.reason


def test_a_test_module_without_tests_grades_nothing_right() -> None:
    # the "no tests ran" guard: a loader trick that slips past the machinery check would look like this
    empty = BCB.model_copy(update={"id": "empty", "meta": {"test": "import unittest\n\n"
                                                           "class TestCases(unittest.TestCase):\n    pass\n"}})
    verdict = verify(empty, fence("def task_func():\n    return 42\n"), code_limits=LIMITS)
    assert not verdict.correct and verdict.reason == "no tests ran", verdict


CONTROLS: dict[str, tuple[str, str]] = {
    "right": (TESTS, "def task_func():\n    return 42\n"),
    # a skip the test module declares is not the program's doing
    "declared_skip": (TESTS + "    @unittest.skip('flaky upstream')\n    def test_skipped(self):\n"
                      "        self.fail()\n", "def task_func():\n    return 42\n"),
    # tests that patch what the solution imports (BigCodeBench does this often), builtins included
    "mock_patch": ("import unittest\nfrom unittest.mock import patch\n\nclass TestCases(unittest.TestCase):\n"
                   "    @patch('builtins.input', return_value='42')\n"
                   "    def test_it(self, _):\n        self.assertEqual(task_func(), 42)\n",
                   "def task_func():\n    return int(input())\n"),
    # a test module that changes the machinery itself: its doing, not the program's
    "tests_set_maxdiff": ("import unittest\nunittest.TestCase.maxDiff = None\n\n" + TESTS.split("\n\n", 1)[1],
                          "def task_func():\n    return 42\n"),
    # a right program that defines its own classes, imports and subtests
    "subtests": ("import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_it(self):\n"
                 "        for n in (1, 2):\n            with self.subTest(n=n):\n"
                 "                self.assertEqual(task_func(n), 2 * n)\n",
                 "import collections\nclass Box:\n    pass\ndef task_func(n):\n    return collections.Counter([n])[n] * 2 * n\n"),
}


@pytest.mark.parametrize("name", list(CONTROLS))
def test_right_programs_still_pass(name: str) -> None:
    tests, code = CONTROLS[name]
    problem = BCB.model_copy(update={"id": f"control-{name}", "meta": {"test": tests}})
    verdict = verify(problem, fence(code), code_limits=LIMITS)
    assert verdict.correct, verdict


def test_a_failing_subtest_is_a_failure() -> None:
    tests, _ = CONTROLS["subtests"]
    problem = BCB.model_copy(update={"id": "control-subtests-bad", "meta": {"test": tests}})
    verdict = verify(problem, fence("def task_func(n):\n    return 2 if n == 1 else 5\n"), code_limits=LIMITS)
    assert not verdict.correct and "1 of 1 tests failed" in verdict.reason, verdict
